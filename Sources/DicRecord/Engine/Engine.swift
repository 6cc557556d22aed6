// Engine: the seam a database engine other than the built-in SQLite one plugs into (PostgreSQL,
// in DicRecordPostgres). `Db` drives such an engine only through these protocols: rows come back
// as values, and the records, transactions and joining rules stay in `Db/` and `Context/`.
// SQLite's own `Connection` implements `EngineConnection` too (schema work, parity tests); its
// hot paths (`find`, `each`, binding in place) use its statements directly.
import Foundation

/// One connection of an engine, lent to one thread (or one async transaction) at a time.
package protocol EngineConnection: AnyObject {
    var configName: String { get }
    /// Depth of `tx`/`transaction` nesting: 0 outside, 1 in BEGIN, 2+ in SAVEPOINTs.
    var transactionDepth: Int { get set }
    /// What the layers above must take back in memory if a transaction rolls back (see `Connection.undoLog`).
    var undoLog: AnyObject? { get set }
    /// Whether the server has a transaction open on this connection.
    var isInTransaction: Bool { get }
    /// The statement that begins an outermost transaction (SQLite: `BEGIN IMMEDIATE`).
    var beginStatement: String { get }
    /// Runs one statement with `arguments`, handing each row's column names and values to `row`
    /// (return false to stop reading); returns the result's column names and the rows it changed.
    @discardableResult
    func execute(_ sql: String, _ arguments: EncodedArguments,
                 row: ((_ columns: [String], _ values: [DatabaseValue]) throws -> Bool)?) throws -> (columns: [String], changes: Int)
    /// `execute` for `each`: a query whose rows are read a batch at a time where the engine can
    /// (PostgreSQL: a cursor), so that a large result never sits in memory whole and the callback
    /// may make calls on this connection between rows.
    @discardableResult
    func stream(_ sql: String, _ arguments: EncodedArguments,
                row: (_ columns: [String], _ values: [DatabaseValue]) throws -> Bool) throws -> [String]
    /// Runs `sql` once per argument list (a batch, inside the caller's transaction), sending them
    /// together where the engine can (PostgreSQL's pipeline mode); returns the rows each changed.
    /// A failure throws `EngineBatchFailure`, naming the list that failed. `row` gets the rows a
    /// statement returns (`RETURNING`), with the index of its argument list; where it throws, the
    /// batch fails at that index.
    func executeBatch(_ sql: String, _ rows: [EncodedArguments],
                      row: ((_ index: Int, _ columns: [String], _ values: [DatabaseValue]) throws -> Void)?) throws -> [Int]
    /// Runs a statement that undoes work (ROLLBACK, ROLLBACK TO): it runs even when the context stops.
    func executeRollback(_ sql: String) throws

    // The schema as the engine's catalog tells it: what schema upkeep, migrations and upserts ask.
    // Tables are named as DicRecord's DDL names them (quoted, as declared).

    /// The words of DDL this engine differs in.
    var schemaDialect: SchemaDialect { get }
    /// Whether `table` exists.
    func tableExists(_ table: String) throws -> Bool
    /// The table's column names, in table order (empty when there is no such table).
    func columnNames(of table: String) throws -> [String]
    /// The names of the table's indexes.
    func indexNames(of table: String) throws -> [String]
    /// The columns of each of the table's unique indexes (not the primary key, not partial), oldest first.
    func uniqueKeys(of table: String) throws -> [[String]]
    /// Rows with their own values for `key` were inserted into `table`: an engine whose generated
    /// keys come from a sequence moves it past them (PostgreSQL's identity), as SQLite's
    /// AUTOINCREMENT continues after the largest key by itself.
    func keysWereSupplied(table: String, key: String) throws
    /// The version the database's own migrations have brought it to (0: none).
    func databaseVersion() throws -> Int
    func setDatabaseVersion(_ version: Int) throws
}

extension EngineConnection {
    /// Runs `sql` with `values`, returning the rows it changed.
    @discardableResult
    package func perform(_ sql: String, _ values: [DatabaseValue] = []) throws -> Int {
        try execute(sql, .positional(values), row: nil).changes
    }

    /// The rows of `sql` with `values`.
    package func fetchRows(_ sql: String, _ values: [DatabaseValue] = []) throws -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        try execute(sql, .positional(values)) { _, row in
            rows.append(row)
            return true
        }
        return rows
    }

    /// BEGIN … COMMIT, or a savepoint inside a transaction the caller holds (a model registered
    /// from inside `tx`), taking the engine's schema lock first; rolled back whole if `body`
    /// throws. Inside, the depth counts it: a `tx` in a migration is a savepoint of it.
    package func inSchemaTransaction(_ body: () throws -> Void) throws {
        let depth = transactionDepth
        let nested = depth > 0 || isInTransaction
        try perform(nested ? "SAVEPOINT dicrecord_schema" : schemaDialect.beginStatement ?? beginStatement)
        transactionDepth = depth + 1
        do {
            for statement in schemaDialect.lockStatements { try perform(statement) }
            try body()
            transactionDepth = depth
            try perform(nested ? "RELEASE dicrecord_schema" : "COMMIT")
            // Saves made in it (a migration's) are kept, or belong to the enclosing transaction.
            keepSaves(committedAt: depth)
        } catch {
            transactionDepth = depth
            undoSaves(rolledBackAt: depth)
            if isInTransaction {
                if nested {
                    try? executeRollback("ROLLBACK TO dicrecord_schema")
                    try? executeRollback("RELEASE dicrecord_schema")
                } else {
                    try? executeRollback("ROLLBACK")
                }
            }
            throw error
        }
    }
}

/// The DDL words an engine differs in, for the tables DicRecord makes and keeps (schema upkeep).
package struct SchemaDialect: Sendable {
    /// The column type of each storage class (`INTEGER` / `bigint`, …).
    package var integer: String, real: String, text: String, blob: String
    /// The implicit `id` key's definition.
    package var implicitId: String
    /// A constraint on a text key that makes it match case-insensitively, where the engine has one.
    package var caseInsensitiveKey: String
    /// A BLOB literal.
    package var blobLiteral: @Sendable (Data) -> String
    /// Begins a schema transaction, when it differs from the engine's `beginStatement`.
    package var beginStatement: String?
    /// Run first in a schema transaction: keeps two processes from upkeeping at once.
    package var lockStatements: [String]
    /// The longest name the engine keeps (PostgreSQL cuts longer ones to 63 bytes).
    package var maxNameLength: Int
    /// Whether a table whose ALTER is refused is rebuilt (SQLite), rather than the refusal thrown.
    package var rebuildsTables: Bool
    /// Whether models' `searchColumns` are kept in a full-text index (SQLite's FTS5).
    package var fullTextSearch: Bool

    package init(integer: String, real: String, text: String, blob: String, implicitId: String, caseInsensitiveKey: String,
                 blobLiteral: @escaping @Sendable (Data) -> String, beginStatement: String? = nil, lockStatements: [String],
                 maxNameLength: Int, rebuildsTables: Bool, fullTextSearch: Bool) {
        self.integer = integer
        self.real = real
        self.text = text
        self.blob = blob
        self.implicitId = implicitId
        self.caseInsensitiveKey = caseInsensitiveKey
        self.blobLiteral = blobLiteral
        self.beginStatement = beginStatement
        self.lockStatements = lockStatements
        self.maxNameLength = maxNameLength
        self.rebuildsTables = rebuildsTables
        self.fullTextSearch = fullTextSearch
    }

    /// `name` as the engine keeps it: a name longer than it takes ends in a hash of the whole
    /// name instead, so two long names never become one (and a kept name is found again).
    package func name(_ name: String) -> String {
        guard name.utf8.count > maxNameLength else { return name }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a, stable across runs
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let suffix = "_" + String(hash, radix: 16)
        var head = Substring(name)
        while head.utf8.count > maxNameLength - suffix.utf8.count { head = head.dropLast() }
        return head + suffix
    }

    package func typeName(_ type: StorageType) -> String {
        switch type {
        case .integer: integer
        case .real: real
        case .text: text
        case .blob: blob
        }
    }
}

/// Where a read may run, on an engine with read replicas.
package enum ReadRoute: Sendable, Equatable {
    /// A replica that has replayed this context's last commit, else the primary.
    case any
    /// The primary.
    case primary
    /// As `.any`, and the replica has also replayed this WAL position (a token from elsewhere).
    case atLeast(UInt64)
}

/// A batch item that failed: its position in the batch and the error.
package struct EngineBatchFailure: Error {
    package let index: Int
    package let error: any Error

    package init(index: Int, error: any Error) {
        self.index = index
        self.error = error
    }
}

/// The words an engine's SQL differs in, where `Db` and the models write SQL themselves (schema
/// DDL: `SchemaDialect`). SQLite's are `EngineDialect.sqlite`.
package struct EngineDialect: Sendable {
    /// SQLite's `total(x)`: the sum as a floating-point number, 0.0 over no rows.
    package var total: @Sendable (_ expression: String) -> String

    package init(total: @escaping @Sendable (String) -> String) {
        self.total = total
    }
}

/// The connections of one started context of an engine: the rule is `ConnectionPool`'s — a thread
/// (or task) that holds a connection of this pool runs every call of this config on it, so
/// nested calls join and never wait for themselves.
package protocol EnginePool: AnyObject, Sendable {
    var configName: String { get }
    var dialect: EngineDialect { get }
    /// Runs `body` on a connection fit for reading (joining the one this thread holds), chosen by
    /// `route` where the engine has read replicas.
    func read<T>(_ route: ReadRoute, _ body: (any EngineConnection) throws -> T) throws -> T
    /// What this context has committed so far, as a token a read can wait for (`ReadRoute.atLeast`);
    /// nil for an engine without replicas.
    func consistencyToken() -> String?
    /// Runs `body` on a connection fit for writing (joining the one this thread holds); a
    /// transaction pins that connection to the thread for its duration.
    func write<T>(_ body: (any EngineConnection) throws -> T) throws -> T
    /// For an async transaction: a connection fit for writing, bound to no thread until
    /// `returnWriter` (calls of the transaction's task join it through `AsyncScope.join`).
    func leaseWriter() throws -> any EngineConnection
    func returnWriter(_ connection: any EngineConnection)
    /// Closes the idle connections; those in use close when they are handed back.
    func close()
    /// For live queries: starts hearing the commits of every client of the database (PostgreSQL:
    /// a listening connection of its own). `onCommit` gets the tables a commit wrote (keys as
    /// `EngineChangeFeed.readTables` gives them), or nil when commits may have been missed (the
    /// listening connection was lost and is back): every live query looks again.
    func changeFeed(latency: Duration, _ onCommit: @escaping @Sendable (Set<String>?) -> Void) throws -> any EngineChangeFeed
}

/// How a context of another engine hears commits for its live queries (`Context/ChangeHub.swift`
/// drives it; DicRecordPostgres's is triggers that NOTIFY and a connection that LISTENs).
package protocol EngineChangeFeed: AnyObject, Sendable {
    /// The tables `sql` reads, as the keys commits will be reported under.
    func readTables(of sql: String, _ arguments: EncodedArguments) throws -> Set<String>
    /// The keys of tables named as in SQL (`changes(in:)`), in order; throws for one that does not exist.
    func resolve(_ names: [String]) throws -> [String]
    /// From now on, every commit that writes one of `tables` (keys) is reported. Idempotent.
    /// Returns true when commits to them made since `mark` (a `mark` taken earlier) may not have
    /// been reported: it started listening, or what reports them was installed, after it.
    /// `watch([], since:)` only listens.
    func watch(_ tables: Set<String>, since mark: UInt64) throws -> Bool
    /// Where the feed stands: a later `watch(_:since:)` tells whether anything it reports now was
    /// set up after this. Never waits for a `watch` in progress.
    var mark: UInt64 { get }
    /// Stops listening (the database keeps what `watch` installed).
    func close()
}

/// How a context of another engine opens its pool at `start()` (DicRecordPostgres's
/// `DbContext(postgres:)` makes one).
package struct EngineFactory: Sendable {
    /// The engine's name and where it connects, for messages (`PostgreSQL postgresql://…`).
    package let description: String
    /// Opens the pool; `tracer` is the context's (`showSql`, `Options.onSql`): statements are reported to it.
    package let open: @Sendable (_ configName: String, _ options: DbContext.Options, _ registry: Converters, _ tracer: SqlTracer) throws -> any EnginePool

    package init(description: String, open: @escaping @Sendable (String, DbContext.Options, Converters, SqlTracer) throws -> any EnginePool) {
        self.description = description
        self.open = open
    }
}
