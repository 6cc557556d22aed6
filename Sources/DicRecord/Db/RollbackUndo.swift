/// What a save changed in a record (or model) that its transaction may still take back: the key
/// written back from the database and the modified flags it cleared. When the transaction (or the
/// savepoint the save ran in) rolls back, the record gets its key and flags back, so a later
/// `save()` inserts again and `update()` still sees the edits: a rolled-back write is never
/// mistaken for a stored one.
struct RollbackUndo {
    let record: Record
    let modified: Record.ModifiedSet
    /// The key column written back, and what it held before (nil: the column was absent).
    let key: String?
    let previousKey: DatabaseValue?

    /// Ends a save of `record` on `connection`: writes the `generated` key back into column `key`
    /// and clears the modified flags; inside a transaction, notes how to undo both should it roll
    /// back (in autocommit a save that returns has been committed: nothing to take back).
    static func finishSave(_ record: Record, key: String?, generated: DatabaseValue?, on connection: Connection) {
        let depth = connection.transactionDepth
        let writtenKey = generated == nil ? nil : key
        var previous: DatabaseValue?
        if let writtenKey, let generated { previous = record.exchange(writtenKey, generated) }
        let cleared = record.clearModified()
        guard depth > 0 else { return }
        connection.rollbackUndos.append((depth, RollbackUndo(record: record, modified: cleared, key: writtenKey, previousKey: previous)))
    }

    func apply() {
        if let key {
            if let previousKey { record.put(key, previousKey) } else { record.remove(key) }
        }
        record.markModified(modified)
    }
}

extension Connection {
    /// The transaction at `depth` (its body ran at `depth + 1`) rolled back: put back what the
    /// saves inside it changed, newest first.
    func undoSaves(rolledBackAt depth: Int) {
        guard !rollbackUndos.isEmpty else { return }
        while let last = rollbackUndos.last, last.depth > depth {
            rollbackUndos.removeLast()
            last.undo.apply()
        }
    }

    /// The transaction at `depth` committed: its saves now belong to the enclosing transaction,
    /// or, at the outermost level, are for good.
    func keepSaves(committedAt depth: Int) {
        guard !rollbackUndos.isEmpty else { return }
        if depth == 0 {
            rollbackUndos.removeAll()
            return
        }
        for i in rollbackUndos.indices where rollbackUndos[i].depth > depth {
            rollbackUndos[i].depth = depth
        }
    }
}
