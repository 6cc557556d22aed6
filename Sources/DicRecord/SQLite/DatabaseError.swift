import CSQLite

/// An error SQLite reported: its result codes and message, with the SQL, the arguments and the
/// config that were involved.
///
/// ```swift
/// do { try Db.update("insert into student(id) values (?)", 1) }
/// catch let error as DatabaseError where error.resultCode == 19 { /* SQLITE_CONSTRAINT */ }
/// ```
/// See <https://www.sqlite.org/rescode.html>.
public struct DatabaseError: Error, Sendable, CustomStringConvertible {
    /// The primary result code (`SQLITE_CONSTRAINT` is 19, `SQLITE_BUSY` 5, ...).
    /// ```swift
    /// catch let error as DatabaseError where error.resultCode == 19 { print("constraint failed") }
    /// ```
    public let resultCode: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` is 2067, ...).
    /// ```swift
    /// if error.extendedResultCode == 2067 { print("duplicate key") }   // SQLITE_CONSTRAINT_UNIQUE
    /// ```
    public let extendedResultCode: Int32
    /// SQLite's message.
    /// ```swift
    /// print(error.message)   // "UNIQUE constraint failed: student.email"
    /// ```
    public let message: String
    /// The statement that failed, if any.
    /// ```swift
    /// print(error.sql ?? "")  // "insert into student(email) values (?)"
    /// ```
    public let sql: String?
    /// The arguments bound to it, in parameter order.
    /// ```swift
    /// print(error.arguments)  // [.text("a@b.c")]
    /// ```
    public let arguments: [DatabaseValue]
    /// The config (context) name the statement ran on.
    /// ```swift
    /// error.configName        // "main"
    /// ```
    public let configName: String?
    /// The byte offset in `sql` that SQLite blames, when it says (syntax errors).
    /// ```swift
    /// if let offset = error.errorOffset { print("near byte", offset) }
    /// ```
    public let errorOffset: Int?
    /// Where a batch failed: the 0-based index of the statement, row or record, and the batch's size.
    /// ```swift
    /// if let position = error.batchPosition { print("failed at", position.index) }
    /// ```
    public internal(set) var batchPosition: BatchPosition?

    /// PostgreSQL's SQLSTATE (`23505` for a unique violation, …) on a PostgreSQL config; nil on SQLite.
    /// ```swift
    /// catch let error as DatabaseError where error.sqlState == "23505" { print("duplicate key") }
    /// ```
    public let sqlState: String?

    package init(resultCode: Int32, extendedResultCode: Int32? = nil, message: String, sql: String? = nil,
                 arguments: [DatabaseValue] = [], configName: String? = nil, errorOffset: Int? = nil, sqlState: String? = nil) {
        self.sqlState = sqlState
        self.resultCode = resultCode & 0xff
        self.extendedResultCode = extendedResultCode ?? resultCode
        self.message = message
        self.sql = sql
        self.arguments = arguments
        self.configName = configName
        self.errorOffset = errorOffset
    }

    /// The error SQLite holds for `db` after `code`.
    init(code: Int32, db: OpaquePointer?, sql: String?, arguments: [DatabaseValue] = [], configName: String?) {
        let message = db.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(code))
        let extended = db.map { sqlite3_extended_errcode($0) } ?? code
        let offset = db.map { Int(sqlite3_error_offset($0)) }.flatMap { $0 >= 0 ? $0 : nil }
        self.init(resultCode: code, extendedResultCode: extended, message: Self.withQuoteHint(message, sql: sql), sql: sql,
                  arguments: arguments, configName: configName, errorOffset: offset)
    }

    /// DicRecord turns off SQLite's legacy reading of an unknown "double-quoted" name as text, so
    /// `name = "Jack"` (MySQL's way) fails with "no such column: Jack": say what to write instead.
    static func withQuoteHint(_ message: String, sql: String?) -> String {
        let prefix = "no such column: "
        guard let sql, message.hasPrefix(prefix) else { return message }
        let word = message.dropFirst(prefix.count)
        guard !word.isEmpty, sql.contains("\"\(word)\"") else { return message }
        // The suggestion must be valid SQL: a quote inside it is doubled.
        return "\(message) (a double-quoted word is a name in SQL; if you meant text, write it in single quotes: '\(word.replacing("'", with: "''"))')"
    }

    /// The name of the result code, like `SQLITE_CONSTRAINT`.
    /// ```swift
    /// error.codeName   // "constraint failed"
    /// ```
    public var codeName: String { String(cString: sqlite3_errstr(extendedResultCode)) }

    /// The code, its name, SQLite's message, then the SQL, error offset, arguments, batch position and config when known.
    /// ```swift
    /// print(error)   // SQLite error 2067 (constraint failed): UNIQUE constraint failed: …; SQL: …
    /// ```
    public var description: String {
        var text = sqlState.map { "PostgreSQL error \($0) (SQLite's nearest: \(extendedResultCode), \(codeName)): \(message)" }
            ?? "SQLite error \(extendedResultCode) (\(codeName)): \(message)"
        if let sql { text += "; SQL: \(sql)" }
        if let errorOffset { text += " (at offset \(errorOffset))" }
        if !arguments.isEmpty { text += "; arguments: [\(arguments.map(\.description).joined(separator: ", "))]" }
        if let batchPosition { text += "; \(batchPosition)" }
        if let configName { text += "; config: \(configName)" }
        return text
    }
}

/// The item of a batch (`batch`, `batchSave`, `batchUpdate`) that failed.
/// ```swift
/// catch let error as DatabaseError { print(error.batchPosition?.index as Any) }
/// ```
public struct BatchPosition: Sendable, Equatable, CustomStringConvertible {
    /// The 0-based index of the failing statement, argument row or record.
    /// ```swift
    /// position.index   // 1: the second statement failed
    /// ```
    public let index: Int
    /// The number of items in the batch.
    /// ```swift
    /// position.count   // 3
    /// ```
    public let count: Int

    /// "batch item <index> (0-based) of <count>".
    /// ```swift
    /// print(position)   // batch item 1 (0-based) of 3
    /// ```
    public var description: String { "batch item \(index) (0-based) of \(count)" }
}

/// A misuse of the library or an input it refuses: an unknown config, a wrong argument count,
/// a value it cannot store, a page number below 1, a write to a readonly context, ...
/// ```swift
/// do { _ = try Db.use("nope").find("select 1") }
/// catch let error as DicRecordError where error.kind == .unknownConfig { print(error.message) }
/// ```
public struct DicRecordError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, to switch on; the `message` says it in words.
    /// ```swift
    /// if error.kind == .notStarted { try main.start() }
    /// ```
    public enum Kind: Sendable, Equatable {
        /// No context is started under the config name used (the message lists the known names).
        /// ```swift
        /// error.kind == .unknownConfig
        /// ```
        case unknownConfig
        /// A context was started under a config name already in use.
        /// ```swift
        /// error.kind == .duplicateConfig
        /// ```
        case duplicateConfig
        /// The context was never started, or was stopped.
        /// ```swift
        /// error.kind == .notStarted
        /// ```
        case notStarted
        /// A write on a readonly context.
        /// ```swift
        /// error.kind == .readonly
        /// ```
        case readonly
        /// The arguments do not match the placeholders (too many, too few, or named for positional).
        /// ```swift
        /// error.kind == .argumentCount
        /// ```
        case argumentCount
        /// An argument has no converter, or its converter refused it; or a stored value cannot be
        /// passed on as it is (TEXT that is not UTF-8, to PostgreSQL or as a keyset page's next key).
        /// ```swift
        /// error.kind == .unsupportedArgument
        /// ```
        case unsupportedArgument
        /// An argument the call refuses: an empty path, a page number below 1, an empty delete condition…
        /// ```swift
        /// error.kind == .invalidArgument
        /// ```
        case invalidArgument
        /// A single-column query (`query`, `queryInt`…) returned more than one column.
        /// ```swift
        /// error.kind == .multipleColumns
        /// ```
        case multipleColumns
        /// A column the call needs is not there (a `get` of an unknown column, an unknown aggregate column).
        /// ```swift
        /// error.kind == .missingColumn
        /// ```
        case missingColumn
        /// The record lacks a value for its primary key, or no key column was given.
        /// ```swift
        /// error.kind == .missingPrimaryKey
        /// ```
        case missingPrimaryKey
        /// JSON that cannot be parsed, or a value JSON cannot represent.
        /// ```swift
        /// error.kind == .invalidJSON
        /// ```
        case invalidJSON
        /// The database stayed locked past the busy timeout; `databaseError` holds SQLite's error.
        /// ```swift
        /// error.kind == .busy
        /// ```
        case busy
        /// Another transaction's work conflicts with this one's (PostgreSQL's serialization failure or
        /// deadlock, SQLSTATE 40001 or 40P01): nothing of it was committed; run it again.
        /// ```swift
        /// catch let error as DicRecordError where error.kind == .conflict { /* rerun the transaction */ }
        /// ```
        case conflict
        /// The SQL holds more than one statement where one is expected (use `batch` or `Connection.execute`).
        /// ```swift
        /// error.kind == .multipleStatements
        /// ```
        case multipleStatements
        /// A model's declarations are wrong (a duplicate column, a type with no converter, ...).
        /// ```swift
        /// error.kind == .invalidModel
        /// ```
        case invalidModel
        /// A model was used against a config it is not registered with.
        /// ```swift
        /// error.kind == .notRegistered
        /// ```
        case notRegistered
        /// The database's schema or `user_version` is newer than the code (a downgrade).
        /// ```swift
        /// error.kind == .schemaVersion
        /// ```
        case schemaVersion
        /// A call the library cannot serve where it was made (a Db call on a config inside that
        /// config's onOpen hook).
        /// ```swift
        /// error.kind == .misuse
        /// ```
        case misuse
    }

    /// What went wrong, as a case to switch on.
    /// ```swift
    /// switch error.kind { case .busy: retry(); default: throw error }
    /// ```
    public let kind: Kind
    /// What went wrong, in words that name the config, column or argument involved.
    /// ```swift
    /// print(error.message)   // "config 'backup' is not started"
    /// ```
    public let message: String
    /// The SQL involved, if any.
    /// ```swift
    /// print(error.sql ?? "")
    /// ```
    public let sql: String?
    /// The config involved, if any.
    /// ```swift
    /// error.configName   // "backup"
    /// ```
    public let configName: String?
    /// SQLite's own error behind this one (`.busy` from SQLite's "database is locked").
    /// ```swift
    /// if let sqlite = error.databaseError { print(sqlite.resultCode) }   // 5, SQLITE_BUSY
    /// ```
    public let databaseError: DatabaseError?
    /// Where a batch failed, when it was a batch.
    /// ```swift
    /// error.batchPosition?.index
    /// ```
    public internal(set) var batchPosition: BatchPosition?

    package init(_ kind: Kind, _ message: String, sql: String? = nil, configName: String? = nil, databaseError: DatabaseError? = nil) {
        self.kind = kind
        self.message = message
        self.sql = sql
        self.configName = configName
        self.databaseError = databaseError
    }

    /// The message, then the SQL, batch position and config when known.
    /// ```swift
    /// print(error)   // config 'backup' is not started; config: backup
    /// ```
    public var description: String {
        var text = message
        if let sql { text += "; SQL: \(sql)" }
        if let batchPosition { text += "; \(batchPosition)" }
        if let configName { text += "; config: \(configName)" }
        return text
    }
}

/// Runs item `index` of a batch of `count` items: a `DatabaseError` or `DicRecordError` it throws
/// comes out saying which item failed.
func batchItem<T>(_ index: Int, of count: Int, _ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch var error as DatabaseError {
        if error.batchPosition == nil { error.batchPosition = BatchPosition(index: index, count: count) }
        throw error
    } catch var error as DicRecordError {
        if error.batchPosition == nil { error.batchPosition = BatchPosition(index: index, count: count) }
        throw error
    }
}
