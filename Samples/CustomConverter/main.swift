import DicRecord

// Placeholder: filled in by the samples work.
print("CustomConverter")
