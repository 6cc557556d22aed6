// The transactions of `Db`, sync and async, written once: BEGIN IMMEDIATE or a SAVEPOINT, then
// COMMIT or RELEASE, or a rollback that also takes back what the saves inside it changed in their
// records (`RollbackUndo`). The public `tx`/`transaction` are declared (and documented) in
// Db+API.swift, Db+Static.swift, Db+Async.swift and Db+StaticAsync.swift and land here; batches
// (Db+Records.swift) run in `inTransaction`. How the calls of a task join its async transaction
// is `TransactionLease` (Context/AsyncScope.swift).
extension Db {
    // MARK: On the calling thread

    /// Runs `body` in a transaction on `connection`: BEGIN IMMEDIATE at the outermost level, a
    /// SAVEPOINT when nested. Commits when `commit(result)` is true, rolls back otherwise or on a throw.
    func inTransaction<C: EngineConnection, T>(_ connection: C, _ body: () throws -> T, commit: (T) -> Bool) throws -> T {
        let depth = connection.transactionDepth
        try begin(connection, depth: depth, outermost: depth == 0)
        let result: T
        do {
            result = try body()
        } catch {
            abandon(connection, depth: depth)
            throw error
        }
        try end(connection, depth: depth, outermost: depth == 0, commits: commit(result))
        return result
    }

    func runTx(_ body: (Db) throws -> Bool) throws -> Bool {
        let context = try context()
        if let engine = try context.externalPool() { return try engineTransaction(engine, context, body, commit: { $0 }) }
        let db = bound(to: context)
        return try context.pool().write { connection in
            try inTransaction(connection, { try body(db) }, commit: { $0 })
        }
    }

    /// `runTx`, rerun on a conflict while it is the outermost transaction of its connection.
    func runTx(retryingOnConflict retries: Int, _ body: (Db) throws -> Bool) throws -> Bool {
        guard retries >= 0 else {
            throw DicRecordError(.invalidArgument, "retryOnConflict must not be negative (got \(retries))", configName: configName)
        }
        let ownConfig = try context().configName
        var attempt = 0
        while true {
            var outermost = false
            do {
                return try runTx { db in
                    outermost = try db.isOutermostTransaction()
                    return try body(db)
                }
            } catch let error as DicRecordError where error.kind == .conflict && outermost && attempt < retries
                        && error.configName.map({ $0.caseInsensitiveCompare(ownConfig) == .orderedSame }) == true {
                // Only this config's conflicts: another config's belongs to its own transaction.
                attempt += 1
            }
        }
    }

    /// Whether the transaction this thread runs on this config is the outermost one.
    private func isOutermostTransaction() throws -> Bool {
        let context = try context()
        if let engine = try context.externalPool() { return try engine.write { $0.transactionDepth == 1 } }
        return try context.pool().write { $0.transactionDepth == 1 }
    }

    func runTransaction<T>(_ body: (Db) throws -> T) throws -> T {
        let context = try context()
        if let engine = try context.externalPool() { return try engineTransaction(engine, context, body, commit: { _ in true }) }
        let db = bound(to: context)
        return try context.pool().write { connection in
            try inTransaction(connection, { try body(db) }, commit: { _ in true })
        }
    }

    // MARK: Async

    func runAsyncTransaction<T>(_ body: (Db) async throws -> T, commit: (T) -> Bool) async throws -> T {
        let context = try self.context()
        // The writer, bound to no thread until the transaction ends: SQLite's, or a connection of the engine's pool.
        let poolID: ObjectIdentifier
        let leaseWriter: () throws -> any EngineConnection
        let returnWriter: (any EngineConnection) -> Void
        let sqlite: ConnectionPool?
        if let engine = try context.externalPool() {
            (poolID, leaseWriter, returnWriter, sqlite) = (ObjectIdentifier(engine), engine.leaseWriter, engine.returnWriter, nil)
        } else {
            let pool = try context.pool()
            (poolID, leaseWriter, returnWriter, sqlite) = (ObjectIdentifier(pool), pool.leaseWriter, { _ in pool.returnWriter() }, pool)
        }
        let enclosing = AsyncScope.transactions
        if let outer = enclosing.last(where: { $0.poolID == poolID && $0.isOpen }) {
            return try await withTaskExecutorPreference(outer.executor) {
                try await nestedAsyncTransaction(outer, enclosing, body, commit: commit)
            }
        }
        // The whole transaction, body included, runs on pool threads: the calls in it run inline,
        // with no hop per call, and waiting for the writer blocks no cooperative thread. SQLite's
        // run in the line of its pool's `WriterLane` while the writer is free at once.
        if let sqlite {
            let lane = sqlite.asyncLane
            let run = try await withTaskExecutorPreference(lane) { () async throws -> LaneRun<T> in
                try Task.checkCancellation()
                guard let connection = try sqlite.leaseWriterIfFree() else { return .writerTaken }
                return .ran(try await outermostAsyncTransaction(context, poolID, connection, { returnWriter($0) }, on: lane,
                                                                body, commit: commit))
            }
            if case .ran(let result) = run { return result }
            // Taken: the transaction waits for it off the line (not back through it when it ends).
        }
        return try await withTaskExecutorPreference(PoolExecutor.shared) {
            try Task.checkCancellation()
            return try await outermostAsyncTransaction(context, poolID, try leaseWriter(), returnWriter,
                                                       on: PoolExecutor.shared, body, commit: commit)
        }
    }

    /// What an async transaction's turn in its pool's line came to.
    private enum LaneRun<T> {
        case ran(T)
        case writerTaken
    }

    /// An outermost async transaction on `connection`, the writer just leased (given back with
    /// `returnWriter` when it ends), its jobs on `executor`.
    private func outermostAsyncTransaction<T>(_ context: DbContext, _ poolID: ObjectIdentifier, _ connection: any EngineConnection,
                                              _ returnWriter: (any EngineConnection) -> Void, on executor: any TaskExecutor,
                                              _ body: (Db) async throws -> T, commit: (T) -> Bool) async throws -> T {
        let lease = TransactionLease(poolID: poolID, connection: connection, configName: context.configName,
                                     busyTimeout: context.options.busyTimeout, executor: executor)
        AsyncScope.openCount.add(1, ordering: .relaxed)
        defer {
            lease.end()
            // A statement of the transaction's own that could not run (a task that outlived a call
            // of it kept the connection past the busy timeout, and COMMIT or ROLLBACK threw `.busy`)
            // left it open: rolled back now that nothing uses the connection, so that the writer
            // goes back to its pool outside any transaction (the next `tx` on it would otherwise
            // open a savepoint in this one, and its writes would never be committed).
            if connection.transactionDepth != 0 || connection.isInTransaction { abandon(connection, depth: 0) }
            AsyncScope.openCount.subtract(1, ordering: .relaxed)
            returnWriter(connection)
        }
        let scope = AsyncScope.transactions + [lease]
        try control(lease) { try begin(connection, depth: 0, outermost: true) }
        let result: T
        do {
            let db = bound(to: context)
            result = try await AsyncScope.$transactions.withValue(scope) { try await body(db) }
        } catch {
            try? control(lease) { abandon(connection, depth: 0) }
            throw error
        }
        if let failure = lease.failureOfNested {
            try? control(lease) { abandon(connection, depth: 0) }
            throw DicRecordError(.busy,
                "the transaction on config '\(context.configName)' was rolled back: a nested transaction in it could not end (\(failure))",
                configName: context.configName)
        }
        let commits = commit(result)
        try control(lease) { try end(connection, depth: 0, outermost: true, commits: commits) }
        return result
    }

    /// A transaction nested in the task's async transaction `lease`: a SAVEPOINT. Nested
    /// transactions at one depth (from concurrent child tasks) take turns.
    private func nestedAsyncTransaction<T>(_ lease: TransactionLease, _ enclosing: [TransactionLease],
                                           _ body: (Db) async throws -> T, commit: (T) -> Bool) async throws -> T {
        let level = enclosing.reduce(0) { $0 + ($1 === lease ? 1 : 0) }
        let gate = lease.nestingGate(depth: level)
        await gate.acquire()
        defer { gate.release() }
        let connection = lease.connection
        let token = NestingToken()
        let inside = AsyncScope.nesting + [token]
        let depth = try control(lease) { () -> Int in
            let depth = connection.transactionDepth
            try begin(connection, depth: depth, outermost: false)
            return depth
        }
        // While the savepoint is open, only this transaction's own calls use the connection.
        lease.beginNested(token)
        defer { lease.endNested(token) }
        let result: T
        do {
            result = try await AsyncScope.$transactions.withValue(enclosing + [lease]) {
                try await AsyncScope.$nesting.withValue(inside) { try await body(self) }
            }
        } catch {
            try? AsyncScope.$nesting.withValue(inside) {
                try endNested(lease) { abandon(connection, depth: depth) }
            }
            throw error
        }
        let commits = commit(result)
        try AsyncScope.$nesting.withValue(inside) {
            try endNested(lease) { try end(connection, depth: depth, outermost: false, commits: commits) }
        }
        return result
    }

    /// Runs a nested transaction's RELEASE or ROLLBACK TO. When it cannot run at all (the
    /// connection kept past the busy timeout by a task that outlived a call of it), the savepoint
    /// stays open: the lease remembers it, and the outermost transaction rolls back instead of
    /// committing what the nested one reported as failed.
    private func endNested(_ lease: TransactionLease, _ work: () throws -> Void) throws {
        var ran = false
        do {
            try control(lease) {
                ran = true
                try work()
            }
        } catch {
            if !ran { lease.nestedCouldNotEnd(error) }
            throw error
        }
    }

    /// Runs a transaction's own statement (BEGIN, COMMIT, ROLLBACK, SAVEPOINT…) holding its
    /// connection; it runs even when the task is cancelled.
    private func control<R>(_ lease: TransactionLease, _ work: () throws -> R) throws -> R {
        guard let result = try lease.join({ _ in try work() }) else {
            throw DicRecordError(.misuse, "the transaction on config '\(lease.configName)' has already ended", configName: lease.configName)
        }
        return result
    }

    // MARK: The statements of both

    /// The savepoint of the transaction begun at `depth` (nested: `depth` > 0).
    private func savepoint(at depth: Int) -> String {
        "dicrecord_savepoint_\(depth)"
    }

    /// Begins the transaction at `depth` (its body runs at `depth + 1`): BEGIN IMMEDIATE when
    /// `outermost`, else a SAVEPOINT.
    func begin<C: EngineConnection>(_ connection: C, depth: Int, outermost: Bool) throws {
        try connection.execute(outermost ? connection.beginStatement : "SAVEPOINT \(savepoint(at: depth))", .positional([]), row: nil)
        connection.transactionDepth = depth + 1
    }

    /// Ends the transaction at `depth` whose body returned: COMMIT (RELEASE when not `outermost`)
    /// when `commits`, else a rollback. A COMMIT that fails rolls back and throws.
    func end<C: EngineConnection>(_ connection: C, depth: Int, outermost: Bool, commits: Bool) throws {
        connection.transactionDepth = depth
        guard commits else { return rollback(connection, depth: depth) }
        do {
            try connection.execute(outermost ? "COMMIT" : "RELEASE \(savepoint(at: depth))", .positional([]), row: nil)
        } catch {
            rollback(connection, depth: depth)
            throw error
        }
        connection.keepSaves(committedAt: depth)
    }

    /// Ends the transaction at `depth` whose body threw: a rollback.
    func abandon<C: EngineConnection>(_ connection: C, depth: Int) {
        connection.transactionDepth = depth
        rollback(connection, depth: depth)
    }

    private func rollback<C: EngineConnection>(_ connection: C, depth: Int) {
        connection.undoSaves(rolledBackAt: depth)
        // SQLite may already have rolled back by itself (SQLITE_FULL, SQLITE_IOERR, ...).
        guard connection.isInTransaction else { return }
        if depth == 0 {
            try? connection.executeRollback("ROLLBACK")
        } else {
            let name = savepoint(at: depth)
            try? connection.executeRollback("ROLLBACK TO \(name)")
            try? connection.executeRollback("RELEASE \(name)")
        }
    }
}

// MARK: Undoing saves

/// What a save changed in a record (or model) that its transaction may still take back: the key
/// written back from the database and the modified flags it cleared. When the transaction (or the
/// savepoint the save ran in) rolls back, the record gets its key and flags back, so a later
/// `save()` inserts again and `update()` still sees the edits: a rolled-back write is never
/// mistaken for a stored one.
struct RollbackUndo {
    /// The record saved, or the `RecordlessSaves` of a save that wrote none.
    let target: AnyObject
    /// The record's layout right after the save: the cleared flags and the key are positions in
    /// it. Nil for `RecordlessSaves`.
    let layout: RowLayout?
    /// The flags cleared, of the first 64 columns; for `RecordlessSaves`, the save's number.
    let bits: UInt64
    /// What is rare: flags past the 64th, and a key's previous value other than NULL.
    let extra: Extra?
    /// The depth of the transaction the save was made in (the log relabels it on a release).
    var depth: Int32
    /// The position in `layout` of the key written back; -1 when none was.
    let keyPosition: Int32
    /// What the key column held before: nothing (it was absent), NULL, or `extra`'s value.
    let previousKey: PreviousKey

    enum PreviousKey: UInt8 { case absent, null, other }

    final class Extra {
        let more: [Int]
        let previousKey: DatabaseValue?
        init(more: [Int], previousKey: DatabaseValue?) {
            self.more = more
            self.previousKey = previousKey
        }
    }

    /// Ends a save of `record` on `connection`: writes the `generated` key back into column `key`
    /// (at the position the INSERT left it out of, when `shape` says so and the layout is still
    /// the one inserted) and clears the modified flags; inside a transaction, notes how to undo
    /// both should it roll back (in autocommit a save that returns has been committed: nothing to
    /// take back).
    @inline(__always)
    static func finishSave(_ record: Record, key: String?, generated: DatabaseValue?, at shape: InsertShape? = nil,
                           on connection: some EngineConnection) {
        let depth = connection.transactionDepth
        let writtenKey = generated == nil ? nil : key
        let (previous, keyPosition, cleared) = record.finishWrite(key: writtenKey, generated: generated, at: shape)
        guard depth > 0 else { return }
        let log = (connection.undoLog as? SaveUndoLog) ?? SaveUndoLog.installed(on: connection)
        log.note(record, cleared: cleared, previous: previous, keyPosition: keyPosition, depth: depth)
    }

    /// Notes a save that wrote no record (a new model's, from its `@Column` wrappers) of the
    /// columns `written` that got `key`, should the transaction roll back: the connection's
    /// `RecordlessSaves` and the save's number there. Nil in autocommit (nothing to take back).
    static func noteRecordlessSave(written: UInt64, key: Int64, on connection: some EngineConnection) -> (saves: RecordlessSaves, number: Int)? {
        let depth = connection.transactionDepth
        guard depth > 0 else { return nil }
        let log = (connection.undoLog as? SaveUndoLog) ?? SaveUndoLog.installed(on: connection)
        let saves = log.recordlessSaves
        let number = saves.note(written: written, key: key)
        log.append(RollbackUndo(target: saves, layout: nil, bits: UInt64(number), extra: nil, depth: Int32(depth),
                                keyPosition: -1, previousKey: .absent))
        return (saves, number)
    }

    func apply() {
        guard let record = target as? Record, let layout else {
            (target as? RecordlessSaves)?.rollBack(Int(bits))
            return
        }
        if keyPosition >= 0 {
            let key = layout.names[Int(keyPosition)]
            switch previousKey {
            case .absent: record.remove(key)
            case .null: record.put(key, .null)
            case .other: record.put(key, extra?.previousKey ?? .null)
            }
        }
        record.markModified(Record.ModifiedSet(layout: layout, bits: bits, more: extra?.more ?? []))
    }
}

/// The saves a connection's transactions made without a record (new models saving from their
/// `@Column` wrappers), by number: one object for the connection's transaction, not one a save.
/// A model holds this object and its save's number, and the undo log holds this object, not the
/// model: a model is not `Sendable`, and a rollback runs on the thread holding the connection,
/// which need not be the model's. A rollback marks the save here, and the model reads the mark on
/// its own thread; when the model made its record since the save, the rollback gives that record
/// what a rolled-back save of a record gets (`RollbackUndo.apply`): no key, and the columns
/// written modified.
@usableFromInline
final class RecordlessSaves: Sendable {
    struct Save {
        let written: UInt64
        let key: Int64
        var rolledBack = false
        /// The record the model made since the save, its key column and the columns written.
        var record: Record?
        var keyColumn = ""
        var names: [String] = []
    }
    private let saves = Guarded<(list: ContiguousArray<Save>, settled: Bool, recordsKept: Int)>(([], false, 0))

    /// Notes a save; returns its number.
    func note(written: UInt64, key: Int64) -> Int {
        saves.withLock { saves in
            saves.list.append(Save(written: written, key: key))
            return saves.list.count - 1
        }
    }

    /// The columns save `number` wrote, the key it got, whether a rollback took it back, and
    /// whether its transaction is over (`settle`: nothing can take it back any more).
    func save(_ number: Int) -> (written: UInt64, key: Int64, rolledBack: Bool, settled: Bool) {
        saves.withLock { saves in
            (saves.list[number].written, saves.list[number].key, saves.list[number].rolledBack, saves.settled)
        }
    }

    /// The record `make` builds for the model of save `number` (told whether the save was rolled
    /// back), kept with its key column and the names of the columns written for a later rollback
    /// while the transaction lasts. Made under the lock, so that no rollback falls in between.
    func record(_ number: Int, keyColumn: String, names: [String], _ make: (Bool) -> Record) -> Record {
        saves.withLock { saves in
            let made = make(saves.list[number].rolledBack)
            if !saves.list[number].rolledBack, !saves.settled {
                saves.list[number].record = made
                saves.list[number].keyColumn = keyColumn
                saves.list[number].names = names
                saves.recordsKept += 1
            }
            return made
        }
    }

    /// Save `number`'s transaction rolled back.
    func rollBack(_ number: Int) {
        saves.withLock { saves in
            saves.list[number].rolledBack = true
            guard let record = saves.list[number].record else { return }
            saves.list[number].record = nil
            record.put(saves.list[number].keyColumn, .null)
            record.markModified(columns: saves.list[number].names)
        }
    }

    /// The outermost transaction ended: no save here can be taken back any more, so the records
    /// kept for a rollback are let go (the models that made them keep theirs).
    func settle() {
        saves.withLock { saves in
            saves.settled = true
            guard saves.recordsKept > 0 else { return }
            for i in saves.list.indices {
                saves.list[i].record = nil
                saves.list[i].names = []
            }
            saves.recordsKept = 0
        }
    }
}

/// The saves of a connection's open transactions that a rollback would take back, newest last,
/// each with the depth it was made at. The saves of the transaction begun at a depth are always
/// the newest ones (everything after its BEGIN or SAVEPOINT ran inside it): a rollback or release
/// works on the tail only.
/// (In chunks of a fixed size: a transaction of 100,000 saves never moves its entries to grow.)
final class SaveUndoLog {
    /// The entries, oldest first: full chunks of `chunkSize`, then the one being filled. A chunk
    /// never moves once full (a long transaction does not copy its log as it grows).
    private var full: [ContiguousArray<RollbackUndo>] = []
    /// Unsafe, fenced: a connection's log is touched only by the thread that holds the connection
    /// (its lease), one at a time, so the runtime's exclusivity checks on every save's append (a
    /// third of its cost) are off. ConcurrencyStressTests, run under ThreadSanitizer by .ci/run,
    /// fail if two threads ever touch one log at once.
    @exclusivity(unchecked) private var tail = ContiguousArray<RollbackUndo>()
    static let chunkSize = 1024
    /// The saves without a record of the transaction, made at the first (`RecordlessSaves`).
    private var recordless: RecordlessSaves?

    var isEmpty: Bool { tail.isEmpty && full.isEmpty }

    var hasRecordlessSaves: Bool { recordless != nil }

    var recordlessSaves: RecordlessSaves {
        if let recordless { return recordless }
        let made = RecordlessSaves()
        recordless = made
        return made
    }

    /// A connection's first log (its first save in a transaction).
    static func installed(on connection: some EngineConnection) -> SaveUndoLog {
        let log = SaveUndoLog()
        connection.undoLog = log
        return log
    }

    /// Notes a save of `record`, made at `depth`, whose write cleared `cleared` and replaced the
    /// key's `previous` value at `keyPosition` (nil: no key written).
    func note(_ record: Record, cleared: consuming Record.ModifiedSet, previous: DatabaseValue?, keyPosition: Int?, depth: Int) {
        let previousKey: RollbackUndo.PreviousKey = switch previous {
        case nil: .absent
        case .null?: .null
        default: .other
        }
        let extra = previousKey == .other || !cleared.more.isEmpty
            ? RollbackUndo.Extra(more: cleared.more, previousKey: previousKey == .other ? previous : nil) : nil
        append(RollbackUndo(target: record, layout: cleared.layout, bits: cleared.bits, extra: extra, depth: Int32(depth),
                            keyPosition: keyPosition.map(Int32.init) ?? -1, previousKey: previousKey))
    }

    func append(_ undo: consuming RollbackUndo) {
        // The tail grows as it fills (most transactions save a few records), up to a chunk;
        // the next ones are made whole.
        if tail.count == Self.chunkSize {
            full.append(tail)
            tail = ContiguousArray()
            tail.reserveCapacity(Self.chunkSize)
        }
        tail.append(consume undo)
    }

    /// Removes and returns the newest entry if it was made deeper than `depth`.
    func popNewer(than depth: Int) -> RollbackUndo? {
        if tail.isEmpty {
            guard let last = full.popLast() else { return nil }
            tail = last
        }
        guard let last = tail.last, last.depth > depth else { return nil }
        tail.removeLast()
        return last
    }

    /// Gives the entries made deeper than `depth` that depth (their savepoint was released into it).
    func relabel(newerThan depth: Int) {
        if !relabel(&tail, newerThan: depth) { return }
        for c in full.indices.reversed() where !relabel(&full[c], newerThan: depth) { return }
    }

    /// Relabels `chunk` from its newest entry; false when it stopped at an entry not deeper than `depth`.
    private func relabel(_ chunk: inout ContiguousArray<RollbackUndo>, newerThan depth: Int) -> Bool {
        for i in chunk.indices.reversed() {
            guard chunk[i].depth > depth else { return false }
            chunk[i].depth = Int32(depth)
        }
        return true
    }

    /// Forgets every entry (the outermost transaction ended); keeps the tail's room for the
    /// connection's next transaction unless it grew to a whole chunk.
    func removeAll() {
        // Its models keep it (they read their saves there); nothing can roll them back now.
        recordless?.settle()
        recordless = nil
        full.removeAll()
        tail.removeAll(keepingCapacity: tail.capacity <= 64)
    }
}

extension EngineConnection {
    /// The transaction at `depth` (its body ran at `depth + 1`) rolled back: put back what the
    /// saves inside it changed, newest first.
    func undoSaves(rolledBackAt depth: Int) {
        guard let log = undoLog as? SaveUndoLog else { return }
        while let undo = log.popNewer(than: depth) { undo.apply() }
        // The outermost transaction is over: the log's room goes back to its small size, and its
        // saves without a record are settled (an inner rollback may have emptied the log of them).
        if depth == 0, !log.isEmpty || log.hasRecordlessSaves { log.removeAll() }
    }

    /// The transaction at `depth` committed: its saves now belong to the enclosing transaction,
    /// or, at the outermost level, are for good.
    func keepSaves(committedAt depth: Int) {
        guard let log = undoLog as? SaveUndoLog else { return }
        if depth == 0 {
            // (As in `undoSaves`: the saves without a record are settled even with no entry left.)
            if !log.isEmpty || log.hasRecordlessSaves { log.removeAll() }
            return
        }
        if !log.isEmpty { log.relabel(newerThan: depth) }
    }
}
