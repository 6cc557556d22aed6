import CSQLite
import Foundation
import Synchronization

// What a writer connection changes, for live queries (Context/Observation.swift): SQLite's
// authorizer tells, while a statement is prepared, which tables and columns it writes and which
// savepoint it opens or ends; the commit and rollback hooks tell when a transaction ends; the
// update hook, while someone asks for them, the rowids. Only committed changes leave this file.

/// The tables (lower-cased) a commit or a statement touches, with the columns where SQLite tells
/// them (an UPDATE's columns; nil: the whole row, as for INSERT and DELETE).
package struct ChangedRegion: Sendable, Equatable {
    /// Table → the columns changed (nil: every column).
    package var tables: [String: Set<String>?] = [:]
    /// A schema change (CREATE, DROP, ALTER): every query may read something else now.
    package var schemaChanged = false

    package var isEmpty: Bool { tables.isEmpty && !schemaChanged }

    package mutating func formUnion(_ other: ChangedRegion) {
        schemaChanged = schemaChanged || other.schemaChanged
        // Most transactions write one statement's tables: taken whole, no merging.
        if tables.isEmpty {
            tables = other.tables
            return
        }
        for (table, columns) in other.tables { add(lowercased: table, columns) }
    }

    package mutating func add(_ table: String, _ columns: Set<String>?) {
        add(lowercased: table.lowercased(), columns)
    }

    private mutating func add(lowercased table: String, _ columns: Set<String>?) {
        guard let columns else {
            tables[table] = .some(nil)
            return
        }
        switch tables[table] {
        case .none: tables[table] = .some(columns)
        case .some(.none): break
        // Already there (a transaction's statements write the same columns again and again): not
        // written, so the table, often shared with the statement it came from, is not copied.
        case .some(.some(let known)): if !known.isSuperset(of: columns) { tables[table] = .some(known.union(columns)) }
        }
    }
}

/// Rows a committed transaction inserted, updated or deleted, per table (lower-cased), from
/// SQLite's update hook (not for WITHOUT ROWID tables, nor rows a REPLACE or DELETE without WHERE
/// removed): what `Db.changes(in:)` reports beside the tables.
package struct ChangedRows: Sendable, Equatable {
    package var inserted: [String: [Int64]] = [:]
    package var updated: [String: [Int64]] = [:]
    package var deleted: [String: [Int64]] = [:]
    /// Rows past `limit` in one transaction are not listed (the tables still are).
    package var truncated = false
    static let limit = 100_000
    var count = 0
}

/// What a statement does beside reading, as the authorizer told while it was prepared.
struct StatementEffects {
    var written = ChangedRegion()
    /// Which prepared statement of its tracker these are (from 1): a statement run again and
    /// again in one transaction has its region merged into the pending one once.
    var serial: UInt64 = 0
    /// SAVEPOINT / RELEASE / ROLLBACK TO, with the savepoint's name.
    var savepoint: (operation: String, name: String)?
    /// COMMIT (or END): what it makes durable goes to the observers once it returns.
    var commits = false

    var isEmpty: Bool { written.isEmpty && savepoint == nil && !commits }
}

/// A prepared statement's effects, immutable once it is prepared.
final class TrackedEffects {
    let value: StatementEffects
    init(_ value: StatementEffects) { self.value = value }
}

/// The writer connection's change log. Used by the thread that holds the writer (the hooks run
/// inside that thread's SQLite calls); `onCommit` is read under a lock, as observers come and go
/// from any thread.
final class ChangeTracker: @unchecked Sendable {   // one thread at a time: the writer's holder
    /// Actions the authorizer reported since `beginPrepare`.
    private var preparing: StatementEffects?
    /// Changes of the transaction now open (or of the statement running in autocommit).
    private var pending = ChangedRegion()
    private var pendingRows = ChangedRows()
    /// The pending changes when each savepoint began, innermost last.
    private var savepoints: [(name: String, region: ChangedRegion, rows: ChangedRows)] = []
    /// Committed and not yet handed over (the commit hook runs before the commit is durable).
    private var committed: [(ChangedRegion, ChangedRows)] = [] {
        didSet { hasCommittedEntries.store(!committed.isEmpty, ordering: .relaxed) }
    }
    /// `!committed.isEmpty`, read after every statement: an atomic, not the array itself (the
    /// runtime's exclusivity check of the array cost more than the rest of that look).
    private let hasCommittedEntries = Atomic<Bool>(false)
    /// Where committed changes go; nil while nobody observes (then nothing is recorded). Boxed in
    /// a class: a closure read back out of a Mutex through a generic `inout` was re-wrapped in a
    /// reabstraction thunk and written back on every read, a chain that grew by one per commit.
    private let listener = Guarded<Listener?>(nil)

    private final class Listener: Sendable {
        let call: @Sendable (ChangedRegion, ChangedRows) -> Void
        init(_ call: @escaping @Sendable (ChangedRegion, ChangedRows) -> Void) { self.call = call }
    }
    /// `listener != nil`, read without the lock on every statement.
    private let active = Atomic<Bool>(false)

    var isActive: Bool { active.load(ordering: .relaxed) }

    /// Whether a listener asks for rowids: the writer runs the update hook only then.
    private let rows = Atomic<Bool>(false)
    var wantsRows: Bool {
        get { rows.load(ordering: .relaxed) }
        set { rows.store(newValue, ordering: .relaxed) }
    }

    func setListener(_ listener: (@Sendable (ChangedRegion, ChangedRows) -> Void)?) {
        let boxed = listener.map(Listener.init)
        self.listener.withLock { $0 = boxed }
        active.store(listener != nil, ordering: .relaxed)
    }

    // MARK: Prepare time (the authorizer)

    /// Set while sqlite3_exec runs a script: writes count as they are authorized.
    private var inScript = false

    func beginScript() { inScript = true }
    func endScript() { inScript = false }

    func beginPrepare() { preparing = StatementEffects() }

    func endPrepare() -> StatementEffects? {
        defer { preparing = nil }
        guard var effects = preparing, !effects.isEmpty else { return nil }
        preparedCount += 1
        effects.serial = preparedCount
        return effects
    }

    /// Statements prepared so far (their effects' serials).
    private var preparedCount: UInt64 = 0
    /// The serial of the statement whose written region `pending` holds already (0: none). A
    /// union is idempotent and `pending` only grows until it is replaced, which resets this.
    private var mergedSerial: UInt64 = 0

    fileprivate func authorize(_ action: Int32, _ first: String?, _ second: String?) {
        if preparing != nil {
            Self.record(action, first, second, into: &preparing!)
        } else {
            // A statement of a script, run at once, or a cached statement SQLite prepares again
            // inside step after a schema change (a trigger added since may write more): what it
            // writes is pending now. (A script's savepoints are not followed: one rolled back
            // only makes observers look again.)
            var effects = StatementEffects()
            Self.record(action, first, second, into: &effects)
            pending.formUnion(effects.written)
        }
    }

    private static func record(_ action: Int32, _ first: String?, _ second: String?, into effects: inout StatementEffects) {
        switch action {
        case SQLITE_INSERT, SQLITE_DELETE:
            if let first { effects.written.add(first, nil) }
        case SQLITE_UPDATE:
            if let first, let second { effects.written.add(first, [second.lowercased()]) }
        case SQLITE_SAVEPOINT:
            if let first, let second { effects.savepoint = (first.uppercased(), second.lowercased()) }
        case SQLITE_TRANSACTION:
            if first?.uppercased() == "COMMIT" { effects.commits = true }
        case SQLITE_CREATE_TABLE, SQLITE_DROP_TABLE, SQLITE_ALTER_TABLE, SQLITE_CREATE_VIEW, SQLITE_DROP_VIEW,
             SQLITE_CREATE_TRIGGER, SQLITE_DROP_TRIGGER, SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE:
            effects.written.schemaChanged = true
        default:
            break
        }
    }

    // MARK: Run time

    /// A statement with these effects is about to run (its writes count even if it fails
    /// midway: an observer asked once too often only finds the same result). Recorded whether
    /// or not anyone observes yet: an observer that starts inside a transaction must hear of
    /// what the transaction wrote before it started.
    func willRun(_ tracked: TrackedEffects) {
        // Read in place (a copy of the effects costs more than the merge it skips).
        if tracked.value.serial != 0, tracked.value.serial == mergedSerial { return }
        pending.formUnion(tracked.value.written)
        mergedSerial = tracked.value.serial
    }

    /// A statement with these effects ran to completion: savepoints begin, end or roll back.
    func didRun(_ tracked: TrackedEffects) {
        guard let savepoint = tracked.value.savepoint else { return }
        switch savepoint.operation {
        case "BEGIN":
            savepoints.append((savepoint.name, pending, pendingRows))
        case "RELEASE":
            if let index = savepoints.lastIndex(where: { $0.name == savepoint.name }) { savepoints.removeSubrange(index...) }
        case "ROLLBACK":
            // ROLLBACK TO keeps the savepoint open and undoes what came after it.
            if let index = savepoints.lastIndex(where: { $0.name == savepoint.name }) {
                (pending, pendingRows) = (savepoints[index].region, savepoints[index].rows)
                mergedSerial = 0
                savepoints.removeSubrange((index + 1)...)
            }
        default:
            break
        }
    }

    fileprivate func rowChanged(_ operation: Int32, _ table: String, _ rowid: Int64) {
        guard isActive else { return }
        let table = table.lowercased()
        pending.add(table, nil)
        guard pendingRows.count < ChangedRows.limit else {
            pendingRows.truncated = true
            return
        }
        pendingRows.count += 1
        switch operation {
        case SQLITE_INSERT: pendingRows.inserted[table, default: []].append(rowid)
        case SQLITE_DELETE: pendingRows.deleted[table, default: []].append(rowid)
        default: pendingRows.updated[table, default: []].append(rowid)
        }
    }

    fileprivate func transactionCommitted() {
        if isActive, !pending.isEmpty { committed.append((pending, pendingRows)) }
        clearPending()
    }

    fileprivate func transactionRolledBack() {
        clearPending()
    }

    private func clearPending() {
        mergedSerial = 0
        pending = ChangedRegion()
        pendingRows = ChangedRows()
        savepoints.removeAll()
    }

    /// Hands the commits made so far to the listener: called once the statement that committed
    /// has returned (the commit is durable then).
    func deliverCommitted() {
        guard hasCommittedEntries.load(ordering: .relaxed) else { return }
        let done = committed
        committed.removeAll()
        guard let listener = listener.withLock({ $0 }) else { return }
        for (region, rows) in done { listener.call(region, rows) }
    }

    var hasCommitted: Bool { !committed.isEmpty }
}

extension Connection {
    /// Installs the writer's hooks: the authorizer (what each statement writes), the commit and
    /// rollback hooks. They only record while the tracker has a listener. The tracker outlives
    /// the hooks: the connection keeps it and closes the handle first.
    func installChangeHooks(_ tracker: ChangeTracker) {
        let context = Unmanaged.passUnretained(tracker).toOpaque()
        sqlite3_set_authorizer(sqliteHandle, { context, action, first, second, _, _ in
            guard let context else { return SQLITE_OK }
            Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue()
                .authorize(action, first.map { String(cString: $0) }, second.map { String(cString: $0) })
            return SQLITE_OK
        }, context)
        sqlite3_commit_hook(sqliteHandle, { context in
            if let context { Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().transactionCommitted() }
            return 0   // let it commit
        }, context)
        sqlite3_rollback_hook(sqliteHandle, { context in
            if let context { Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().transactionRolledBack() }
        }, context)
    }

    /// Reports the rowids each change touches (the update hook) while `on`; off, no hook runs per row.
    func reportRowids(_ on: Bool, to tracker: ChangeTracker) {
        guard on else {
            sqlite3_update_hook(sqliteHandle, nil, nil)
            return
        }
        sqlite3_update_hook(sqliteHandle, { context, operation, _, table, rowid in
            guard let context, let table else { return }
            Unmanaged<ChangeTracker>.fromOpaque(context).takeUnretainedValue().rowChanged(operation, String(cString: table), rowid)
        }, Unmanaged.passUnretained(tracker).toOpaque())
    }

    /// The `PRAGMA data_version` of this connection: it changes when another connection or
    /// process commits to the file.
    func dataVersion() throws -> Int64 {
        try withStatement("PRAGMA data_version", .none) { statement in
            guard try step(statement, .none), case .integer(let version) = statement.value(at: 0) else {
                throw DicRecordError(.misuse, "PRAGMA data_version returned no number", sql: "PRAGMA data_version", configName: configName)
            }
            return version
        }
    }

    /// The tables (lower-cased) `sql` reads, each with the columns it reads (an empty set: the
    /// table is read without a column, as by count(*): any change counts). Asked of SQLite's
    /// authorizer while the statement is prepared once more; the connection's own authorizer
    /// (a writer's) is put back after.
    func readRegion(of sql: String) throws -> [String: Set<String>] {
        final class Reads { var tables: [String: Set<String>] = [:] }
        let reads = Reads()
        sqlite3_set_authorizer(sqliteHandle, { context, action, table, column, _, _ in
            guard let context, action == SQLITE_READ, let table else { return SQLITE_OK }
            let reads = Unmanaged<Reads>.fromOpaque(context).takeUnretainedValue()
            let name = String(cString: table).lowercased()
            let column = column.map { String(cString: $0).lowercased() } ?? ""
            reads.tables[name, default: []].formUnion(column.isEmpty ? [] : [column])
            if column.isEmpty { reads.tables[name]!.insert("") }
            return SQLITE_OK
        }, Unmanaged.passUnretained(reads).toOpaque())
        defer {
            if let changeTracker { installChangeHooks(changeTracker) } else { sqlite3_set_authorizer(sqliteHandle, nil, nil) }
        }
        _ = try withUncachedStatement(sql) { _ in }
        return reads.tables
    }
}
