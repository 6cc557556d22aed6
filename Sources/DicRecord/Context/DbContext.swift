import Foundation
import Logging
import Synchronization

/// One database under a config name: its file, its connections, its converters and options.
///
/// ```swift
/// let main = try DbContext(path: "db/database.sqlite")               // config "main"
/// main.showSql = true
/// try main.start()
/// let backup = try DbContext(path: "db/backup.sqlite", configName: "backup")
/// try backup.start()
/// try Db.use("backup").find("select * from teacher")
/// backup.stop()                                                       // the name is free again
/// ```
/// The config named "main", or else the first one started, is the main config that `Db.main`
/// and the static `Db` methods use. Starting a second context under a name in use throws.
public final class DbContext: Sendable {
    /// The config name (compared case-insensitively).
    /// ```swift
    /// try DbContext(path: "db/backup.sqlite", configName: "backup").configName   // "backup"
    /// ```
    public let configName: String
    /// The database file, or `:memory:`.
    /// ```swift
    /// try DbContext.inMemory(configName: "scratch").path   // ":memory:"
    /// ```
    public let path: String
    /// The options the context was made with.
    /// ```swift
    /// if context.options.readonly { print("read-only") }
    /// ```
    public let options: Options
    /// This context's converters: registrations here win over the global ones in this context.
    /// ```swift
    /// main.converters.register(MoneyConverter())
    /// ```
    public let converters: Converters
    let tracer: SqlTracer
    /// Live queries' registrations, the writer's change log (SQLite) or the engine's change feed.
    let changeHub: ChangeHub
    private let isMemory: Bool
    private let running = Guarded<Running?>(nil)
    private let schema = Guarded(SchemaDeclarations())

    /// The declarations (models) and migrations registered with this context.
    private struct SchemaDeclarations {
        var declared: [any ContextDeclaration] = []
        var ids: Set<ObjectIdentifier> = []
        /// Declarations registered after start whose upkeep failed: their operations throw this.
        var failures: [ObjectIdentifier: any Error] = [:]
        var upkeep: DeclarationUpkeep?
        var migrations: [DatabaseMigration] = []
    }

    private struct Running: Sendable {
        /// The connections: SQLite's own pool, or another engine's (`engine` set).
        let pool: ConnectionPool?
        let external: (any EnginePool)?
        let contexts: ContextRegistry
    }
    /// Set for a context of another engine (`DbContext(postgres:)`): how `start()` opens its pool.
    private let engine: EngineFactory?
    /// `engine != nil`, as a plain flag: every `Db` call asks it.
    let isExternal: Bool

    /// A context for the file at `path` (its folder is created at start unless readonly).
    /// Throws when the path or the config name is empty, or the path holds a NUL character.
    /// ```swift
    /// let main = try DbContext(path: "db/database.sqlite")
    /// let backup = try DbContext(path: "db/backup.sqlite", configName: "backup")
    /// ```
    public init(path: String, configName: String = "main", options: Options = Options()) throws {
        guard !path.isEmpty else {
            throw DicRecordError(.invalidArgument, "the database path is empty", configName: configName)
        }
        guard !configName.isEmpty else {
            throw DicRecordError(.invalidArgument, "the config name is empty")
        }
        // SQLite reads the path as a C string: a NUL would cut it and open another file.
        if let nul = path.utf8.firstIndex(of: 0) {
            throw DicRecordError(.invalidArgument,
                "the database path holds a NUL character at byte \(path.utf8.distance(from: path.utf8.startIndex, to: nul)); SQLite would open the file named by what comes before it",
                configName: configName)
        }
        self.path = path
        self.configName = configName
        self.options = options
        self.isMemory = path == ":memory:"
        self.converters = Converters(parent: .shared)
        self.tracer = SqlTracer(observer: options.onSql, logger: options.logger, strictReads: options.strictReads)
        self.engine = nil
        self.isExternal = false
        self.changeHub = ChangeHub(latency: options.externalChangeLatency, workers: options.readerCount)
    }

    /// A context of another engine, opened by `engine` at `start()`; `path` is its description.
    package init(engine: EngineFactory, configName: String, options: Options) throws {
        guard !configName.isEmpty else {
            throw DicRecordError(.invalidArgument, "the config name is empty")
        }
        self.path = engine.description
        self.configName = configName
        self.options = options
        self.isMemory = false
        self.converters = Converters(parent: .shared)
        self.tracer = SqlTracer(observer: options.onSql, logger: options.logger, strictReads: options.strictReads)
        self.engine = engine
        self.isExternal = true
        self.changeHub = ChangeHub(latency: options.externalChangeLatency, workers: options.readerCount)
    }

    /// A context on a private in-memory database, alive until `stop()`.
    /// ```swift
    /// let scratch = try DbContext.inMemory(configName: "scratch")
    /// try scratch.start()
    /// ```
    public static func inMemory(configName: String = "main", options: Options = Options()) throws -> DbContext {
        try DbContext(path: ":memory:", configName: configName, options: options)
    }

    /// Logs every statement (SQL, arguments, duration) at `info` through `Options.logger`, or
    /// swift-log's label `DicRecord.SQL` when there is none.
    /// ```swift
    /// main.showSql = true
    /// ```
    public var showSql: Bool {
        get { tracer.showSql }
        set { tracer.showSql = newValue }
    }

    /// Registers a converter for this context only; it wins over the global one here.
    /// ```swift
    /// main.register(converter: MoneyConverter())
    /// ```
    public func register<C: TypeConverter>(converter: C) {
        converters.register(converter)
    }

    /// Registers `items` (the Model layer's `register(_:)` does, for models): at start `upkeep`
    /// brings the database up to date for them, one transaction for all. Registered after start,
    /// it runs at once; if it fails, `isDeclared` throws why for each of them.
    func declare(_ items: [any ContextDeclaration], upkeep: @escaping DeclarationUpkeep) {
        let (added, others) = schema.withLock { declarations -> ([any ContextDeclaration], [any ContextDeclaration]) in
            declarations.upkeep = upkeep
            var added: [any ContextDeclaration] = []
            for item in items {
                if declarations.ids.insert(item.id).inserted {
                    declarations.declared.append(item)
                    added.append(item)
                } else if declarations.failures[item.id] != nil {
                    added.append(item)   // its upkeep failed before: try again
                }
            }
            let addedIDs = Set(added.map(\.id))
            return (added, declarations.declared.filter { !addedIDs.contains($0.id) })
        }
        ContextRegistry.changed()
        guard !added.isEmpty, isStarted else { return }
        do {
            try runStartWork(added: added, others: others, migrations: [])
            schema.withLock { declarations in
                for item in added { declarations.failures[item.id] = nil }
            }
        } catch {
            schema.withLock { declarations in
                for item in added { declarations.failures[item.id] = error }
            }
        }
        ContextRegistry.changed()
    }

    /// Declares step `version` of this database's migrations (patchwork's): at start, the steps
    /// above the file's `PRAGMA user_version` run in order, each in its own transaction, and
    /// stamp their version. A database whose version is above the last step is refused.
    /// ```swift
    /// main.migration(version: 1) { db in try db.update("create table log(id integer primary key, line text)") }
    /// main.migration(version: 2) { db in try db.update("alter table log add column at real") }
    /// ```
    /// Migrations run before the models' schema work, so a model table can be changed here first.
    public func migration(version: Int, _ body: @escaping @Sendable (Db) throws -> Void) {
        schema.withLock { $0.migrations.append(DatabaseMigration(version: version, body: body)) }
    }

    /// Whether the declaration `id` is registered here; throws why one registered after start is unusable.
    func isDeclared(_ id: ObjectIdentifier) throws -> Bool {
        try schema.withLock { declarations in
            if let failure = declarations.failures[id] { throw failure }
            return declarations.ids.contains(id)
        }
    }

    /// The migrations, then the declarations' upkeep, on the writer.
    private func runStartWork(added: [any ContextDeclaration], others: [any ContextDeclaration] = [],
                              migrations: [DatabaseMigration]) throws {
        let upkeep = schema.withLock { $0.upkeep }
        guard !migrations.isEmpty || (!added.isEmpty && upkeep != nil) else { return }
        let contexts = ContextRegistry.active
        func work(_ connection: any EngineConnection) throws {
            let db = Db(configName: configName, contexts: contexts)
            try DatabaseMigration.run(migrations, on: connection, db: db, configName: configName)
            if !added.isEmpty, let upkeep { try upkeep(added, others, connection, self, db) }
        }
        if let external = try externalPool() {
            try external.write(work)
        } else {
            try pool().write(work)
        }
    }

    /// Whether the context is started.
    /// ```swift
    /// if !main.isStarted { try main.start() }
    /// ```
    public var isStarted: Bool { running.withLock { $0 != nil } }

    /// Opens the database, registers the context under its config name, runs the database
    /// migrations and brings the registered models' tables up to date.
    ///
    /// Throws when a migration or the schema work fails (nothing of the schema work is kept), when the name is in use, when the file cannot be opened or is not a database,
    /// and, for a readonly context, when the file does not exist (it is never created).
    /// ```swift
    /// let main = try DbContext(path: "db/database.sqlite")
    /// main.register(Student.self)
    /// try main.start()
    /// ```
    public func start() throws {
        guard !isStarted else {
            throw DicRecordError(.duplicateConfig, "config '\(configName)' is already started", configName: configName)
        }
        let contexts = ContextRegistry.active
        try contexts.add(self)
        do {
            // Opened outside the lock: an onOpen hook may ask this context questions.
            if let engine {
                let external = try engine.open(configName, options, converters, tracer)
                running.withLock { $0 = Running(pool: nil, external: external, contexts: contexts) }
                changeHub.started(feed: { latency, onCommit in try external.changeFeed(latency: latency, onCommit) })
            } else {
                let tracker = options.readonly ? nil : changeHub.makeTracker()
                let pool = try openPool(tracker: tracker)
                running.withLock { $0 = Running(pool: pool, external: nil, contexts: contexts) }
                changeHub.started(tracker: tracker, polling: pollingSource(pool))
            }
            // Every declaration's upkeep runs again here: earlier failures are forgotten.
            let declared = schema.withLock { declarations in
                declarations.failures = [:]
                return (declarations.declared, declarations.migrations)
            }
            ContextRegistry.changed()
            do {
                try runStartWork(added: declared.0, migrations: declared.1)
            } catch {
                stop()
                throw error
            }
            changeHub.resume()
        } catch {
            contexts.remove(self)
            throw error
        }
    }

    /// Closes the connections and frees the config name; the context can be started again.
    ///
    /// Calls that start afterwards throw `.notStarted`, and so do calls joined inside a
    /// transaction that was running when `stop()` began: that transaction cannot commit (its
    /// commit throws `.notStarted` too) and rolls back whole. Calls in flight on other threads get
    /// up to the busy timeout to finish; then the statement one is running is interrupted and its
    /// next one throws `.notStarted`. A connection is never closed while a call uses it: the call
    /// closes it when it hands it back, after `stop()` has returned if need be. Called from inside
    /// a `tx`, an async transaction or an `each` callback, `stop()` does not wait for the
    /// connection its caller holds.
    /// ```swift
    /// main.stop()
    /// try main.start()     // the same context, opened again
    /// ```
    public func stop() {
        let stopped = running.withLock { running -> Running? in
            defer { running = nil }
            return running
        }
        guard let stopped else { return }
        changeHub.stopped()
        stopped.contexts.remove(self)
        stopped.pool?.close()
        stopped.external?.close()
    }

    /// The SQLite pool of a started context.
    @inline(__always)
    func pool() throws -> ConnectionPool {
        guard let pool = running.withLock({ $0?.pool }) else { try noPool(for: nil) }
        return pool
    }

    /// The SQLite pool of a started context; for another engine's, why `what` does not run there yet.
    func pool(for what: String?) throws -> ConnectionPool {
        guard let pool = running.withLock({ $0?.pool }) else { try noPool(for: what) }
        return pool
    }

    @inline(never)
    private func noPool(for what: String?) throws -> Never {
        guard isStarted else {
            throw DicRecordError(.notStarted, "config '\(configName)' is not started", configName: configName)
        }
        throw DicRecordError(.misuse,
            "config '\(configName)' runs on \(path): \(what ?? "this call") is SQLite-only",
            configName: configName)
    }

    /// The SQLite pool for `Db`'s SQLite paths; for another engine's context, throws `EngineRedirect`,
    /// which those paths catch to serve it through `EngineCalls.swift`. (A throw rather than a
    /// check up front: the check slowed SQLite lookups by key 5–10%; the throw costs nothing
    /// until it happens, and a server round trip dwarfs it then.)
    @inline(__always)
    func sqlitePool() throws -> ConnectionPool {
        if let pool = running.withLock({ $0?.pool }) { return pool }
        if isExternal, isStarted { throw EngineRedirect(context: self) }
        try noPool(for: nil)
    }

    /// The pool of a started context of another engine; nil for SQLite (throws when not started).
    @inline(__always)
    func externalPool() throws -> (any EnginePool)? {
        guard isExternal else { return nil }
        // An async call trying its caller's thread: a server round trip is a wait; it moves to a pool thread.
        if ThreadLeases.current.mustNotWait { throw WouldBlock() }
        guard let external = running.withLock({ $0?.external }) else {
            throw DicRecordError(.notStarted, "config '\(configName)' is not started", configName: configName)
        }
        return external
    }

    private func openPool(tracker: ChangeTracker?) throws -> ConnectionPool {
        let url = URL(fileURLWithPath: path)
        if !isMemory && !options.readonly {
            try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        }
        if options.readonly {
            let mode = Self.readonlyMode(path)
            let first = try openConnection(mode)
            return ConnectionPool(configName: configName, writer: nil, busyTimeout: options.busyTimeout,
                                  maxReaders: options.readerCount, firstReader: first,
                                  makeReader: { [self] in try openConnection(mode) })
        }
        let writer = try openConnection(.readWrite, tracker: tracker)
        var useReaders = false
        if !isMemory {
            let mode = options.journalMode.rawValue
            let applied = try writer.setJournalMode(mode)
            useReaders = applied.lowercased() == "wal" && options.readerCount > 0
        }
        return ConnectionPool(configName: configName, writer: writer, busyTimeout: options.busyTimeout,
                              maxReaders: options.readerCount, firstReader: nil,
                              makeReader: useReaders ? { [self] in try openConnection(.readOnly) } : nil)
    }

    /// Where live queries read `PRAGMA data_version` (nil in memory, where nothing else can write).
    private func pollingSource(_ pool: ConnectionPool) -> ChangeHub.VersionSource? {
        guard !isMemory else { return nil }
        guard options.readonly else { return .writer { try? pool.writeIfFree { try $0.dataVersion() } ?? nil } }
        let (path, configName, converters, tracer, busyTimeout) = (path, configName, converters, tracer, options.busyTimeout)
        let mode = Self.readonlyMode(path)
        return .connection {
            try Connection(path: path, mode: mode, configName: configName, registry: converters, tracer: tracer,
                           busyTimeout: busyTimeout, statementCacheSize: 4)
        }
    }

    /// How a readonly context opens its file. A WAL file needs its `-shm` file; in a folder nobody
    /// can write to, where none exists, SQLite would fail to create one. No process can write such
    /// a file (a writer would need the `-wal` file too), so it is opened as immutable: read as it
    /// is, creating nothing next to it.
    private static func readonlyMode(_ path: String) -> Connection.OpenMode {
        let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard path != ":memory:", access(folder, W_OK) != 0, !FileManager.default.fileExists(atPath: path + "-shm") else {
            return .readOnly
        }
        return .immutable
    }

    private func openConnection(_ mode: Connection.OpenMode, tracker: ChangeTracker? = nil) throws -> Connection {
        let connection = try Connection(path: path, mode: mode, configName: configName, registry: converters, tracer: tracer,
                                        busyTimeout: options.busyTimeout, statementCacheSize: options.statementCacheSize)
        // The writer's hooks go in before its first statement, so that every statement it caches knows what it writes.
        connection.changeTracker = tracker
        connection.isSettingUp = true
        defer { connection.isSettingUp = false }
        // Fails early, with SQLite's message, on a file that is not a database.
        _ = try connection.withStatement("SELECT count(*) FROM sqlite_master", .none) { try connection.step($0, .none) }
        if options.foreignKeys {
            _ = try connection.run("PRAGMA foreign_keys = ON", .none)
        }
        connection.isSettingUp = false
        try options.onOpen?(connection)
        return connection
    }
}

extension DbContext {
    /// How a context opens and uses its database.
    /// ```swift
    /// var options = DbContext.Options(); options.readonly = true
    /// try DbContext(path: "db/database.sqlite", configName: "ro", options: options).start()
    /// ```
    /// How much of other transactions a transaction sees (engines with levels: PostgreSQL).
    /// ```swift
    /// var options = DbContext.Options(); options.isolation = .repeatableRead
    /// ```
    public enum Isolation: String, Sendable {
        /// As if transactions ran one after another; conflicts throw `.conflict`.
        case serializable = "SERIALIZABLE"
        /// One snapshot for the whole transaction; a write over another's commit throws `.conflict`.
        case repeatableRead = "REPEATABLE READ"
        /// Each statement sees what was committed before it began.
        case readCommitted = "READ COMMITTED"
    }

    public struct Options: Sendable {
        /// Open for reading only: writes throw, and a missing file is an error (never created).
        /// ```swift
        /// options.readonly = true
        /// ```
        public var readonly = false
        /// The journal mode for files (in-memory databases ignore it). WAL lets reads run beside a write.
        /// ```swift
        /// options.journalMode = .delete
        /// ```
        public var journalMode: JournalMode = .wal
        /// Seconds a statement waits for a lock held by another connection or process,
        /// and a thread waits for this context's writer, before failing with "database is locked".
        /// ```swift
        /// options.busyTimeout = 30
        /// ```
        public var busyTimeout: Double = 5
        /// Reader connections beside the writer, in WAL mode (readonly contexts: readers only).
        /// ```swift
        /// options.readerCount = 8
        /// ```
        public var readerCount = 4
        /// PostgreSQL (and other server engines): the connections a config opens at most; a call
        /// waits up to `busyTimeout` for one when all are in use. SQLite contexts ignore it.
        /// ```swift
        /// options.poolSize = 16
        /// ```
        public var poolSize = 8
        /// PostgreSQL: seconds to wait for the server to accept a connection before the call
        /// (or `start()`) fails naming the host and port.
        /// ```swift
        /// options.connectTimeout = 3
        /// ```
        public var connectTimeout = 10
        /// PostgreSQL: the isolation of `tx`/`transaction` (and batches). `.serializable` (the
        /// default) keeps SQLite's promise: a transaction's reads and writes behave as if it ran
        /// alone, or it fails with a `.conflict` error that `tx(retryOnConflict:)` reruns; never a
        /// lost update. `.readCommitted` is PostgreSQL's own default: faster under contention, but
        /// a read-modify-write in two transactions at once can lose one of the writes. SQLite's
        /// transactions are always serializable; SQLite contexts ignore it.
        /// ```swift
        /// options.isolation = .readCommitted
        /// ```
        public var isolation = Isolation.serializable
        /// PostgreSQL with read replicas: seconds a replica may lag and still serve reads. Its lag is
        /// 0 when it has replayed all the WAL it received, else the time since the last
        /// transaction it replayed (PostgreSQL's `now() - pg_last_xact_replay_timestamp()`); a
        /// known lag is trusted for a second. Independent of it, a read never sees less than this
        /// context's own last commit (read-your-writes). A read that turns out to write on a
        /// replica (`select nextval(…)`) runs again on the primary; session state such as
        /// advisory locks belongs on the primary: use `Db.primary`.
        /// ```swift
        /// options.maxReplicaLag = 5
        /// ```
        public var maxReplicaLag: Double = 10
        /// Live queries (`Db.observe`, `Db.changes(in:)`): seconds within which a commit made by
        /// another process or connection to the same file reaches them (DicRecord looks at
        /// `PRAGMA data_version` that often while anything observes; its own commits reach them
        /// at once). A readonly context opened immutable (a folder nobody may write to) sees none.
        /// ```swift
        /// options.externalChangeLatency = 0.05
        /// ```
        public var externalChangeLatency: Double = 0.25
        /// `PRAGMA foreign_keys = ON` on every connection.
        /// ```swift
        /// options.foreignKeys = false
        /// ```
        public var foreignKeys = true
        /// Prepared statements kept per connection, by SQL text.
        /// ```swift
        /// options.statementCacheSize = 256
        /// ```
        public var statementCacheSize = 64
        /// Called once for every connection the context opens, after DicRecord's own setup.
        /// ```swift
        /// options.onOpen = { connection in try connection.execute("pragma cache_size = -16000") }
        /// ```
        public var onOpen: (@Sendable (Connection) throws -> Void)?
        /// Called after every statement with its SQL, arguments and duration (tests, metrics).
        /// ```swift
        /// options.onSql = { trace in print(trace.sql, trace.duration) }
        /// ```
        public var onSql: (@Sendable (SqlTrace) -> Void)?
        /// Where DicRecord logs (`showSql`, and the warning of a typed read that misses). Nil: a
        /// swift-log `Logger` labelled `DicRecord.SQL` for SQL and `DicRecord` for warnings,
        /// through whatever backend the application bootstrapped. DicRecord never bootstraps logging.
        /// A record built in code (`Record()`, `Record([...])`) belongs to no context: its misses
        /// warn on the `DicRecord` label, whatever this says.
        /// ```swift
        /// options.logger = Logger(label: "app.db")
        /// ```
        public var logger: Logger?
        /// Turns a typed read that misses (a value that does not convert to the type read, or
        /// no such column) into a `preconditionFailure` with the warning's message, instead of a
        /// warning and nil. NULL still reads as nil. Meant for tests and debug builds. It covers
        /// the rows this context reads; a record built in code belongs to no context and only warns.
        /// ```swift
        /// #if DEBUG
        /// options.strictReads = true
        /// #endif
        /// ```
        public var strictReads = false

        /// Default options: WAL, read-write, 5 s busy timeout, 4 readers, foreign keys on.
        /// ```swift
        /// var options = DbContext.Options()
        /// ```
        public init() {}
    }

    /// SQLite's journal modes. See <https://www.sqlite.org/pragma.html#pragma_journal_mode>.
    /// ```swift
    /// options.journalMode = .truncate
    /// ```
    public enum JournalMode: String, Sendable {
        /// The modes, one per value of `PRAGMA journal_mode`: `.wal`, `.delete`, `.truncate`, `.persist`, `.memory`, `.off`.
        /// ```swift
        /// options.journalMode = .wal
        /// ```
        case wal = "WAL", delete = "DELETE", truncate = "TRUNCATE", persist = "PERSIST", memory = "MEMORY", off = "OFF"
    }

    /// Runs `body` with a registry of contexts of its own: contexts started inside are invisible
    /// outside, and `Db.main` inside is the scope's main. Meant for tests that run in parallel.
    /// ```swift
    /// try DbContext.withIsolatedRegistry { try DbContext.inMemory().start(); try Db.update("create table t(a)") }
    /// ```
    public static func withIsolatedRegistry<T>(_ body: () throws -> T) rethrows -> T {
        try ContextRegistry.withScoped(ContextRegistry(), body)
    }

    /// The async form of `withIsolatedRegistry(_:)`: contexts started in `body` are visible only inside it.
    /// ```swift
    /// try await DbContext.withIsolatedRegistry { try DbContext.inMemory().start(); try await Db.update("create table t(a)") }
    /// ```
    public static func withIsolatedRegistry<T>(_ body: () async throws -> T) async rethrows -> T {
        try await ContextRegistry.withScoped(ContextRegistry(), body)
    }
}

/// A table owner registered with a context: models are the one kind (`Model/`), and the context
/// knows them only through this.
protocol ContextDeclaration: Sendable {
    /// Registering the same declaration twice registers it once.
    var id: ObjectIdentifier { get }
}

/// Brings the database up to date for `added` declarations on the held writer (`others`: the
/// context's other declarations, for clash checks), one transaction; `db` joins that writer.
typealias DeclarationUpkeep = @Sendable (_ added: [any ContextDeclaration], _ others: [any ContextDeclaration],
                                         _ connection: any EngineConnection, _ context: DbContext, _ db: Db) throws -> Void

/// Thrown by `DbContext.sqlitePool()` for a context of another engine: the `Db` path catches it
/// and serves the call through the engine seam. Never reaches a user.
struct EngineRedirect: Error {
    let context: DbContext
}
