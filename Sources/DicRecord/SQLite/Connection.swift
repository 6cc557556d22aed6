import CSQLite
import Foundation
import Synchronization

/// One SQLite connection. DicRecord's pool gives it to one thread at a time; the
/// `Db.execute { connection in … }` escape hatch hands it to you for the closure's duration only.
/// ```swift
/// try Db.execute { connection in try connection.execute("pragma optimize") }
/// ```
public final class Connection: @unchecked Sendable {
    /// The config this connection belongs to.
    /// ```swift
    /// try Db.use("backup").execute { connection in connection.configName }   // "backup"
    /// ```
    public let configName: String
    /// The raw `sqlite3*`, for C API calls DicRecord does not wrap. Valid while you hold the
    /// connection (a context that stops closes it once the call holding it has handed it back).
    /// ```swift
    /// try Db.execute { connection in sqlite3_db_release_memory(connection.sqliteHandle) }
    /// ```
    public let sqliteHandle: OpaquePointer
    let registry: Converters
    let tracer: SqlTracer
    /// Seconds SQLite waits for another connection's lock before giving up (named in `.busy` errors).
    let busyTimeout: Double
    /// (The runtime's exclusivity check, which cost a sixth of a statement's own work, is off: it
    /// only sees overlapping accesses on one thread, and none can overlap, the cache's methods
    /// calling nothing back into Swift (finalizing a statement does not). Only the connection's
    /// one holder at a time, its pool's lease, touches it: ConcurrencyStressTests and
    /// StopWhileInUseTests, run under ThreadSanitizer by .ci/run, fail if two threads ever do.)
    @exclusivity(unchecked) private var cache: StatementCache
    /// Depth of `tx`/`transaction` nesting on this connection: 0 outside, 1 in BEGIN, 2+ in SAVEPOINTs.
    /// (Unsafe, fenced, as `cache` is: only the connection's holder touches it, so the runtime's
    /// exclusivity check, two of which cost about 150 instructions on every save, is off.
    /// ConcurrencyStressTests and StopWhileInUseTests, run under ThreadSanitizer by .ci/run, fail
    /// if two threads ever touch it at once.)
    @exclusivity(unchecked) package var transactionDepth = 0
    /// What the layers above changed in memory inside this connection's transactions, to put back
    /// if one rolls back (`Db/Transactions.swift` keeps its save undo list here). The connection
    /// only holds it: one object for the connection's life, not one per save. (Unsafe, fenced, as
    /// `transactionDepth` is, with the same tests.)
    @exclusivity(unchecked) package var undoLog: AnyObject?
    private var isClosed = false
    /// False once the connection is closed (its pool closes it when the context stops, never
    /// while a call uses it).
    var isOpen: Bool { !isClosed }
    /// The thread (its `ThreadLeases`) a reader is lent to: a `stop()` from that thread does not
    /// wait for it. Guarded by the pool's reader lock.
    var heldBy: ObjectIdentifier?
    /// Set by `interrupt()`: the context stopped while a call held this connection.
    private let stopRequested = Atomic<Bool>(false)
    /// The writer's change log for live queries (nil on readers): its hooks are installed at open.
    var changeTracker: ChangeTracker? {
        didSet { if let changeTracker { installChangeHooks(changeTracker) } }
    }
    /// Whether the update hook runs (only while a listener wants rowids).
    private var rowHookInstalled = false
    /// Set while the context runs its own setup statements on a new connection: they are not the user's SQL.
    var isSettingUp = false
    private var isTracing: Bool { !isSettingUp && tracer.isEnabled }
    /// When the current statement started, in nanoseconds of `waitClock()`: a `.busy` error says
    /// how long it waited. (One clock read per statement; SQLite does not tell whether its busy
    /// handler waited.)
    private var statementStart = Connection.waitClock()

    /// How a connection opens its file.
    enum OpenMode {
        /// Read and write, creating the file if missing (a context's writer).
        case readWrite
        /// Read only; the file must exist (readers, readonly contexts).
        case readOnly
        /// Read only, as a file no process changes: SQLite takes no locks and creates no `-wal` or
        /// `-shm` file next to it (a readonly context in a folder nobody may write to).
        case immutable
    }

    /// Opens the database at `path` in `mode` (no mutex: the pool gives a connection to one
    /// thread at a time). Errors name `path`, never the `file:` URI an immutable open uses.
    init(path: String, mode: OpenMode, configName: String, registry: Converters, tracer: SqlTracer,
         busyTimeout: Double, statementCacheSize: Int) throws {
        let target: String, flags: Int32
        switch mode {
        case .readWrite:
            (target, flags) = (path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
        case .readOnly:
            (target, flags) = (path, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX)
        case .immutable:
            (target, flags) = (Self.immutableURI(path), SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI)
        }
        var db: OpaquePointer?
        let code = sqlite3_open_v2(target, &db, flags, nil)
        guard code == SQLITE_OK, let db else {
            let error = DatabaseError(code: code, db: db, sql: nil, configName: configName)
            sqlite3_close_v2(db)
            throw DatabaseError(resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                                message: "cannot open \(path): \(error.message)", configName: configName)
        }
        // An unknown "double-quoted" name must be an error, never a string literal (a typo in a
        // quoted column name once compared two equal strings and deleted every row).
        let dqs = dicrecord_disable_double_quoted_strings(db)
        guard dqs == SQLITE_OK else {
            sqlite3_close_v2(db)
            throw DatabaseError(resultCode: dqs, message: "cannot turn off double-quoted string literals on \(path): \(String(cString: sqlite3_errstr(dqs)))",
                                configName: configName)
        }
        sqliteHandle = db
        self.configName = configName
        self.registry = registry
        self.tracer = tracer
        self.busyTimeout = busyTimeout
        cache = StatementCache(capacity: statementCacheSize)
        sqlite3_extended_result_codes(db, 1)
        try setBusyTimeout(Self.milliseconds(busyTimeout))
    }

    private static func milliseconds(_ seconds: Double) -> Int32 {
        Int32(max(0, min(seconds * 1000, Double(Int32.max))))
    }

    /// Runs `body` with SQLite's busy handler off: a lock another process holds fails at once
    /// (`.busy`) instead of sleeping up to the busy timeout. For work on a thread of Swift's
    /// cooperative pool, which must not sleep.
    func withoutBusyWait<T>(_ body: () throws -> T) throws -> T {
        try setBusyTimeout(0)
        let result = Result { try body() }
        try setBusyTimeout(Self.milliseconds(busyTimeout))
        return try result.get()
    }

    private func setBusyTimeout(_ milliseconds: Int32) throws {
        let code = sqlite3_busy_timeout(sqliteHandle, milliseconds)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: code, message: "cannot set the busy timeout of config '\(configName)': \(String(cString: sqlite3_errstr(code)))",
                                configName: configName)
        }
    }

    deinit {
        close()
    }

    /// `path` as a `file:` URI that opens it immutable (https://sqlite.org/uri.html): the
    /// characters a URI reserves are escaped.
    private static func immutableURI(_ path: String) -> String {
        var escaped = ""
        for character in path {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.append(character)
            }
        }
        return "file:\(escaped)?immutable=1"
    }

    /// Ends the call that holds this connection, for a context that stops: the statement running
    /// now fails (`sqlite3_interrupt`), and every later one except a rollback throws the stopped
    /// error, so that the holder leaves its transaction and hands the connection back, to be closed.
    /// Safe from another thread while the connection is open: its pool calls it under the lock
    /// that closing the connection takes. https://sqlite.org/c3ref/interrupt.html
    func interrupt() {
        stopRequested.store(true, ordering: .relaxed)
        sqlite3_interrupt(sqliteHandle)
    }

    @inline(__always)
    private func refuseIfStopped(_ sql: String) throws {
        if stopRequested.load(ordering: .relaxed) { throw stoppedError(sql) }
    }

    private func stoppedError(_ sql: String?) -> DicRecordError {
        DicRecordError(.notStarted,
            "config '\(configName)' was stopped while this call ran; its transaction, if any, is rolled back",
            sql: sql, configName: configName)
    }

    /// Closes the connection. Its pool calls this only when no call holds it.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        cache.removeAll()
        sqlite3_close_v2(sqliteHandle)
    }

    /// The rowid of the last successful INSERT on this connection.
    /// ```swift
    /// let id = try Db.execute { connection in connection.lastInsertRowid }
    /// ```
    public var lastInsertRowid: Int64 { sqlite3_last_insert_rowid(sqliteHandle) }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    /// ```swift
    /// let changed = try Db.execute { connection in connection.changes }
    /// ```
    public var changes: Int { Int(sqlite3_changes64(sqliteHandle)) }

    /// True between BEGIN and COMMIT/ROLLBACK.
    /// ```swift
    /// try Db.tx { db in try db.execute { $0.isInTransaction } }   // true
    /// ```
    public var isInTransaction: Bool { sqlite3_get_autocommit(sqliteHandle) == 0 }

    /// Runs one or more SQL statements without arguments (DDL, PRAGMA, scripts).
    /// ```swift
    /// try Db.execute { connection in try connection.execute("create table log(id integer primary key, line text); create index log_line on log(line)") }
    /// ```
    public func execute(_ sql: String) throws {
        if sql.utf8.contains(0) {
            throw DicRecordError(.invalidArgument, "the SQL holds a NUL character; SQLite would ignore everything after it",
                                 sql: sql, configName: configName)
        }
        try refuseIfStopped(sql)
        statementStart = Self.waitClock()
        let start = isTracing ? Self.traceClock() : nil
        var message: UnsafeMutablePointer<CChar>?
        // A script's statements are prepared and run one by one inside sqlite3_exec: what each
        // writes counts as it is prepared (before an autocommit ends it).
        changeTracker?.beginScript()
        let code = sqlite3_exec(sqliteHandle, sql, nil, nil, &message)
        if let changeTracker {
            changeTracker.endScript()
            changeTracker.deliverCommitted()
        }
        if let start { tracer.record(sql: sql, arguments: [], configName: configName, duration: Self.traced(since: start)) }
        if code != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(sqliteHandle))
            sqlite3_free(message)
            throw busyOrSelf(DatabaseError(resultCode: code, extendedResultCode: sqlite3_extended_errcode(sqliteHandle),
                                           message: text, sql: sql, configName: configName))
        }
    }

    /// Runs `body` with the statement for `sql` bound to `arguments`, then resets it.
    /// Cached statements are reused; one already in use (a reentrant call) gets a fresh one.
    /// Once the context has stopped under the call (`interrupt()`), only `evenIfStopped` runs.
    func withStatement<T>(_ sql: String, _ arguments: Arguments, bind: Bool = true, evenIfStopped: Bool = false,
                          _ body: (Statement) throws -> T) throws -> T {
        if !evenIfStopped { try refuseIfStopped(sql) }
        statementStart = Self.waitClock()
        let statement = try acquire(sql)
        defer {
            statement.reset()
            statement.inUse = false
            // After the reset: an autocommit write not stepped to its end (RETURNING read once) commits there.
            changeTracker?.deliverCommitted()
        }
        if let changeTracker, let effects = statement.effects { return try tracking(changeTracker, effects, statement, arguments, bind: bind, body) }
        guard bind else { return try body(statement) }
        try statement.bind(arguments, registry: registry, configName: configName)
        guard isTracing else { return try body(statement) }
        let start = Self.traceClock()
        defer {
            tracer.record(sql: sql, arguments: statement.describe(arguments, registry: registry),
                          configName: configName, duration: Self.traced(since: start))
        }
        return try body(statement)
    }

    /// `withStatement`'s body for a statement that writes or ends a savepoint, on a writer whose
    /// changes are tracked: its writes count before it runs, its savepoint once it has run, and
    /// what a commit in it made durable goes to the observers after.
    private func tracking<T>(_ tracker: ChangeTracker, _ effects: TrackedEffects, _ statement: Statement, _ arguments: Arguments,
                             bind: Bool, _ body: (Statement) throws -> T) throws -> T {
        tracker.willRun(effects)
        let wantsRows = tracker.isActive && tracker.wantsRows
        if wantsRows != rowHookInstalled {
            reportRowids(wantsRows, to: tracker)
            rowHookInstalled = wantsRows
        }
        if bind { try statement.bind(arguments, registry: registry, configName: configName) }
        let start = isTracing && bind ? Self.traceClock() : nil
        defer {
            if let start {
                tracer.record(sql: statement.sql, arguments: statement.describe(arguments, registry: registry),
                              configName: configName, duration: Self.traced(since: start))
            }
        }
        let result = try body(statement)
        tracker.didRun(effects)
        return result
    }

    /// Prepares `sql` without caching or running it, for `body` to look at (`readRegion`).
    func withUncachedStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        try body(try prepare(sql, cached: false))
    }

    /// Steps `statement` once: true when a row is ready, false when done.
    func step(_ statement: Statement, _ arguments: Arguments) throws -> Bool {
        try step(statement, described: { arguments })
    }

    /// `step`, with the arguments for an error message given only when one is made.
    @inline(__always)
    private func step(_ statement: Statement, described arguments: () -> Arguments) throws -> Bool {
        let code = sqlite3_step(statement.handle)
        if code == SQLITE_ROW {
            // A stop that came between this call's checks and its step found no statement running
            // to interrupt (SQLite then drops the interrupt): a reading call ends at its next row.
            if stopRequested.load(ordering: .relaxed) { throw stoppedError(statement.sql) }
            return true
        }
        if code == SQLITE_DONE { return false }
        throw error(code, statement, arguments())
    }

    /// Runs a statement that returns no rows to completion; returns the number of rows changed.
    func run(_ sql: String, _ arguments: Arguments) throws -> Int {
        try withStatement(sql, arguments) { statement in
            // sqlite3_changes keeps the count of the last INSERT/UPDATE/DELETE: a statement that
            // changed nothing (DDL, PRAGMA) must not report it.
            let before = sqlite3_total_changes64(sqliteHandle)
            while try step(statement, arguments) {}
            return sqlite3_total_changes64(sqliteHandle) == before ? 0 : changes
        }
    }

    /// Runs a statement that ends a transaction (ROLLBACK, ROLLBACK TO, RELEASE after it) even
    /// once the context has stopped under the call: the holder leaves the connection clean.
    func runRollback(_ sql: String) throws {
        try withStatement(sql, .none, evenIfStopped: true) { statement in
            while try step(statement, .none) {}
        }
    }

    /// Runs `sql` once per argument list on one prepared statement; returns the rows changed by each.
    /// An error names the argument list that failed (its `batchPosition`).
    func runEach(_ sql: String, _ rows: [Arguments]) throws -> [Int] {
        try withStatement(sql, .none, bind: false) { statement in
            try rows.enumerated().map { index, row in try batchItem(index, of: rows.count) { try runPrepared(statement, row) } }
        }
    }

    /// Binds `arguments` to a statement held by the caller, runs it to completion and resets it;
    /// returns the rows it changed.
    func runPrepared(_ statement: Statement, _ arguments: Arguments) throws -> Int {
        try runPrepared(statement, bind: { try statement.bind(arguments, registry: registry, configName: configName) },
                        described: { statement.describe(arguments, registry: registry) })
    }

    /// `runPrepared` with `count` values given by `value` (a record's stored values, read where
    /// they are: nothing copied into an array).
    /// `rawTexts`: the bytes of TEXT values that are not UTF-8, by parameter (0-based), bound in
    /// place of the values, which hold them with U+FFFD replacements.
    @inline(__always)
    func runPrepared(_ statement: Statement, count: Int, _ value: (Int) -> DatabaseValue,
                     rawTexts: [Int: Data]? = nil) throws -> Int {
        try runPrepared(statement, bind: {
                            try statement.bind(count: count, value, configName: configName)
                            if let rawTexts { try statement.bindText(rawTexts, configName: configName) }
                        },
                        described: { (0..<count).map(value) })
    }

    /// `runPrepared` with the values of two runs of stored values (a record's, its omitted key
    /// between them), read where they are: no call and no copy a value. `rawTexts` as above.
    func runPrepared(_ statement: Statement, _ first: UnsafeBufferPointer<DatabaseValue>,
                     _ second: UnsafeBufferPointer<DatabaseValue>, rawTexts: [Int: Data]? = nil) throws -> Int {
        try runPrepared(statement, bind: {
                            try statement.bind(first, second, configName: configName)
                            if let rawTexts { try statement.bindText(rawTexts, configName: configName) }
                        },
                        described: { Array(first) + Array(second) })
    }

    /// Binds (`bind`), runs to completion and resets `statement`; `described` gives the values
    /// bound, for an error or a trace only.
    @inline(__always)
    private func runPrepared(_ statement: Statement, bind: () throws -> Void, described: () -> [DatabaseValue]) throws -> Int {
        try refuseIfStopped(statement.sql)
        statementStart = Self.waitClock()
        try bind()
        let start = isTracing ? Self.traceClock() : nil
        let before = sqlite3_total_changes64(sqliteHandle)
        defer { sqlite3_reset(statement.handle) }
        while try step(statement, described: { .values(described()) }) {}
        if let start {
            tracer.record(sql: statement.sql, arguments: described(), configName: configName, duration: Self.traced(since: start))
        }
        return sqlite3_total_changes64(sqliteHandle) == before ? 0 : changes
    }

    /// Every row of `sql`, as stored values (the library's own schema queries).
    func rows(_ sql: String, _ arguments: Arguments = .none) throws -> [[DatabaseValue]] {
        try withStatement(sql, arguments) { statement in
            var rows: [[DatabaseValue]] = []
            while try step(statement, arguments) {
                rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
            }
            return rows
        }
    }

    /// Whether `table` has a column named `column` (SQLite's schema, case-insensitive).
    func tableHasColumn(_ table: String, _ column: String) -> Bool {
        sqlite3_table_column_metadata(sqliteHandle, nil, table, column, nil, nil, nil, nil, nil) == SQLITE_OK
    }

    /// Whether `sql` cannot write; prepares (and caches) it to ask SQLite.
    func isReadOnly(_ sql: String) throws -> Bool {
        try withStatement(sql, .none, bind: false) { $0.isReadOnly }
    }

    func error(_ code: Int32, _ statement: Statement, _ arguments: Arguments) -> any Error {
        busyOrSelf(DatabaseError(code: code, db: sqliteHandle, sql: statement.sql,
                                 arguments: statement.describe(arguments, registry: registry), configName: configName))
    }

    /// SQLite's "database is locked" after its own busy timeout ran out (another connection or
    /// process held the lock) as DicRecord's `.busy` error, naming the config and the wait and
    /// keeping SQLite's error; any other error unchanged.
    func busyOrSelf(_ error: DatabaseError) -> any Error {
        if error.resultCode == SQLITE_INTERRUPT, stopRequested.load(ordering: .relaxed) { return stoppedError(error.sql) }
        // Extended codes are C macro expressions, not imported: SQLITE_BUSY_SNAPSHOT and SQLITE_LOCKED_SHAREDCACHE.
        let busySnapshot = SQLITE_BUSY | (2 << 8), lockedSharedCache = SQLITE_LOCKED | (1 << 8)
        if error.extendedResultCode == busySnapshot {
            // No wait happens: the read snapshot this transaction started on is stale.
            return DicRecordError(.busy,
                "database is locked: config '\(configName)' cannot write in a transaction that read an older snapshot; retry the transaction (SQLite: \(error.message))",
                sql: error.sql, configName: configName, databaseError: error)
        }
        guard error.resultCode == SQLITE_BUSY || error.extendedResultCode == lockedSharedCache else { return error }
        let waited = Double(Self.waitClock() &- statementStart) / 1e9
        // SQLite gives up at once on some locks without calling its busy handler (a journal mode
        // change, a reader promoting to writer beside another one): say so rather than claim a wait.
        let wait = waited >= busyTimeout * 0.5
            ? "waited \(Self.format(waited)) s (busy timeout \(busyTimeout) s)"
            : "got SQLITE_BUSY after \(Self.format(waited)) s, before its busy timeout of \(busyTimeout) s (a lock SQLite does not wait for),"
        return DicRecordError(.busy,
            "database is locked: config '\(configName)' \(wait) for a lock held by another connection or process (SQLite: \(error.message))",
            sql: error.sql, configName: configName, databaseError: error)
    }

    /// Sets the journal mode; returns the mode SQLite applied. SQLite does not call its busy handler
    /// for the lock this needs, so a BUSY (another process opening the same new file) is retried
    /// here until the busy timeout.
    func setJournalMode(_ mode: String) throws -> String {
        let start = Self.waitClock()
        var pause = 0.001
        while true {
            do {
                return try withStatement("PRAGMA journal_mode = \(mode)", .none) { statement -> String in
                    _ = try step(statement, .none)
                    if case .text(let text) = statement.value(at: 0) { return text }
                    return ""
                }
            } catch let error as DicRecordError where error.kind == .busy {
                let waited = Double(Self.waitClock() &- start) / 1e9
                guard waited < busyTimeout else {
                    throw DicRecordError(.busy,
                        "database is locked: config '\(configName)' waited \(Self.format(waited)) s (busy timeout \(busyTimeout) s) to set journal mode \(mode) while another connection or process held a lock (SQLite: \(error.databaseError?.message ?? error.message))",
                        sql: error.sql, configName: configName, databaseError: error.databaseError)
                }
                Thread.sleep(forTimeInterval: pause)
                pause = min(pause * 2, 0.05)
            }
        }
    }

    /// A monotonic clock in nanoseconds for traces (a plain integer: an optional `ContinuousClock.Instant`,
    /// a type of another module, is copied through its value witnesses, on every statement).
    @inline(__always)
    static func traceClock() -> UInt64 {
        var now = timespec()
        // Fails only for an unknown clock id; CLOCK_MONOTONIC is known to every supported system.
        guard clock_gettime(CLOCK_MONOTONIC, &now) == 0 else { return 0 }
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// The time since `start` (a `traceClock()` reading).
    static func traced(since start: UInt64) -> Duration {
        .nanoseconds(Int64(bitPattern: traceClock() &- start))
    }

    /// A monotonic clock in nanoseconds for the busy message, read once per statement: on Linux
    /// the coarse one (a few milliseconds fine, a fifth of the cost; the message compares waits
    /// with the busy timeout, tenths of a second and more).
    static func waitClock() -> UInt64 {
        var now = timespec()
        #if os(Linux)
        let clock = CLOCK_MONOTONIC_COARSE
        #else
        let clock = CLOCK_MONOTONIC
        #endif
        // Fails only for an unknown clock id; both are known to every supported system.
        guard clock_gettime(clock, &now) == 0 else { return 0 }
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    private static func format(_ seconds: Double) -> String {
        String(format: "%.2f", seconds)
    }

    private func acquire(_ sql: String) throws -> Statement {
        if let cached = cache.statement(for: sql), !cached.inUse {
            cached.inUse = true
            return cached
        }
        let canCache = cache.statement(for: sql) == nil
        let statement = try prepare(sql, cached: canCache)
        if canCache { cache.insert(statement) }
        statement.inUse = true
        return statement
    }

    private func prepare(_ sql: String, cached: Bool) throws -> Statement {
        // SQLite reads a C string: it would stop at a NUL and silently ignore what follows.
        if let nul = sql.utf8.firstIndex(of: 0) {
            throw DicRecordError(.invalidArgument,
                "the SQL holds a NUL character at byte \(sql.utf8.distance(from: sql.utf8.startIndex, to: nul)); SQLite would ignore everything after it",
                sql: sql, configName: configName)
        }
        var handle: OpaquePointer?
        var tail: UnsafePointer<CChar>?
        changeTracker?.beginPrepare()
        let code = sql.withCString { text in
            let result = sqlite3_prepare_v3(sqliteHandle, text, -1, cached ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0, &handle, &tail)
            if result == SQLITE_OK, let tail, tail.pointee != 0, !Self.isBlank(tail) {
                sqlite3_finalize(handle)
                handle = nil
                return Int32(-1)
            }
            return result
        }
        let effects = changeTracker?.endPrepare()
        if code == -1 {
            throw DicRecordError(.multipleStatements, "the SQL holds more than one statement; run each separately or use batch",
                                 sql: sql, configName: configName)
        }
        guard code == SQLITE_OK else {
            throw busyOrSelf(DatabaseError(code: code, db: sqliteHandle, sql: sql, configName: configName))
        }
        guard let handle else {
            throw DicRecordError(.invalidArgument, "the SQL holds no statement", sql: sql, configName: configName)
        }
        let statement = Statement(handle: handle, sql: sql)
        statement.effects = effects.map(TrackedEffects.init)
        return statement
    }

    /// True when `tail` holds only white space, semicolons and comments.
    private static func isBlank(_ tail: UnsafePointer<CChar>) -> Bool {
        var p = tail
        while p.pointee != 0 {
            let c = UInt8(bitPattern: p.pointee)
            if c == UInt8(ascii: " ") || c == UInt8(ascii: "\n") || c == UInt8(ascii: "\t") || c == UInt8(ascii: "\r") || c == UInt8(ascii: ";") {
                p += 1
            } else if c == UInt8(ascii: "-"), (p + 1).pointee == CChar(UInt8(ascii: "-")) {
                while p.pointee != 0, p.pointee != CChar(UInt8(ascii: "\n")) { p += 1 }
            } else if c == UInt8(ascii: "/"), (p + 1).pointee == CChar(UInt8(ascii: "*")) {
                p += 2
                while p.pointee != 0, !(p.pointee == CChar(UInt8(ascii: "*")) && (p + 1).pointee == CChar(UInt8(ascii: "/"))) { p += 1 }
                if p.pointee != 0 { p += 2 }
            } else {
                return false
            }
        }
        return true
    }
}
