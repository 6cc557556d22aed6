// DicRecordPostgres: how live queries hear every client's commits on PostgreSQL — a statement
// trigger on each observed table NOTIFYs the `dicrecord` channel with the table's name, and a
// connection of the feed's own LISTENs there.
import DicRecord
import Foundation
import Synchronization

/// The change feed of one started PostgreSQL context (`EnginePool.changeFeed`).
///
/// - `readTables` asks the planner: the relations of `EXPLAIN (FORMAT JSON, VERBOSE)` (views
///   are seen through; tables read only inside a function are not).
/// - `watch` installs, once per table and for every client, `AFTER INSERT OR UPDATE OR DELETE OR
///   TRUNCATE … FOR EACH STATEMENT` trigger `dicrecord_notify` calling `pg_notify('dicrecord',
///   '"schema"."table"')`. PostgreSQL delivers a notification only when its transaction commits
///   (never for a rollback or a rolled-back savepoint) and sends one per table per transaction.
/// - A thread of the feed's own waits on the listening connection; a lost connection is opened
///   again every `latency`, and then every live query looks again (commits may have been missed).
final class PostgresChangeFeed: EngineChangeFeed, @unchecked Sendable {   // mutable state under `control` and `listener`
    static let channel = "dicrecord"
    static let trigger = "dicrecord_notify"

    private let configName: String
    private let latency: Duration
    private let connect: @Sendable () throws -> PostgresConnection
    private let onCommit: @Sendable (Set<String>?) -> Void
    /// For `readTables`, `resolve` and `watch`: a connection of the feed's own, so that they never
    /// join a transaction of the calling thread (a trigger installed there would roll back with it).
    private let control = Guarded<Control>(Control())
    private let listener = Guarded<Listener>(Listener())
    /// Held while the listening connection opens, so that a second `watch` waits until it listens.
    private let starting = NSLock()
    /// Held while a batch of notifications is handed over: `close()` takes it once it has set
    /// `closed`, so that no batch reaches the hub after it returns (a closed feed's thread keeps
    /// listening until it notices, and a feed opened meanwhile hears the same commits).
    private let delivering = NSLock()

    private struct Control {
        var connection: PostgresConnection?
        var closed = false
    }

    private struct Listener {
        var started = false
        var closed = false
    }

    init(configName: String, latency: Duration, connect: @escaping @Sendable () throws -> PostgresConnection,
         onCommit: @escaping @Sendable (Set<String>?) -> Void) {
        self.configName = configName
        self.latency = latency
        self.connect = connect
        self.onCommit = onCommit
    }

    /// The key a table is reported under: its schema and name, each quoted (`"public"."student"`).
    static func key(schema: String, table: String) -> String {
        SqlText.quote(schema) + "." + SqlText.quote(table)
    }

    func readTables(of sql: String, _ arguments: EncodedArguments) throws -> Set<String> {
        let plan = try onControl { try $0.rows("EXPLAIN (FORMAT JSON, VERBOSE) " + sql, arguments) }
        guard case .text(let json)? = plan.first?.first,
              let parsed = try? JSONSerialization.jsonObject(with: Data(json.utf8)) else {
            throw DicRecordError(.misuse, "PostgreSQL gave no plan to read the tables of the live query from", sql: sql, configName: configName)
        }
        var tables: Set<String> = []
        func visit(_ node: Any) {
            if let object = node as? [String: Any] {
                if let table = object["Relation Name"] as? String, let schema = object["Schema"] as? String {
                    tables.insert(Self.key(schema: schema, table: table))
                }
                object.values.forEach(visit)
            } else if let array = node as? [Any] {
                array.forEach(visit)
            }
        }
        visit(parsed)
        // A query whose plan names no table (one reading only inside a function) would never hear a commit.
        guard !tables.isEmpty else {
            throw DicRecordError(.misuse, "a live query on PostgreSQL must read tables its plan names; this one reads none (a table read inside a function is not seen)",
                                 sql: sql, configName: configName)
        }
        return tables
    }

    func resolve(_ names: [String]) throws -> [String] {
        try onControl { connection in
            try names.map { name in
                let row = try connection.rows("""
                    SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                    WHERE c.oid = to_regclass(?)
                    """, .positional([.text(name)])).first
                guard let row, row.count == 2, case .text(let schema) = row[0], case .text(let table) = row[1] else {
                    throw DicRecordError(.invalidArgument, "changes(in:): no table '\(name)' on the search path; PostgreSQL can only watch a table that exists",
                                         configName: configName)
                }
                return Self.key(schema: schema, table: table)
            }
        }
    }

    /// Counts the triggers this feed installed, with when it installed each (table key → count
    /// then): under a lock of its own, as `mark` must not wait for an install in progress.
    private let installs = Guarded<(count: UInt64, at: [String: UInt64])>((0, [:]))

    var mark: UInt64 { installs.withLock { $0.count } }

    func watch(_ tables: Set<String>, since mark: UInt64) throws -> Bool {
        let startedNow = try startListening()
        guard !tables.isEmpty else { return startedNow }
        try onControl { connection in
            let missing = try tables.sorted().filter { table in
                try connection.rows("SELECT 1 FROM pg_trigger WHERE tgname = ? AND tgrelid = to_regclass(?)",
                                    .positional([.text(Self.trigger), .text(table)])).isEmpty
            }
            guard !missing.isEmpty else { return }
            do {
                try connection.execute(script: "BEGIN")
                defer { if connection.isInTransaction { try? connection.execute(script: "ROLLBACK") } }
                // One installer at a time across clients: CREATE OR REPLACE FUNCTION run by two at once fails.
                try connection.execute(script: "SELECT pg_advisory_xact_lock(hashtext('dicrecord_notify'))")
                for table in missing {
                    // The table's schema, as PostgreSQL reports it (the key's first part).
                    let schema = try connection.rows("SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass(?)",
                                                     .positional([.text(table)]))
                    guard case .text(let name)? = schema.first?.first else {
                        throw DicRecordError(.invalidArgument, "the live query reads \(table), which no longer exists", configName: configName)
                    }
                    let function = SqlText.quote(name) + "." + Self.trigger
                    // Created when missing only: replacing one another role owns would fail.
                    if try connection.rows("SELECT 1 WHERE to_regprocedure(?) IS NOT NULL", .positional([.text(function + "()")])).isEmpty {
                        try connection.execute(script: """
                            CREATE OR REPLACE FUNCTION \(function)() RETURNS trigger LANGUAGE plpgsql AS $dicrecord$
                            BEGIN
                              PERFORM pg_notify('\(Self.channel)', '"' || replace(TG_TABLE_SCHEMA, '"', '""') || '"."' || replace(TG_TABLE_NAME, '"', '""') || '"');
                              RETURN NULL;
                            END $dicrecord$
                            """)
                    }
                    try connection.execute(script: """
                        DROP TRIGGER IF EXISTS \(Self.trigger) ON \(table);
                        CREATE TRIGGER \(Self.trigger) AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON \(table)
                          FOR EACH STATEMENT EXECUTE FUNCTION \(function)();
                        """)
                }
                try connection.execute(script: "COMMIT")
            }
            // The error as PostgreSQL gave it (its kind and SQLSTATE kept: a lock timeout is worth a retry).
            // Recorded before the control connection is let go: a second watch of the table, which
            // finds the trigger there, finds this too.
            installs.withLock { installs in
                for table in missing {
                    installs.count += 1
                    installs.at[table] = installs.count
                }
            }
        }
        // Commits before a trigger went in were not heard (one another client installed is not known here).
        return startedNow || installs.withLock { installs in tables.contains { (installs.at[$0] ?? 0) > mark } }
    }

    /// Runs `body` on the control connection, opened (or opened again, when it was lost) as needed.
    private func onControl<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try control.withLock { control in
            guard !control.closed else {
                throw DicRecordError(.notStarted, "config '\(configName)' was stopped: its live queries no longer listen", configName: configName)
            }
            if let open = control.connection, !open.isHealthy {
                open.close()
                control.connection = nil
            }
            let connection = try control.connection ?? connect()
            control.connection = connection
            return try body(connection)
        }
    }

    /// Opens the listening connection and starts its thread (once): when this returns, every
    /// commit from now on is heard. True when this call started it.
    private func startListening() throws -> Bool {
        // A second caller waits here until the first listens (or failed: then it tries itself).
        starting.lock()
        defer { starting.unlock() }
        let start = listener.withLock { state -> Bool in
            guard !state.started, !state.closed else { return false }
            return true
        }
        guard start else { return false }
        let connection = try listeningConnection()
        listener.withLock { $0.started = true }
        let thread = Thread { [self] in listen(on: connection) }
        thread.name = "DicRecord.postgresListener"
        thread.start()
        return true
    }

    private func listeningConnection() throws -> PostgresConnection {
        let connection = try connect()
        do {
            try connection.execute(script: "LISTEN \(Self.channel)")
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// The listening thread: hands each batch of notifications to the hub until `close()`.
    private func listen(on first: PostgresConnection) {
        var connection: PostgresConnection? = first
        let wait = Double(latency.components.seconds) + Double(latency.components.attoseconds) / 1e18
        while !listener.withLock({ $0.closed }) {
            guard let open = connection else {
                // Lost: try again every `latency` (waking often enough to notice `close()`); once
                // back, commits made meanwhile are unknown, so every live query looks again.
                var slept = 0.0
                while slept < wait, !listener.withLock({ $0.closed }) {
                    Thread.sleep(forTimeInterval: min(0.1, wait - slept))
                    slept += 0.1
                }
                guard !listener.withLock({ $0.closed }) else { break }
                if let again = try? listeningConnection() {
                    connection = again
                    delivering.lock()
                    if !listener.withLock({ $0.closed }) { onCommit(nil) }
                    delivering.unlock()
                }
                continue
            }
            do {
                // A short wait, so that `close()` is noticed soon.
                let payloads = try open.notifications(waitingUpTo: min(wait, 0.1))
                if !payloads.isEmpty {
                    delivering.lock()
                    if !listener.withLock({ $0.closed }) { onCommit(Set(payloads)) }
                    delivering.unlock()
                }
            } catch {
                open.close()
                connection = nil
            }
        }
        connection?.close()
    }

    func close() {
        listener.withLock { $0.closed = true }
        // A batch being handed over ends first (the hub never closes a feed from inside one).
        delivering.lock()
        delivering.unlock()
        control.withLock { control in
            control.closed = true
            control.connection?.close()
            control.connection = nil
        }
    }
}
