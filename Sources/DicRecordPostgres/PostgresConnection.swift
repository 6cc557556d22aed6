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
    private let handle: OpaquePointer
    private var prepared: [String: Prepared] = [:]
    private var nextName = 0
    private var isClosed = false
    /// Depth of transaction nesting: 0 outside, 1 in BEGIN, 2+ in SAVEPOINTs.
    package var transactionDepth = 0
    package var undoLog: AnyObject?
    package var beginStatement: String { "BEGIN" }
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

    package func executeRollback(_ sql: String) throws {
        try execute(script: sql)
    }

    /// A statement prepared on this connection: its server-side name and what its rows hold.
    struct Prepared {
        let name: String
        let placeholders: PostgresPlaceholders
        let columnNames: [String]
        let columnTypes: [UInt32]
        /// Whether every result column is read in binary (else the whole result comes as text).
        let binary: Bool
    }

    /// Opens a connection; throws, naming the host and port, when the server cannot be reached
    /// within `connectTimeout` seconds or refuses the login.
    init(_ target: PostgresTarget, configName: String, connectTimeout: Int = 10) throws {
        self.configName = configName
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
        // The text forms DicRecord reads dates in, when a result comes as text (see `Prepared.binary`).
        // Set here, not as a startup option, so that a URL's own `options=` stays in force.
        try execute(script: "SET DateStyle = ISO; SET TimeZone = 'UTC'")
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
    var isHealthy: Bool { !isClosed && PQstatus(handle) == CONNECTION_OK }

    // MARK: Running

    /// Runs `sql` with `arguments` and hands each row to `row` (its values, in column order;
    /// false stops); returns the column names and the rows changed (INSERT/UPDATE/DELETE), 0 otherwise.
    @discardableResult
    func run(_ sql: String, _ arguments: EncodedArguments, row: (([String], [DatabaseValue]) throws -> Bool)? = nil) throws -> (columns: [String], changes: Int) {
        let statement = try prepare(sql, arguments)
        let parameters = try arguments.parameters(for: statement.placeholders, sql: sql, configName: configName)
        let result = try execute(statement, parameters, sql: sql)
        defer { PQclear(result) }
        if let row {
            let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
            for r in 0..<rows {
                var values = [DatabaseValue]()
                values.reserveCapacity(columns)
                for c in 0..<columns { values.append(try value(result, r, c, statement, sql: sql)) }
                guard try row(statement.columnNames, values) else { break }
            }
        }
        let changed = String(cString: PQcmdTuples(result))
        return (statement.columnNames, Int(changed) ?? 0)
    }

    /// All rows of `sql`.
    func rows(_ sql: String, _ arguments: EncodedArguments = .positional([])) throws -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        try run(sql, arguments) { rows.append($1); return true }
        return rows
    }

    /// Runs SQL with no arguments and no rows to read, several statements allowed (DDL scripts).
    func execute(script sql: String) throws {
        guard let result = PQexec(handle, sql) else { throw lostConnection(sql: sql) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            throw error(result, sql: sql, placeholders: nil, arguments: [])
        }
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

    /// The prepared statement for `sql` with these argument types: cached per (SQL, types), since
    /// PostgreSQL fixes a parameter's type when it prepares.
    private func prepare(_ sql: String, _ arguments: EncodedArguments) throws -> Prepared {
        let key = arguments.typeSignature + "\u{0}" + sql
        if let known = prepared[key] { return known }
        let placeholders = try PostgresPlaceholders(sql, configName: configName)
        let types = try arguments.types(for: placeholders, sql: sql, configName: configName)
        let name = "dicrecord_\(nextName)"
        nextName += 1
        let result = types.withUnsafeBufferPointer { typeBuffer in
            PQprepare(handle, name, placeholders.text, Int32(types.count), typeBuffer.baseAddress)
        }
        guard let result else { throw lostConnection(sql: sql) }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else {
            throw error(result, sql: sql, placeholders: placeholders, arguments: [])
        }
        guard let description = PQdescribePrepared(handle, name) else { throw lostConnection(sql: sql) }
        defer { PQclear(description) }
        guard PQresultStatus(description) == PGRES_COMMAND_OK else {
            throw error(description, sql: sql, placeholders: placeholders, arguments: [])
        }
        let count = Int(PQnfields(description))
        let names = (0..<count).map { String(cString: PQfname(description, Int32($0))) }
        let columnTypes = (0..<count).map { UInt32(PQftype(description, Int32($0))) }
        let statement = Prepared(name: name, placeholders: placeholders, columnNames: names, columnTypes: columnTypes,
                                 binary: columnTypes.allSatisfy(PostgresType.readsBinary))
        prepared[key] = statement
        return statement
    }

    private func execute(_ statement: Prepared, _ parameters: [PostgresParameter], sql: String) throws -> OpaquePointer {
        let count = parameters.count
        // Text values go as C strings (libpq reads text parameters up to their NUL), binary ones with their length.
        // An empty binary value still needs an address (a NULL pointer would send SQL NULL): one spare byte.
        var storage: [[UInt8]] = parameters.map { p in p.bytes.map { $0 + [0] } ?? [] }
        let lengths = parameters.map { Int32($0.bytes?.count ?? 0) }
        let formats = parameters.map { Int32($0.binary ? 1 : 0) }
        let result: OpaquePointer? = storage.withUnsafeMutableBufferPointer { buffers in
            var pointers = [UnsafePointer<CChar>?](repeating: nil, count: count)
            func fill(_ i: Int) -> OpaquePointer? {
                if i == count {
                    return PQexecPrepared(handle, statement.name, Int32(count), pointers, lengths, formats,
                                          statement.binary ? 1 : 0)
                }
                guard parameters[i].bytes != nil else { return fill(i + 1) }
                return buffers[i].withUnsafeBufferPointer { bytes in
                    pointers[i] = bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
                    return fill(i + 1)
                }
            }
            return fill(0)
        }
        guard let result else { throw lostConnection(sql: sql) }
        let status = PQresultStatus(result)
        guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK || status == PGRES_EMPTY_QUERY else {
            defer { PQclear(result) }
            throw error(result, sql: sql, placeholders: statement.placeholders, arguments: parameters.map(\.shown))
        }
        return result
    }

    // MARK: Errors

    private func lostConnection(sql: String) -> DatabaseError {
        let message = String(cString: PQerrorMessage(handle)).trimmingCharacters(in: .whitespacesAndNewlines)
        return DatabaseError(resultCode: 10, message: "the connection to PostgreSQL failed: \(message)", sql: sql,
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
    /// The parameter types a statement is prepared with, one per argument kind (NULL and text: 0, inferred).
    var typeSignature: String {
        func code(_ value: DatabaseValue) -> Character {
            switch value {
            case .null, .text: "u"
            case .integer: "i"
            case .real: "r"
            case .blob: "b"
            }
        }
        switch self {
        case .positional(let values): return String(values.map(code))
        case .named(let values): return values.keys.sorted().map { "\($0)=\(code(values[$0]!))" }.joined(separator: ",")
        }
    }

    /// The values in `$n` order, checked against the statement's placeholders.
    func ordered(for placeholders: PostgresPlaceholders, sql: String, configName: String?) throws -> [DatabaseValue] {
        switch self {
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

    func types(for placeholders: PostgresPlaceholders, sql: String, configName: String?) throws -> [UInt32] {
        try ordered(for: placeholders, sql: sql, configName: configName).enumerated().map {
            try PostgresParameter($0.element, index: $0.offset + 1, sql: sql, configName: configName).type
        }
    }

    func parameters(for placeholders: PostgresPlaceholders, sql: String, configName: String?) throws -> [PostgresParameter] {
        try ordered(for: placeholders, sql: sql, configName: configName).enumerated().map {
            try PostgresParameter($0.element, index: $0.offset + 1, sql: sql, configName: configName)
        }
    }
}

extension PostgresParameter {
    /// The argument as the error shows it.
    var shown: DatabaseValue {
        guard let bytes else { return .null }
        if !binary { return .text(String(decoding: bytes, as: UTF8.self)) }
        switch type {
        case PostgresType.int8: return .integer(Int64(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }))
        case PostgresType.float8: return .real(Double(bitPattern: UInt64(bigEndian: bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) })))
        default: return .blob(Data(bytes))
        }
    }
}
