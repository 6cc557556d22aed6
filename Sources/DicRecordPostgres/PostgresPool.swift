// DicRecordPostgres: the connections of one PostgreSQL config, and `DbContext(postgres:)`.
import DicRecord
import Foundation

/// Up to `Options.poolSize` connections, opened as needed. The rule is SQLite's pool's: a thread
/// that holds one of this pool's connections (inside `tx`, `transaction`, `batch`, an `each`
/// callback) runs every call of this config on it, so nested calls join and never wait for
/// themselves; other threads take an idle connection or wait up to the busy timeout. A call from a
/// task inside an async transaction on this pool runs on that transaction's connection.
final class PostgresPool: EnginePool, @unchecked Sendable {   // mutable state guarded by `gate`
    let configName: String
    let dialect = EngineDialect(total: { "coalesce(sum(\($0))::double precision, 0)" })
    private let target: PostgresTarget
    private let options: DbContext.Options
    private let tracer: SqlTracer?
    private let gate = NSCondition()
    private var idle: [PostgresConnection] = []   // guarded by gate
    private var open = 0                           // guarded by gate
    private var closed = false                     // guarded by gate
    /// Every connection's session settings: a lock waits at most the busy timeout (then `.busy`,
    /// as on SQLite), and a readonly context's transactions are read-only.
    private var settings: [String] {
        // Milliseconds, within what the server takes (as SQLite's busy timeout is clamped).
        let wait = options.busyTimeout.isNaN ? 5_000 : min(max(1, options.busyTimeout * 1000), Double(Int32.max))
        var settings = ["SET lock_timeout = \(Int(wait))"]
        if options.readonly { settings.append("SET default_transaction_read_only = on") }
        return settings
    }
    /// The connection each thread holds, per pool.
    private static let held = ThreadSlot<[ObjectIdentifier: any EngineConnection]>()

    init(target: PostgresTarget, configName: String, options: DbContext.Options, tracer: SqlTracer? = nil) throws {
        self.target = target
        self.tracer = tracer
        self.configName = configName
        self.options = options
        // Connect once now: a server that is down fails `start()`, naming host and port.
        let first = try PostgresConnection(target, configName: configName, connectTimeout: options.connectTimeout, settings: settings, tracer: tracer, isolation: options.isolation)
        idle = [first]
        open = 1
    }

    func read<T>(_ body: (any EngineConnection) throws -> T) throws -> T { try write(body) }

    func write<T>(_ body: (any EngineConnection) throws -> T) throws -> T {
        let id = ObjectIdentifier(self)
        let slot = Self.held.current
        if let held = slot.value?[id] { return try body(held) }
        if let joined = try AsyncScope.join(poolID: id, { connection in
            // Held by this thread for the call, so that the calls nested in it join too.
            slot.value = (slot.value ?? [:]).merging([id: connection]) { $1 }
            defer { slot.value?[id] = nil }
            return try body(connection)
        }) {
            return joined
        }
        let connection = try acquire()
        slot.value = (slot.value ?? [:]).merging([id: connection]) { $1 }
        defer {
            slot.value?[id] = nil
            release(connection)
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

    func leaseWriter() throws -> any EngineConnection {
        try acquire()
    }

    func returnWriter(_ connection: any EngineConnection) {
        // Only this pool's own connections are leased from it.
        guard let connection = connection as? PostgresConnection else { return }
        if connection.isInTransaction { try? connection.executeRollback("ROLLBACK") }
        release(connection)
    }

    private func acquire() throws -> PostgresConnection {
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
                do {
                    return try PostgresConnection(target, configName: configName, connectTimeout: options.connectTimeout, settings: settings, tracer: tracer, isolation: options.isolation)
                } catch {
                    gate.lock()
                    open -= 1
                    gate.signal()
                    gate.unlock()
                    throw error
                }
            }
            if !gate.wait(until: deadline) {
                gate.unlock()
                throw DicRecordError(.busy,
                    "all \(options.poolSize) connections of config '\(configName)' stayed in use for the busy timeout (\(options.busyTimeout) s); raise Options.poolSize or busyTimeout",
                    configName: configName)
            }
        }
    }

    private func release(_ connection: PostgresConnection) {
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

    func close() {
        gate.lock()
        closed = true
        let closing = idle
        idle = []
        open -= closing.count
        gate.broadcast()
        gate.unlock()
        closing.forEach { $0.close() }
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

    private convenience init(target: PostgresTarget, configName: String, options: Options) throws {
        let factory = EngineFactory(description: "PostgreSQL \(target)") { configName, options, _, tracer in
            try PostgresPool(target: target, configName: configName, options: options, tracer: tracer)
        }
        try self.init(engine: factory, configName: configName, options: options)
    }
}
