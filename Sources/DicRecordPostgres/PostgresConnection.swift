// DicRecordPostgres: one libpq connection — connecting, preparing (cached per connection),
// binding, reading results and mapping PostgreSQL's errors. The only file that calls PQ*.
import CPostgreSQL
import DicRecord
import Foundation

/// Where to connect: a `postgresql://user:password@host:port/database` URL, or its parts.
public struct PostgresTarget: Sendable, CustomStringConvertible {
    /// libpq's connection keywords (`host`, `port`, `user`, `password`, `dbname`, …).
    let keywords: [(String, String)]
    /// The URL as given (with the password hidden), for messages.
    public let description: String

    /// A `postgresql://` (or `postgres://`) URL; libpq reads it, including `?sslmode=…` options.
    public init(url: String) {
        keywords = [("dbname", url)]
        var shown = url
        if let at = url.range(of: "@"), let scheme = url.range(of: "://"),
           let colon = url[scheme.upperBound..<at.lowerBound].firstIndex(of: ":") {
            shown = String(url[..<url.index(after: colon)]) + "***" + String(url[at.lowerBound...])
        }
        description = shown
    }

    /// The parts of a connection; nil parts take libpq's defaults (`PGHOST`, `PGPORT`, …).
    public init(host: String, port: Int = 5432, user: String? = nil, password: String? = nil, database: String? = nil) {
        var keywords = [("host", host), ("port", String(port))]
        if let user { keywords.append(("user", user)) }
        if let password { keywords.append(("password", password)) }
        if let database { keywords.append(("dbname", database)) }
        self.keywords = keywords
        description = "postgresql://\(user.map { $0 + "@" } ?? "")\(host):\(port)/\(database ?? "")"
    }
}

/// One PostgreSQL connection. Like SQLite's `Connection`, one thread uses it at a time (its pool
/// lends it out), which is what libpq asks of a `PGconn`.
final class PostgresConnection: EngineConnection, @unchecked Sendable {   // one thread at a time, by the pool's lending
    package let configName: String
    /// Where executed statements are reported (`showSql`, `Options.onSql`), as on SQLite.
    private let tracer: SqlTracer?
    private let handle: OpaquePointer
    private var prepared: [ExactText: Prepared] = [:]  // by the SQL's bytes (see ExactText)
    /// `withParameters`' buffers, kept between statements (nil while one is using them).
    private var scratch: ParameterBuffers? = ParameterBuffers()
    private var nextName = 0
    /// Whether a statement that may write ran since the pool last took the WAL position.
    var mayHaveWritten = false
    /// Statements run to completion on this connection (a read that failed before any did can go elsewhere).
    private(set) var statementsRun = 0
    /// The sequence behind each `table\0key` asked about (nil: none), for `keysWereSupplied`.
    var sequences: [String: String?] = [:]
    /// Statements dropped from the cache in a failed transaction: deallocated with the next eviction.
    private var staleNames: [String] = []
    private var isClosed = false
    /// Depth of transaction nesting: 0 outside, 1 in BEGIN, 2+ in SAVEPOINTs.
    package var transactionDepth = 0
    package var undoLog: AnyObject?
    /// `BEGIN ISOLATION LEVEL …`: the context's `Options.isolation`.
    package let beginStatement: String
    /// Whether a transaction is open (or failed and not yet rolled back) on the server.
    package var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    @discardableResult
    package func execute(_ sql: String, _ arguments: EncodedArguments,
                         row: ((_ columns: [String], _ values: [DatabaseValue]) throws -> Bool)?) throws -> (columns: [String], changes: Int) {
        try run(sql, arguments, row: row)
    }

    /// Reported to `showSql`/`onSql` as on SQLite; run as a script so that it runs in a failed transaction too.
    package func executeRollback(_ sql: String) throws {
        let start = tracer?.isEnabled == true ? ContinuousClock.now : nil
        try execute(script: sql)
        if let start, let tracer { tracer.record(sql: sql, arguments: [], configName: configName, duration: .now - start) }
    }

    /// A statement prepared on this connection: its server-side name and what its rows hold.
    /// (A class: it is handed around per row and per value, and a struct of five arrays would be
    /// retained five times at each hand-over.)
    final class Prepared {
        let name: String
        let placeholders: PostgresPlaceholders
        let columnNames: [String]
        let columnTypes: [UInt32]
        /// The type PostgreSQL inferred for each `$n`: arguments are sent in that type's form.
        let parameterTypes: [UInt32]
        /// Whether every result column is read in binary (else the whole result comes as text).
        let binary: Bool

        init(name: String, placeholders: PostgresPlaceholders, columnNames: [String], columnTypes: [UInt32], parameterTypes: [UInt32], binary: Bool) {
            self.name = name
            self.placeholders = placeholders
            self.columnNames = columnNames
            self.columnTypes = columnTypes
            self.parameterTypes = parameterTypes
            self.binary = binary
        }
    }

    /// Opens a connection; throws, naming the host and port, when the server cannot be reached
    /// within `connectTimeout` seconds or refuses the login.
    /// `settings`: `SET` statements run on the new connection (the pool's: lock timeout, read-only).
    init(_ target: PostgresTarget, configName: String, connectTimeout: Int = 10, settings: [String] = [], tracer: SqlTracer? = nil,
         isolation: DbContext.Isolation = .serializable) throws {
        self.configName = configName
        self.beginStatement = "BEGIN ISOLATION LEVEL \(isolation.rawValue)"
        self.tracer = tracer
        var keywords = target.keywords
        keywords.append(("connect_timeout", String(max(1, connectTimeout))))
        keywords.append(("client_encoding", "UTF8"))
        keywords.append(("application_name", "DicRecord"))
        let expand: Int32 = target.keywords.first?.0 == "dbname" && target.keywords.count == 1 ? 1 : 0
        let connection = Self.withCStrings(keywords.map(\.0)) { keys in
            Self.withCStrings(keywords.map(\.1)) { values in PQconnectdbParams(keys, values, expand) }
        }
        guard let connection else {
            throw DatabaseError(resultCode: 7, message: "libpq could not allocate a connection (out of memory)", configName: configName)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
            let host = PQhost(connection).map { String(cString: $0) } ?? "?"
            let port = PQport(connection).map { String(cString: $0) } ?? "?"
            PQfinish(connection)
            throw DatabaseError(resultCode: 14,   // SQLITE_CANTOPEN: the database cannot be opened
                                message: "cannot connect to PostgreSQL at \(host):\(port) (\(target)): \(message)",
                                configName: configName, sqlState: "08001")
        }
        handle = connection
        // Notices (e.g. "table does not exist, skipping") would go to stderr: they are not errors.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        // The text forms DicRecord reads when a result comes as text (see `Prepared.binary`): ISO
        // dates, exact floats (servers before 12 round them otherwise), hex bytea. Set here, not as
        // startup options, so that a URL's own `options=` stays in force.
        do {
            try execute(script: (["SET DateStyle = ISO", "SET extra_float_digits = 3", "SET bytea_output = hex"] + settings).joined(separator: "; "))
        } catch {
            PQfinish(connection)
            isClosed = true
            throw error
        }
    }

    deinit { close() }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        PQfinish(handle)
    }

    /// The server's version, e.g. 150008 for 15.8.
    var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// Whether the connection to the server still works (libpq marks it bad when it drops).
    /// (One left in pipeline mode by a failed batch is not: it could run no ordinary statement.)
    var isHealthy: Bool { !isClosed && PQstatus(handle) == CONNECTION_OK && PQpipelineStatus(handle) == PQ_PIPELINE_OFF }

    // MARK: Running

    /// Runs `sql` with `arguments` and hands each row to `row` (its values, in column order;
    /// false stops); returns the column names and the rows changed (INSERT/UPDATE/DELETE), 0 otherwise.
    @discardableResult
    func run(_ sql: String, _ arguments: EncodedArguments, row: (([String], [DatabaseValue]) throws -> Bool)? = nil,
             reprepared: Bool = false) throws -> (columns: [String], changes: Int) {
        try refuseCommitOfAbortedTransaction(sql)
        let (statement, values, parameters, fresh) = try bound(sql, arguments)
        let start = tracer?.isEnabled == true ? ContinuousClock.now : nil
        let result: OpaquePointer
        do {
            result = try execute(statement, parameters, sql: sql, arguments: values)
        } catch let error as DatabaseError where !fresh && Self.isStalePlan(error) {
            // The table changed since this connection prepared the statement (`select *` after
            // ALTER TABLE): it is forgotten, so the next run prepares it afresh. Outside a
            // transaction nothing was done, and it runs again now, as SQLite re-prepares by
            // itself; inside one the transaction is aborted, and the error goes to the caller.
            forget(sql: sql)
            guard !isInTransaction, !reprepared else { throw error }
            return try run(sql, arguments, row: row, reprepared: true)
        }
        defer { PQclear(result) }
        if let start, let tracer { tracer.record(sql: sql, arguments: values, configName: configName, duration: .now - start) }
        statementsRun += 1
        if !Self.onlyReads(sql) { mayHaveWritten = true }
        if sql == "COMMIT", String(cString: PQcmdStatus(result)) == "ROLLBACK" {
            // The server turned the COMMIT into a rollback: say so, never report it committed.
            throw DatabaseError(resultCode: 1, message: "COMMIT rolled back: the transaction had failed\(abortedBy.map { " (\($0))" } ?? ""); nothing of it was committed",
                                sql: sql, configName: configName, sqlState: "25P02")
        }
        if let row {
            let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
            // One array for every row: the callee copies what it keeps, so it stays unique and is refilled in place.
            var values = [DatabaseValue]()
            values.reserveCapacity(columns)
            for r in 0..<rows {
                values.removeAll(keepingCapacity: true)
                for c in 0..<columns { values.append(try value(result, r, c, statement, sql: sql)) }
                guard try row(statement.columnNames, values) else { break }
            }
        }
        if abortedBy != nil, PQtransactionStatus(handle) != PQTRANS_INERROR { abortedBy = nil }
        let changed = String(cString: PQcmdTuples(result))
        return (statement.columnNames, Int(changed) ?? 0)
    }

    /// `each`: a query read `streamBatch` rows at a time through a cursor, so that a large result
    /// never sits in memory whole and the callback may use this connection between batches.
    /// Outside a transaction the cursor is WITH HOLD (the server keeps the result after the
    /// implicit commit; a write in the callback commits at once, as on SQLite); inside one it is a
    /// plain cursor of that transaction. Statements a cursor cannot run (writes, EXPLAIN, FOR
    /// UPDATE) are run whole by `run`.
    @discardableResult
    package func stream(_ sql: String, _ arguments: EncodedArguments,
                        row: (_ columns: [String], _ values: [DatabaseValue]) throws -> Bool) throws -> [String] {
        try stream(sql, arguments, reprepared: false, row: row)
    }

    private func stream(_ sql: String, _ arguments: EncodedArguments, reprepared: Bool,
                        row: (_ columns: [String], _ values: [DatabaseValue]) throws -> Bool) throws -> [String] {
        let inTransaction = isInTransaction
        guard Self.canStream(sql, inTransaction: inTransaction) else {
            return try withoutActuallyEscaping(row) { try run(sql, arguments, row: $0).columns }
        }
        let (statement, values, parameters, _) = try bound(sql, arguments)
        let cursor = "dicrecord_cursor_\(nextName)"
        nextName += 1
        let declare = "DECLARE \(cursor) NO SCROLL CURSOR \(isInTransaction ? "" : "WITH HOLD ")FOR \(statement.placeholders.text)"
        let start = tracer?.isEnabled == true ? ContinuousClock.now : nil
        let declared = withParameters(parameters) { count, pointers, lengths, formats in
            statement.parameterTypes.withUnsafeBufferPointer { types in
                PQexecParams(handle, declare, count, types.baseAddress, pointers, lengths, formats, 0)
            }
        }
        guard let declared else { throw lostConnection(sql: sql) }
        guard PQresultStatus(declared) == PGRES_COMMAND_OK else {
            defer { PQclear(declared) }
            let failure = error(declared, sql: sql, placeholders: statement.placeholders, arguments: values)
            // A query no cursor takes: outside a transaction the refusal changed nothing, and it runs whole.
            if !inTransaction, PQstatus(handle) == CONNECTION_OK {
                return try withoutActuallyEscaping(row) { try run(sql, arguments, row: $0).columns }
            }
            throw failure
        }
        PQclear(declared)
        statementsRun += 1
        if let start, let tracer { tracer.record(sql: sql, arguments: values, configName: configName, duration: .now - start) }
        // Closed however the reading ends (a failed transaction drops it by itself).
        var isOpen = true
        defer { if isOpen && isHealthy && PQtransactionStatus(handle) != PQTRANS_INERROR { try? execute(script: "CLOSE \(cursor)") } }
        let fetch = "FETCH FORWARD \(Self.streamBatch) FROM \(cursor)"
        var checked = false
        while true {
            guard let result = PQexecParams(handle, fetch, 0, nil, nil, nil, nil, statement.binary ? 1 : 0) else { throw lostConnection(sql: sql) }
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_TUPLES_OK else {
                throw error(result, sql: sql, placeholders: statement.placeholders, arguments: values)
            }
            let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
            // The cursor ran the SQL as the table is now; the cached description may be older (a
            // column added, renamed or retyped since): then it is described again.
            if !checked {
                checked = true
                let names = (0..<columns).map { String(cString: PQfname(result, Int32($0))) }
                let types = (0..<columns).map { UInt32(PQftype(result, Int32($0))) }
                if names != statement.columnNames || types != statement.columnTypes {
                    forget(sql: sql)
                    guard !reprepared else {
                        throw DatabaseError(resultCode: 17, message: "the result's columns changed while the query was being prepared (the table is being altered); run it again",
                                            sql: sql, configName: configName, sqlState: "0A000")
                    }
                    isOpen = false
                    try execute(script: "CLOSE \(cursor)")
                    return try stream(sql, arguments, reprepared: true, row: row)
                }
            }
            var values = [DatabaseValue]()
            values.reserveCapacity(columns)
            for r in 0..<rows {
                values.removeAll(keepingCapacity: true)
                for c in 0..<columns { values.append(try value(result, r, c, statement, sql: sql)) }
                guard try row(statement.columnNames, values) else { return statement.columnNames }
            }
            if rows < Self.streamBatch { return statement.columnNames }
        }
    }

    /// A batch: one statement with many argument lists, sent `pipelineChunk` at a time in
    /// libpq's pipeline mode (no round trip per row), inside the caller's transaction (which the
    /// caller rolls back on a failure). Each chunk's lists are encoded before any of it is sent;
    /// the first failure is thrown with its position (the server skips the rest of the chunk).
    package func executeBatch(_ sql: String, _ rows: [EncodedArguments],
                              row: ((_ index: Int, _ columns: [String], _ values: [DatabaseValue]) throws -> Void)?) throws -> [Int] {
        guard let first = rows.first else { return [] }
        var firstValues: [DatabaseValue]?
        let statement: Prepared
        do {
            try refuseCommitOfAbortedTransaction(sql)
            statement = try prepare(sql) {
                let placeholders = try PostgresPlaceholders(sql, configName: configName)
                firstValues = try first.ordered(for: placeholders, sql: sql, configName: configName)
                return firstValues!
            }
        } catch {
            throw EngineBatchFailure(index: 0, error: error)
        }
        func encode(_ index: Int) throws -> (values: [DatabaseValue], parameters: [PostgresParameter]) {
            do {
                let ordered = try (index == 0 ? firstValues : nil) ?? rows[index].ordered(for: statement.placeholders, sql: sql, configName: configName)
                return (ordered, try ordered.enumerated().map { position, value in
                    try PostgresParameter(value, as: statement.parameterTypes[position], index: position + 1, sql: sql, configName: configName)
                })
            } catch {
                throw EngineBatchFailure(index: index, error: error)
            }
        }
        mayHaveWritten = true
        guard PQenterPipelineMode(handle) == 1 else {
            throw EngineBatchFailure(index: 0, error: DatabaseError(resultCode: 1, message: "libpq could not enter pipeline mode: \(String(cString: PQerrorMessage(handle)))",
                                                                    sql: sql, configName: configName))
        }
        defer { PQexitPipelineMode(handle) }
        var counts: [Int] = []
        counts.reserveCapacity(rows.count)
        var chunk = 0..<0
        while chunk.upperBound < rows.count {
            chunk = chunk.upperBound..<min(chunk.upperBound + Self.pipelineChunk, rows.count)
            let encoded = try chunk.map(encode)
            let start = tracer?.isEnabled == true ? ContinuousClock.now : nil
            for index in chunk {
                let sent = withParameters(encoded[index - chunk.lowerBound].parameters) { count, pointers, lengths, formats in
                    PQsendQueryPrepared(handle, statement.name, count, pointers, lengths, formats, statement.binary ? 1 : 0)
                }
                guard sent == 1 else { throw EngineBatchFailure(index: index, error: lostConnection(sql: sql)) }
            }
            guard PQpipelineSync(handle) == 1 else { throw EngineBatchFailure(index: chunk.lowerBound, error: lostConnection(sql: sql)) }
            // One result per statement (then a NULL), then the sync's.
            var failure: EngineBatchFailure?
            for index in chunk {
                guard let result = PQgetResult(handle) else { throw failure ?? EngineBatchFailure(index: index, error: lostConnection(sql: sql)) }
                let status = PQresultStatus(result)
                if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK {
                    counts.append(Int(String(cString: PQcmdTuples(result))) ?? 0)
                    // Rows it returned (RETURNING): a failure to read them fails the batch at this
                    // item, after the rest of the pipeline is read (the connection stays usable).
                    if let row, status == PGRES_TUPLES_OK, failure == nil {
                        do {
                            var values = [DatabaseValue]()
                            for r in 0..<Int(PQntuples(result)) {
                                values.removeAll(keepingCapacity: true)
                                for c in 0..<Int(PQnfields(result)) { values.append(try value(result, r, c, statement, sql: sql)) }
                                try row(index, statement.columnNames, values)
                            }
                        } catch {
                            failure = EngineBatchFailure(index: index, error: error)
                        }
                    }
                } else if status != PGRES_PIPELINE_ABORTED, failure == nil {
                    failure = EngineBatchFailure(index: index, error: error(result, sql: sql, placeholders: statement.placeholders,
                                                                            arguments: encoded[index - chunk.lowerBound].values))
                }
                PQclear(result)
                while let extra = PQgetResult(handle) { PQclear(extra) }
            }
            while let result = PQgetResult(handle) {
                let status = PQresultStatus(result)
                PQclear(result)
                if status == PGRES_PIPELINE_SYNC { break }
            }
            if let start, let tracer {
                let each = (ContinuousClock.now - start) / chunk.count
                for item in encoded { tracer.record(sql: sql, arguments: item.values, configName: configName, duration: each) }
            }
            if let failure {
                // As in `run`: a statement the table changed under is prepared afresh next time.
                if let error = failure.error as? DatabaseError, Self.isStalePlan(error) { forget(sql: sql) }
                throw failure
            }
        }
        return counts
    }

    /// Statements sent per pipeline sync by `executeBatch` (their results stay well within the
    /// socket buffers, so blocking sends never wait on results not yet read).
    static let pipelineChunk = 256

    /// Rows per FETCH of `stream`.
    static let streamBatch = 1_000

    /// Whether `sql` is a plain query a cursor can run: SELECT or VALUES, with no INTO and no row
    /// locks. Outside a transaction a refused DECLARE changes nothing and the query runs whole;
    /// inside one it would abort the transaction, so there a comment (which could hide the words
    /// looked for) also keeps the query out of a cursor.
    static func canStream(_ sql: String, inTransaction: Bool) -> Bool {
        let text = sql.lowercased().split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        let start = text.drop { $0 == " " || $0 == "(" }
        guard start.hasPrefix("select") || start.hasPrefix("values") else { return false }
        if inTransaction && (text.contains("--") || text.contains("/*")) { return false }
        return ![" into ", "for update", "for no key update", "for share", "for key share"].contains { text.contains($0) }
    }

    /// The prepared statement of `sql` (prepared now when `fresh`) and `arguments` in its
    /// placeholders' order, as values and in the forms of their parameters' types.
    private func bound(_ sql: String, _ arguments: EncodedArguments)
        throws -> (statement: Prepared, values: [DatabaseValue], parameters: [PostgresParameter], fresh: Bool) {
        var ordered: [DatabaseValue]?
        var fresh = false
        let statement = try prepare(sql) {
            fresh = true
            let placeholders = try PostgresPlaceholders(sql, configName: configName)
            let values = try arguments.ordered(for: placeholders, sql: sql, configName: configName)
            ordered = values
            return values
        }
        let values = try ordered ?? arguments.ordered(for: statement.placeholders, sql: sql, configName: configName)
        let parameters = try values.enumerated().map { index, value in
            try PostgresParameter(value, as: statement.parameterTypes[index], index: index + 1, sql: sql, configName: configName)
        }
        return (statement, values, parameters, fresh)
    }

    /// All rows of `sql`.
    func rows(_ sql: String, _ arguments: EncodedArguments = .positional([])) throws -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        try run(sql, arguments) { rows.append($1); return true }
        return rows
    }

    /// Runs SQL with no arguments and no rows to read, several statements allowed (DDL scripts).
    func execute(script sql: String) throws {
        try refuseCommitOfAbortedTransaction(sql)
        guard let result = PQexec(handle, sql) else { throw lostConnection(sql: sql) }
        defer {
            PQclear(result)
            if abortedBy != nil, PQtransactionStatus(handle) != PQTRANS_INERROR { abortedBy = nil }
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            throw error(result, sql: sql, placeholders: nil, arguments: [])
        }
        statementsRun += 1
        if !Self.onlyReads(sql) { mayHaveWritten = true }
    }

    /// Whether `sql` cannot change data: a SELECT, VALUES, SHOW or a cursor's FETCH/CLOSE/DECLARE
    /// (a SELECT calling a function that writes is not seen: read-your-writes after it needs `Db.primary`).
    private static func onlyReads(_ sql: String) -> Bool {
        let word = sql.drop { $0.isWhitespace || $0 == "(" }.prefix(8).lowercased()
        return ["select", "values", "show", "fetch", "close", "declare", "deallocat"].contains { word.hasPrefix($0) }
    }

    /// The primary's WAL insert position now (`pg_current_wal_insert_lsn()`): at or past every commit made so far.
    func walInsertPosition() throws -> UInt64 {
        guard case .text(let text) = try rows("SELECT pg_current_wal_insert_lsn()::text").first?.first,
              let position = ReadRoute.position(text) else {
            throw DatabaseError(resultCode: 1, message: "pg_current_wal_insert_lsn() gave no WAL position", configName: configName)
        }
        return position
    }

    // MARK: Notifications (live queries)

    /// The payloads of the notifications (`LISTEN`/`NOTIFY`) the server sent, waiting up to
    /// `timeout` seconds for the first; empty when none came. Throws when the connection is lost.
    func notifications(waitingUpTo timeout: Double) throws -> [String] {
        var payloads = receivedNotifications()
        guard payloads.isEmpty else { return payloads }
        let socket = PQsocket(handle)
        guard socket >= 0, PQstatus(handle) == CONNECTION_OK else { throw lostConnection(sql: "LISTEN") }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, Int32(max(0, timeout) * 1000))
        guard ready != 0 else { return [] }
        if ready < 0 {
            guard errno == EINTR else {
                throw DatabaseError(resultCode: 10, message: "waiting for PostgreSQL's notifications failed: errno \(errno)", configName: configName, sqlState: "08006")
            }
            return []
        }
        // Readable: what came (notifications, or the end of the connection) is read in.
        guard PQconsumeInput(handle) == 1 else { throw lostConnection(sql: "LISTEN") }
        payloads = receivedNotifications()
        return payloads
    }

    /// The notifications libpq has read in and not yet handed out.
    private func receivedNotifications() -> [String] {
        var payloads: [String] = []
        while let notification = PQnotifies(handle) {
            payloads.append(String(cString: notification.pointee.extra))
            PQfreemem(notification)
        }
        return payloads
    }

    /// A replica's replayed WAL position (`pg_last_wal_replay_lsn()`) and its lag in seconds: 0
    /// when it has replayed all it received, else the time since the last transaction it replayed.
    func replayPosition() throws -> (replayed: UInt64, lag: Double) {
        let row = try rows("""
            SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn()::text END,
                   CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0
                   ELSE coalesce(extract(epoch FROM now() - pg_last_xact_replay_timestamp()), 0) END::double precision
            """).first ?? []
        guard row.count == 2, case .text(let text) = row[0], let replayed = ReadRoute.position(text) else {
            throw DatabaseError(resultCode: 1, message: "\(configName): the server named as a replica is not in recovery (a primary, or a promoted replica): it serves no reads",
                                configName: configName)
        }
        var lag = 0.0
        if case .real(let seconds) = row[1] { lag = seconds }
        return (replayed, lag)
    }

    private func value(_ result: OpaquePointer, _ r: Int, _ c: Int, _ statement: Prepared, sql: String) throws -> DatabaseValue {
        let row = Int32(r), column = Int32(c)
        if PQgetisnull(result, row, column) != 0 { return .null }
        let length = Int(PQgetlength(result, row, column))
        let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, row, column), count: length)
        let type = statement.columnTypes[c]
        if !statement.binary { return PostgresValueReader.text(bytes, type: type) }
        guard let value = PostgresValueReader.binary(bytes, type: type) else {
            throw DatabaseError(resultCode: 20, message: "column \"\(statement.columnNames[c])\": malformed binary value of type OID \(type) (\(length) bytes)",
                                sql: sql, configName: configName)
        }
        return value
    }

    // MARK: Preparing

    /// The prepared statement for `sql`, cached per connection. Parameters are left for the server
    /// to type from their context (`where born > ?` makes `?` a timestamptz); each argument is then
    /// sent in the form of that type. Where the context gives no type (`select ? + ?`, `? is null`),
    /// PostgreSQL refuses to guess (42P18, 42725): the statement is prepared again with the
    /// arguments' own types (bigint, double precision, bytea) and cached under them too. Inside a
    /// transaction the first attempt runs under a savepoint, so a refusal does not abort it.
    private func prepare(_ sql: String, _ values: () throws -> [DatabaseValue]) throws -> Prepared {
        if let known = prepared[ExactText(sql)] { return known }
        let placeholders = try PostgresPlaceholders(sql, configName: configName)
        var kinds = try values().map(Self.declaredType)
        // Nothing to go by (`select ? is null` with nil): text, PostgreSQL's own choice for an untyped literal.
        if !kinds.isEmpty, kinds.allSatisfy({ $0 == 0 }) { kinds = kinds.map { _ in PostgresType.text } }
        let typedKey = sql + "\u{0}" + kinds.map(String.init).joined(separator: ",")
        if let known = prepared[ExactText(typedKey)] { return known }
        try evictIfFull()
        let guarded = isInTransaction && placeholders.count > 0
        if guarded { try execute(script: "SAVEPOINT dicrecord_prepare") }
        do {
            let statement = try prepare(sql, placeholders, types: nil)
            if guarded { try execute(script: "RELEASE SAVEPOINT dicrecord_prepare") }
            prepared[ExactText(sql)] = statement
            return statement
        } catch let error as DatabaseError where error.sqlState == "42P18" || error.sqlState == "42725" {
            if guarded { try execute(script: "ROLLBACK TO SAVEPOINT dicrecord_prepare; RELEASE SAVEPOINT dicrecord_prepare") }
            let statement = try prepare(sql, placeholders, types: kinds)
            prepared[ExactText(typedKey)] = statement
            return statement
        } catch {
            if guarded { try? execute(script: "ROLLBACK TO SAVEPOINT dicrecord_prepare; RELEASE SAVEPOINT dicrecord_prepare") }
            throw error
        }
    }

    /// The parameter type an argument declares when the SQL gives none (0: let the server decide).
    private static func declaredType(_ value: DatabaseValue) -> UInt32 {
        switch value {
        case .integer: PostgresType.int8
        case .real: PostgresType.float8
        case .blob: PostgresType.bytea
        case .null, .text: 0
        }
    }

    private func prepare(_ sql: String, _ placeholders: PostgresPlaceholders, types: [UInt32]?) throws -> Prepared {
        let name = "dicrecord_\(nextName)"
        nextName += 1
        let result = types.map { types in
            types.withUnsafeBufferPointer { PQprepare(handle, name, placeholders.text, Int32(placeholders.count), $0.baseAddress) }
        } ?? PQprepare(handle, name, placeholders.text, Int32(placeholders.count), nil)
        guard let result else { throw lostConnection(sql: sql) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            let error = error(result, sql: sql, placeholders: placeholders, arguments: [])
            if let failure = error as? DatabaseError, failure.sqlState == "42601", failure.message.contains("multiple commands") {
                // As on SQLite: one statement per call (a trailing `;` or comment is fine).
                throw DicRecordError(.multipleStatements, "the SQL holds more than one statement; run each separately or use batch",
                                     sql: sql, configName: configName)
            }
            throw error
        }
        guard let description = PQdescribePrepared(handle, name) else { throw lostConnection(sql: sql) }
        defer { PQclear(description) }
        guard PQresultStatus(description) == PGRES_COMMAND_OK else {
            throw error(description, sql: sql, placeholders: placeholders, arguments: [])
        }
        let count = Int(PQnfields(description))
        let names = (0..<count).map { String(cString: PQfname(description, Int32($0))) }
        let columnTypes = (0..<count).map { UInt32(PQftype(description, Int32($0))) }
        let parameterTypes = (0..<Int(PQnparams(description))).map { UInt32(PQparamtype(description, Int32($0))) }
        return Prepared(name: name, placeholders: placeholders, columnNames: names, columnTypes: columnTypes,
                        parameterTypes: parameterTypes, binary: columnTypes.allSatisfy(PostgresType.readsBinary))
    }

    /// At `cacheLimit` statements, this connection's are deallocated on the server (its own names
    /// only: statements a user PREPAREd stay) and forgotten; never inside a failed transaction.
    private func evictIfFull() throws {
        guard prepared.count + staleNames.count >= Self.cacheLimit, PQtransactionStatus(handle) != PQTRANS_INERROR else { return }
        let names = Set(prepared.values.map(\.name) + staleNames)
        staleNames = []
        try execute(script: names.map { "DEALLOCATE \($0)" }.joined(separator: "; "))
        prepared.removeAll()
    }

    /// PostgreSQL's "cached plan must not change result type": a prepared statement outlived a schema change.
    private static func isStalePlan(_ error: DatabaseError) -> Bool {
        error.sqlState == "0A000" && error.message.contains("cached plan must not change result type")
    }

    /// Drops every cached statement of `sql` (its typed forms too); the server forgets them at
    /// once, or, in a failed transaction, with the next deallocation.
    private func forget(sql: String) {
        let typed = sql + "\u{0}"
        let stale = prepared.filter { $0.key.text.hasSameBytes(as: sql) || $0.key.text.utf8.starts(with: typed.utf8) }
        for key in stale.keys { prepared[key] = nil }
        let names = stale.values.map(\.name)
        guard !names.isEmpty else { return }
        if PQtransactionStatus(handle) == PQTRANS_INERROR {
            staleNames += names
        } else {
            try? execute(script: names.map { "DEALLOCATE \($0)" }.joined(separator: "; "))
        }
    }

    /// Prepared statements kept per connection.
    static let cacheLimit = 256

    private func execute(_ statement: Prepared, _ parameters: [PostgresParameter], sql: String, arguments: [DatabaseValue]) throws -> OpaquePointer {
        let result = withParameters(parameters) { count, values, lengths, formats in
            PQexecPrepared(handle, statement.name, count, values, lengths, formats, statement.binary ? 1 : 0)
        }
        guard let result else { throw lostConnection(sql: sql) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            defer { PQclear(result) }
            throw error(result, sql: sql, placeholders: statement.placeholders, arguments: arguments)
        }
        return result
    }

    /// Calls `send` with libpq's parameter arrays for `parameters`: count, values, lengths, formats.
    private func withParameters<R>(_ parameters: [PostgresParameter],
                                   _ send: (Int32, [UnsafePointer<CChar>?], [Int32], [Int32]) -> R) -> R {
        // The buffers of the last statement, refilled (one thread uses a connection at a time;
        // a call from inside `send` would find them taken and use its own).
        var buffers = scratch ?? ParameterBuffers()
        scratch = nil
        // Kept for the next statement unless a large value grew them (then they go with it).
        defer { scratch = buffers.bytes.capacity <= 64 << 10 ? buffers : ParameterBuffers() }
        buffers.removeAll()
        // One buffer for every value: text values as C strings (libpq reads text parameters up to
        // their NUL), binary ones with their length; an empty binary value still gets an address
        // (a NULL pointer would send SQL NULL).
        for parameter in parameters {
            guard let value = parameter.bytes else {
                buffers.offsets.append(-1)
                buffers.lengths.append(0)
                buffers.formats.append(0)
                continue
            }
            buffers.offsets.append(buffers.bytes.count)
            buffers.bytes.append(contentsOf: value)
            buffers.bytes.append(0)
            buffers.lengths.append(Int32(value.count))
            buffers.formats.append(parameter.binary ? 1 : 0)
        }
        return buffers.bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress)
            for offset in buffers.offsets {
                buffers.pointers.append(offset < 0 || base == nil ? nil : (base! + offset).assumingMemoryBound(to: CChar.self))
            }
            return send(Int32(parameters.count), buffers.pointers, buffers.lengths, buffers.formats)
        }
    }

    // MARK: Errors

    /// The first error of the transaction now open, when it aborted it (PostgreSQL then refuses
    /// every statement until the transaction or the savepoint rolls back).
    private var abortedBy: String? {
        didSet { if abortedBy == nil { abortedState = nil } }
    }
    /// The SQLSTATE of that error.
    private var abortedState: String?

    /// COMMIT or RELEASE of a transaction an error aborted would quietly roll back: refused, naming the error.
    private func refuseCommitOfAbortedTransaction(_ sql: String) throws {
        guard sql == "COMMIT" || sql.hasPrefix("RELEASE "), PQtransactionStatus(handle) == PQTRANS_INERROR else { return }
        if let abortedState, abortedState == "40001" || abortedState == "40P01" {
            // A conflict the body caught: still a conflict, so `tx(retryOnConflict:)` reruns it.
            throw DicRecordError(.conflict, "the transaction was aborted by a conflict\(abortedBy.map { " (\($0))" } ?? ""); nothing of it was committed",
                                 sql: sql, configName: configName)
        }
        throw DatabaseError(resultCode: 1,
            message: "the transaction was aborted by an earlier error\(abortedBy.map { " (\($0))" } ?? ""); nothing of it can be committed — catch errors inside a nested tx (a savepoint) to go on after them",
            sql: sql, configName: configName, sqlState: "25P02")
    }

    private func lostConnection(sql: String) -> DatabaseError {
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        let host = PQhost(handle).map { String(cString: $0) } ?? "?", port = PQport(handle).map { String(cString: $0) } ?? "?"
        return DatabaseError(resultCode: 10, message: "the connection to PostgreSQL at \(host):\(port) failed: \(message)", sql: sql,
                             configName: configName, sqlState: "08006")
    }

    /// PostgreSQL's error as a `DatabaseError` with SQLite's nearest result code (a unique
    /// violation is 19/2067 on both engines), the SQLSTATE, and the position in the SQL as written.
    private func error(_ result: OpaquePointer, sql: String, placeholders: PostgresPlaceholders?, arguments: [DatabaseValue]) -> any Error {
        func field(_ code: Character) -> String? {
            PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
        }
        let state = field("C") ?? ""
        if PQstatus(handle) != CONNECTION_OK { return lostConnection(sql: sql) }
        var message = field("M") ?? String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
        var offset: Int?
        if let position = field("P").flatMap(Int.init) {
            let byte = placeholders?.originalOffset(ofCharacter: position) ?? sql.utf8.count
            offset = byte
            message += " (at character \(position) of the SQL: \(Self.excerpt(sql, at: byte)))"
        }
        if let detail = field("D") { message += "; \(detail)" }
        if let hint = field("H") { message += "; hint: \(hint)" }
        if state == "25P02", let abortedBy {
            message += " (the error that aborted it: \(abortedBy))"
        } else if PQtransactionStatus(handle) == PQTRANS_INERROR, abortedBy == nil {
            abortedBy = "\(message) [SQLSTATE \(state)]"
            abortedState = state
        }
        switch state {
        case "40001", "40P01":
            return DicRecordError(.conflict, "\(message) [SQLSTATE \(state)]", sql: sql, configName: configName,
                                  databaseError: DatabaseError(resultCode: 5, message: message, sql: sql, arguments: arguments,
                                                               configName: configName, errorOffset: offset, sqlState: state))
        case "55P03", "57014":
            return DicRecordError(.busy, "\(message) [SQLSTATE \(state)]", sql: sql, configName: configName,
                                  databaseError: DatabaseError(resultCode: 5, message: message, sql: sql, arguments: arguments,
                                                               configName: configName, errorOffset: offset, sqlState: state))
        default:
            let (code, extended) = Self.resultCodes(state)
            return DatabaseError(resultCode: code, extendedResultCode: extended, message: message, sql: sql, arguments: arguments,
                                 configName: configName, errorOffset: offset, sqlState: state)
        }
    }

    /// SQLite's result codes for a SQLSTATE, so that code catching constraint errors works on both engines.
    static func resultCodes(_ state: String) -> (Int32, Int32) {
        switch state {
        case "23505": (19, 2067)   // SQLITE_CONSTRAINT_UNIQUE
        case "23503": (19, 787)    // SQLITE_CONSTRAINT_FOREIGNKEY
        case "23502": (19, 1299)   // SQLITE_CONSTRAINT_NOTNULL
        case "23514": (19, 275)    // SQLITE_CONSTRAINT_CHECK
        case _ where state.hasPrefix("23"): (19, 19)
        case _ where state.hasPrefix("22"): (20, 20)   // SQLITE_MISMATCH: a value of the wrong type or range
        case _ where state.hasPrefix("08"): (10, 10)   // SQLITE_IOERR: the connection failed
        case "42501": (3, 3)       // SQLITE_PERM
        default: (1, 1)            // SQLITE_ERROR
        }
    }

    /// A few words of `sql` around byte `offset`, marked where the error is.
    static func excerpt(_ sql: String, at offset: Int) -> String {
        let bytes = Array(sql.utf8)
        let at = min(max(0, offset), bytes.count)
        let before = String(decoding: bytes[max(0, at - 20)..<at], as: UTF8.self)
        let after = String(decoding: bytes[at..<min(bytes.count, at + 20)], as: UTF8.self)
        return "…\(before)⟨here⟩\(after)…"
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> R) -> R {
        var pointers = strings.map { strdup($0) }
        defer { pointers.forEach { free($0) } }
        pointers.append(nil)
        return pointers.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { body($0) }
        }
    }
}

/// The arguments of one PostgreSQL statement, already encoded: positional (`?`, `?NNN`, `$n`) or named (`:name`).
extension EncodedArguments {
    /// The values in `$n` order, checked against the statement's placeholders.
    func ordered(for placeholders: PostgresPlaceholders, sql: String, configName: String?) throws -> [DatabaseValue] {
        switch self {
        case .stored(let stored):
            // PostgreSQL's text is UTF-8: TEXT read from SQLite that is not would be changed.
            return try EncodedArguments.positional(stored.utf8Values(sql: sql, configName: configName))
                .ordered(for: placeholders, sql: sql, configName: configName)
        case .positional(let values):
            if placeholders.names != nil {
                throw DicRecordError(.argumentCount, "the SQL has :name parameters but positional arguments were given", sql: sql, configName: configName)
            }
            guard values.count == placeholders.count else {
                throw DicRecordError(.argumentCount,
                    "the SQL has \(placeholders.count) parameter\(placeholders.count == 1 ? "" : "s") but \(values.count) argument\(values.count == 1 ? " was" : "s were") given",
                    sql: sql, configName: configName)
            }
            return values
        case .named(let values):
            guard let names = placeholders.names else {
                if placeholders.count == 0 && values.isEmpty { return [] }
                throw DicRecordError(.argumentCount, "the SQL's parameters are positional but named arguments were given", sql: sql, configName: configName)
            }
            var ordered: [DatabaseValue] = []
            for name in names {
                guard let value = values[name] ?? values[":" + name] else {
                    throw DicRecordError(.argumentCount, "no argument for parameter :\(name)", sql: sql, configName: configName)
                }
                ordered.append(value)
            }
            let used = Set(names.flatMap { [$0, ":" + $0] })
            let unused = values.keys.filter { !used.contains($0) }.sorted()
            if !unused.isEmpty {
                throw DicRecordError(.argumentCount, "arguments \(unused) match no parameter of the SQL", sql: sql, configName: configName)
            }
            return ordered
        }
    }
}

/// The arrays libpq takes a statement's parameters in, refilled for each statement.
struct ParameterBuffers {
    var bytes: [UInt8] = []
    /// Where each value starts in `bytes`; -1 for SQL NULL.
    var offsets: [Int] = []
    var lengths: [Int32] = []
    var formats: [Int32] = []
    var pointers: [UnsafePointer<CChar>?] = []

    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        lengths.removeAll(keepingCapacity: true)
        formats.removeAll(keepingCapacity: true)
        pointers.removeAll(keepingCapacity: true)
    }
}
