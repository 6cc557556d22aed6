// DicRecordPostgres: the connections of one PostgreSQL config, and `DbContext(postgres:)`.
import DicRecord
import Foundation
import Synchronization

/// The connections of one PostgreSQL config: up to `Options.poolSize` to the primary, opened as
/// needed, and as many to each read replica. The rule is SQLite's pool's: a thread that holds one
/// of the primary's connections (inside `tx`, `transaction`, `batch`, an `each` callback) runs
/// every call of this config on it, so nested calls join and never wait for themselves; a call
/// from a task inside an async transaction runs on that transaction's connection; otherwise a
/// write takes an idle primary connection (or waits up to the busy timeout), and a read goes to
/// a replica that has replayed this context's last commit (see `read`), else to the primary.
final class PostgresPool: EnginePool, @unchecked Sendable {   // mutable state in the endpoints and `lastWrite`, each guarded
    let configName: String
    let dialect = EngineDialect(total: { "coalesce(sum(\($0))::double precision, 0)" })
    private let options: DbContext.Options
    private let primary: PostgresEndpoint
    private let replicas: [PostgresReplica]
    /// The WAL position of this context's last commit on the primary (0: none yet): a read
    /// goes to a replica only once it has replayed that far.
    private let lastWrite = Guarded<UInt64>(0)
    /// The replica the next read tries first (round robin).
    private let nextReplica = Atomic<Int>(0)
    /// The connection each thread holds, per pool.
    private static let held = ThreadSlot<[ObjectIdentifier: any EngineConnection]>()
    /// The replica connection a thread reads on, per pool, with the WAL position it had replayed:
    /// the reads nested in that read (a page's count and rows, an `each` callback's queries) join
    /// it while that is enough; writes still go to the primary.
    private static let reading = ThreadSlot<[ObjectIdentifier: (connection: PostgresConnection, position: UInt64)]>()

    init(primary: PostgresTarget, replicas: [PostgresTarget] = [], configName: String, options: DbContext.Options, tracer: SqlTracer? = nil) throws {
        self.configName = configName
        self.options = options
        self.primary = PostgresEndpoint(target: primary, configName: configName, options: options, tracer: tracer)
        self.replicas = replicas.map { PostgresReplica(PostgresEndpoint(target: $0, configName: configName, options: options, tracer: tracer, replica: true)) }
        // Connect once now: a primary that is down fails `start()`, naming host and port. A
        // replica that is down does not: reads go elsewhere until it answers.
        try self.primary.connectFirst()
    }

    // MARK: Writes and the primary

    func write<T>(_ body: (any EngineConnection) throws -> T) throws -> T {
        try onPrimary(writing: true, body)
    }

    /// `writing`: a write call, which may write whatever its SQL looks like (`select f()`,
    /// `select … into`): its commit's position is taken. A read that fell back here is judged by
    /// its statements (`PostgresConnection.mayHaveWritten`).
    private func onPrimary<T>(writing: Bool, _ body: (any EngineConnection) throws -> T) throws -> T {
        let id = ObjectIdentifier(self)
        let slot = Self.held.current
        if let held = slot.value?[id] {
            let before = (held as? PostgresConnection)?.statementsRun ?? 0
            defer {
                // An autocommit write on a connection this thread already holds (in an `each`
                // callback, not in a transaction) is published now, not when the outer call ends.
                if let connection = held as? PostgresConnection {
                    if writing && connection.statementsRun > before { connection.mayHaveWritten = true }
                    noteCommits(on: connection)
                }
            }
            return try body(held)
        }
        if let joined = try AsyncScope.join(poolID: id, { connection in
            // Held by this thread for the call, so that the calls nested in it join too.
            slot.value = (slot.value ?? [:]).merging([id: connection]) { $1 }
            defer { slot.value?[id] = nil }
            return try body(connection)
        }) {
            return joined
        }
        let connection = try primary.acquire()
        let before = connection.statementsRun
        slot.value = (slot.value ?? [:]).merging([id: connection]) { $1 }
        defer {
            slot.value?[id] = nil
            // A write call that ran no statement to the end (the primary went away first) committed nothing.
            if writing && connection.statementsRun > before { connection.mayHaveWritten = true }
            noteCommits(on: connection)
            primary.release(connection)
        }
        let result: T
        do {
            result = try body(connection)
        } catch {
            if connection.transactionDepth == 0 && connection.isInTransaction { try? connection.executeRollback("ROLLBACK") }
            throw error
        }
        // A transaction begun by raw SQL and left open would be joined by the next caller.
        if connection.transactionDepth == 0 && connection.isInTransaction {
            try? connection.executeRollback("ROLLBACK")
            throw DicRecordError(.misuse,
                "a transaction begun by raw SQL (BEGIN or SAVEPOINT) was left open on config '\(configName)' and has been rolled back; use tx or transaction",
                configName: configName)
        }
        return result
    }

    /// After a call on the primary that may have committed something: the WAL position now, so
    /// that this context's reads wait for replicas to replay it (only with replicas: one round trip).
    private func noteCommits(on connection: PostgresConnection) {
        guard !replicas.isEmpty, connection.mayHaveWritten, !connection.isInTransaction else { return }
        guard connection.isHealthy, let position = try? connection.walInsertPosition() else {
            // The position is unknown: reads stay on the primary until one is taken again.
            lastWrite.withLock { $0 = .max }
            return
        }
        connection.mayHaveWritten = false
        lastWrite.withLock { $0 = $0 == .max ? position : max($0, position) }
    }

    func leaseWriter() throws -> any EngineConnection {
        try primary.acquire()
    }

    func returnWriter(_ connection: any EngineConnection) {
        // Only this pool's own connections are leased from it.
        guard let connection = connection as? PostgresConnection else { return }
        if connection.isInTransaction { try? connection.executeRollback("ROLLBACK") }
        noteCommits(on: connection)
        primary.release(connection)
    }

    // MARK: Reads and the replicas

    /// A read: on the connection this thread or task holds if any (a transaction's reads stay in
    /// it); with `.primary`, or without replicas, on the primary; otherwise on the next replica,
    /// round robin, that answers, lags at most `Options.maxReplicaLag` and has replayed this
    /// context's last commit (and the route's position): read-your-writes. A replica that does
    /// not answer is skipped for `PostgresReplica.retryAfter` seconds and its read goes elsewhere,
    /// with no error; when none qualifies, the primary serves.
    func read<T>(_ route: ReadRoute, _ body: (any EngineConnection) throws -> T) throws -> T {
        let id = ObjectIdentifier(self)
        if replicas.isEmpty || route == .primary || Self.held.current.value?[id] != nil || AsyncScope.isInTransaction(poolID: id) {
            return try onPrimary(writing: false, body)
        }
        var needed = lastWrite.withLock { $0 }
        if case .atLeast(let position) = route { needed = max(needed, position) }
        let reading = Self.reading.current
        if let joined = reading.value?[id] {
            // Nested in a read on a replica (a page's queries, an `each` callback's): it joins
            // that connection only if it had replayed what this read needs (the callback may
            // have written since); else the primary serves it.
            if joined.position >= needed { return try body(joined.connection) }
            return try onPrimary(writing: false, body)
        }
        guard needed != .max else { return try onPrimary(writing: false, body) }
        let first = nextReplica.wrappingAdd(1, ordering: .relaxed).oldValue
        for offset in 0..<replicas.count {
            let replica = replicas[Int(UInt(bitPattern: first &+ offset) % UInt(replicas.count))]
            guard let (connection, position) = replica.connection(replayedAtLeast: needed, maxLag: options.maxReplicaLag) else { continue }
            let before = connection.statementsRun
            reading.value = (reading.value ?? [:]).merging([id: (connection, position)]) { $1 }
            let outcome = Result { try body(connection) }
            reading.value?[id] = nil
            // Decided before the connection goes back (another thread may take it at once).
            var elsewhere = false
            if case .failure(let error) = outcome, connection.statementsRun == before {
                if !connection.isHealthy {
                    // The replica went away before the read returned anything: it goes elsewhere.
                    elsewhere = true
                    replica.lost()
                } else if (error as? DatabaseError)?.sqlState == "25006" {
                    // The "read" writes (`select nextval(…)`, a function that inserts): the primary runs it.
                    elsewhere = true
                }
            }
            replica.endpoint.release(connection)
            if !elsewhere { return try outcome.get() }
            if case .failure(let error) = outcome, (error as? DatabaseError)?.sqlState == "25006" {
                return try onPrimary(writing: true, body)
            }
        }
        return try onPrimary(writing: false, body)
    }

    func consistencyToken() -> String? {
        guard !replicas.isEmpty else { return nil }
        return ReadRoute.token(lastWrite.withLock { $0 })
    }

    func close() {
        primary.close()
        replicas.forEach { $0.endpoint.close() }
    }

    func changeFeed(latency: Duration, _ onCommit: @escaping @Sendable (Set<String>?) -> Void) throws -> any EngineChangeFeed {
        PostgresChangeFeed(configName: configName, latency: latency, connect: { [primary] in try primary.connectOutsidePool() }, onCommit: onCommit)
    }
}

/// The connections to one server (the primary, or a replica): up to `Options.poolSize`, opened
/// as needed, handed out one thread at a time.
final class PostgresEndpoint: @unchecked Sendable {   // mutable state guarded by `gate`
    let target: PostgresTarget
    private let configName: String
    private let options: DbContext.Options
    private let tracer: SqlTracer?
    private let isReplica: Bool
    private let gate = NSCondition()
    private var idle: [PostgresConnection] = []   // guarded by gate
    private var open = 0                           // guarded by gate
    private var closed = false                     // guarded by gate

    init(target: PostgresTarget, configName: String, options: DbContext.Options, tracer: SqlTracer?, replica: Bool = false) {
        self.target = target
        self.configName = configName
        self.options = options
        self.tracer = tracer
        self.isReplica = replica
    }

    /// Every connection's session settings: a lock waits at most the busy timeout (then `.busy`,
    /// as on SQLite), and a readonly context's transactions are read-only.
    private var settings: [String] {
        // Milliseconds, within what the server takes (as SQLite's busy timeout is clamped).
        let wait = options.busyTimeout.isNaN ? 5_000 : min(max(1, options.busyTimeout * 1000), Double(Int32.max))
        var settings = ["SET lock_timeout = \(Int(wait))"]
        if options.readonly { settings.append("SET default_transaction_read_only = on") }
        return settings
    }

    private func connect() throws -> PostgresConnection {
        // A replica that is down must not hold a read up for long: it is asked for a few seconds at most.
        let timeout = isReplica ? min(options.connectTimeout, 2) : options.connectTimeout
        return try PostgresConnection(target, configName: configName, connectTimeout: timeout, settings: settings, tracer: tracer,
                                      isolation: options.isolation)
    }

    /// A connection of the endpoint's settings that the pool does not count or lend (a live-query
    /// feed's own).
    func connectOutsidePool() throws -> PostgresConnection {
        try PostgresConnection(target, configName: configName, connectTimeout: options.connectTimeout, settings: settings, tracer: nil,
                               isolation: options.isolation)
    }

    func connectFirst() throws {
        let first = try connect()
        gate.lock()
        idle.append(first)
        open += 1
        gate.unlock()
    }

    func acquire() throws -> PostgresConnection {
        gate.lock()
        let deadline = Date(timeIntervalSinceNow: options.busyTimeout)
        while true {
            if closed {
                gate.unlock()
                throw DicRecordError(.notStarted, "config '\(configName)' is not started", configName: configName)
            }
            if let connection = idle.popLast() {
                gate.unlock()
                if connection.isHealthy { return connection }
                // Dropped while idle (server restart, network): replaced by a new one.
                connection.close()
                gate.lock()
                open -= 1
                continue
            }
            if open < max(1, options.poolSize) {
                open += 1
                gate.unlock()
                return try openCounted()
            }
            if !gate.wait(until: deadline) {
                gate.unlock()
                throw DicRecordError(.busy,
                    "all \(options.poolSize) connections of config '\(configName)' to \(target) stayed in use for the busy timeout (\(options.busyTimeout) s); raise Options.poolSize or busyTimeout",
                    configName: configName)
            }
        }
    }

    /// A connection without waiting: an idle one, or a new one while fewer than `poolSize` are
    /// open; nil when all are in use (a replica then lets the read go elsewhere).
    func tryAcquire() throws -> PostgresConnection? {
        gate.lock()
        while let connection = idle.popLast() {
            if connection.isHealthy {
                gate.unlock()
                return connection
            }
            connection.close()
            open -= 1
        }
        guard !closed, open < max(1, options.poolSize) else {
            gate.unlock()
            return nil
        }
        open += 1
        gate.unlock()
        return try openCounted()
    }

    /// Connects a connection already counted in `open` (the gate not held); uncounts it on failure.
    private func openCounted() throws -> PostgresConnection {
        do {
            return try connect()
        } catch {
            gate.lock()
            open -= 1
            gate.signal()
            gate.unlock()
            throw error
        }
    }

    /// Closes the idle connections: the server went away, and they would each fail once before
    /// being replaced.
    func dropIdle() {
        gate.lock()
        let dropping = idle
        idle = []
        open -= dropping.count
        gate.broadcast()
        gate.unlock()
        dropping.forEach { $0.close() }
    }

    func release(_ connection: PostgresConnection) {
        // A read that failed inside its own transaction (a page's) leaves it aborted: never handed on so.
        if connection.isHealthy && connection.isInTransaction { try? connection.executeRollback("ROLLBACK") }
        gate.lock()
        defer { gate.unlock() }
        if closed || !connection.isHealthy {
            connection.close()   // a lost connection is replaced by the next acquire
            open -= 1
        } else {
            connection.transactionDepth = 0
            idle.append(connection)
        }
        gate.signal()
    }

    /// Closes the idle connections; those in use close when they are handed back.
    func close() {
        gate.lock()
        closed = true
        gate.unlock()
        dropIdle()
    }
}

/// A read replica: its connections and what DicRecord last learnt of it.
final class PostgresReplica: Sendable {
    let endpoint: PostgresEndpoint
    private struct Health {
        /// The WAL position it had replayed when last asked, and when that was.
        var replayed: UInt64 = 0
        var lag: Double = 0
        var checked: ContinuousClock.Instant?
        /// Skipped until then: it did not answer.
        var downUntil: ContinuousClock.Instant?
    }
    private let health = Guarded(Health())
    /// Seconds a replica that did not answer is left alone before it is asked again.
    static let retryAfter: Double = 1
    /// Seconds a known lag is trusted before the replica is asked again.
    static let lagFreshness: Double = 1

    init(_ endpoint: PostgresEndpoint) {
        self.endpoint = endpoint
    }

    /// One of its connections, and the WAL position it had replayed, when it is up, has replayed
    /// `position` and lags at most `maxLag` seconds; nil otherwise (asking it when what is known
    /// is not enough). A replica whose connections are all in use lets the read go elsewhere.
    func connection(replayedAtLeast position: UInt64, maxLag: Double) -> (PostgresConnection, UInt64)? {
        let now = ContinuousClock.now
        let known = health.withLock { $0 }
        if let down = known.downUntil, now < down { return nil }
        let fresh = known.checked.map { now - $0 < .seconds(Self.lagFreshness) } ?? false
        if fresh && known.lag > maxLag { return nil }
        let connection: PostgresConnection
        do {
            guard let idle = try endpoint.tryAcquire() else { return nil }
            connection = idle
        } catch {
            markDown()
            return nil
        }
        if fresh && known.replayed >= position && known.downUntil == nil { return (connection, known.replayed) }
        do {
            let (replayed, lag) = try connection.replayPosition()
            health.withLock { health in
                health.replayed = max(health.replayed, replayed)
                health.lag = lag
                health.checked = now
                health.downUntil = nil
            }
            if replayed >= position && lag <= maxLag { return (connection, replayed) }
        } catch {
            let gone = !connection.isHealthy
            endpoint.release(connection)
            if gone { lost() } else { markDown(for: Self.notAReplicaPause) }
            return nil
        }
        endpoint.release(connection)
        return nil
    }

    /// Seconds a server named as a replica that is not replaying WAL (a primary, a promoted
    /// replica) is left alone.
    static let notAReplicaPause: Double = 30

    /// The replica went away: its idle connections are dropped, and it is asked again later.
    func lost() {
        endpoint.dropIdle()
        markDown()
    }

    func markDown(for seconds: Double = PostgresReplica.retryAfter) {
        health.withLock { $0.downUntil = ContinuousClock.now + .seconds(seconds) }
    }
}

extension DbContext {
    /// A context on a PostgreSQL server, named by a URL (`postgresql://user:password@host:port/database`,
    /// libpq's form, `?sslmode=…` and other options included). `start()` connects once, failing
    /// with the host and port when the server cannot be reached within `options.connectTimeout`.
    /// ```swift
    /// let pg = try DbContext(postgres: "postgresql://app@127.0.0.1:5432/shop", configName: "pg")
    /// try pg.start()
    /// let rows = try Db.use("pg").find("select * from item where price > ?", 10)
    /// ```
    public convenience init(postgres url: String, configName: String = "main", options: Options = Options()) throws {
        try self.init(target: PostgresTarget(url: url), configName: configName, options: options)
    }

    /// A context on a PostgreSQL server given by its parts.
    /// ```swift
    /// let pg = try DbContext(postgresHost: "127.0.0.1", port: 5432, user: "app", password: "secret", database: "shop")
    /// ```
    public convenience init(postgresHost host: String, port: Int = 5432, user: String? = nil, password: String? = nil,
                            database: String? = nil, configName: String = "main", options: Options = Options()) throws {
        try self.init(target: PostgresTarget(host: host, port: port, user: user, password: password, database: database),
                      configName: configName, options: options)
    }

    /// A context on a PostgreSQL primary and its streaming read replicas: writes and transactions
    /// run on the primary; reads outside a transaction on the replicas, round robin, each only
    /// once it has replayed this context's last commit (read-your-writes, by WAL position), else
    /// on the primary. A replica that is down or lags more than `options.maxReplicaLag` is
    /// skipped, with no error; it serves again when it answers. `Db.primary` reads on the primary;
    /// `consistencyToken()` and `after(_:)` carry read-your-writes to another process.
    /// ```swift
    /// let pg = try DbContext(postgres: "postgresql://app@db1/shop", replicas: ["postgresql://app@db2/shop"], configName: "pg")
    /// try pg.start()
    /// try Db.use("pg").update("update item set price = ? where id = ?", 9.5, 1)   // on the primary
    /// let item = try Db.use("pg").findById("item", 1)                             // a replica that has it, or the primary
    /// ```
    public convenience init(postgres url: String, replicas: [String], configName: String = "main", options: Options = Options()) throws {
        try self.init(target: PostgresTarget(url: url), replicas: replicas.map(PostgresTarget.init(url:)), configName: configName, options: options)
    }

    private convenience init(target: PostgresTarget, replicas: [PostgresTarget] = [], configName: String, options: Options) throws {
        let description = "PostgreSQL \(target)" + (replicas.isEmpty ? "" : " with replicas " + replicas.map { "\($0)" }.joined(separator: ", "))
        let factory = EngineFactory(description: description) { configName, options, _, tracer in
            try PostgresPool(primary: target, replicas: replicas, configName: configName, options: options, tracer: tracer)
        }
        try self.init(engine: factory, configName: configName, options: options)
    }
}
