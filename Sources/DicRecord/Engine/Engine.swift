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
    /// Runs a statement that undoes work (ROLLBACK, ROLLBACK TO): it runs even when the context stops.
    func executeRollback(_ sql: String) throws
}

/// The words an engine's SQL differs in, where `Db` writes SQL itself.
package struct EngineDialect: Sendable {
    /// Whether INSERT takes `RETURNING "key"` to give the generated key back (PostgreSQL), rather
    /// than the connection telling the last inserted row id (SQLite).
    package var returnsGeneratedKeys: Bool

    package init(returnsGeneratedKeys: Bool) {
        self.returnsGeneratedKeys = returnsGeneratedKeys
    }
}

/// The connections of one started context of an engine: the rule is `ConnectionPool`'s — a thread
/// (or task) that holds a connection of this pool runs every call of this config on it, so
/// nested calls join and never wait for themselves.
package protocol EnginePool: AnyObject, Sendable {
    var configName: String { get }
    var dialect: EngineDialect { get }
    /// Runs `body` on a connection fit for reading (joining the one this thread holds).
    func read<T>(_ body: (any EngineConnection) throws -> T) throws -> T
    /// Runs `body` on a connection fit for writing (joining the one this thread holds); a
    /// transaction pins that connection to the thread for its duration.
    func write<T>(_ body: (any EngineConnection) throws -> T) throws -> T
    /// Closes the idle connections; those in use close when they are handed back.
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
