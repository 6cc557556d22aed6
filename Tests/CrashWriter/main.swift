import DicRecord

// Placeholder: the crash-consistency tests fill this in.
print("CrashWriter")
