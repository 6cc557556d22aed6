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
    public let resultCode: Int32
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` is 2067, ...).
    public let extendedResultCode: Int32
    /// SQLite's message.
    public let message: String
    /// The statement that failed, if any.
    public let sql: String?
    /// The arguments bound to it, in parameter order.
    public let arguments: [DatabaseValue]
    /// The config (context) name the statement ran on.
    public let configName: String?
    /// The byte offset in `sql` that SQLite blames, when it says (syntax errors).
    public let errorOffset: Int?
    /// Where a batch failed: the 0-based index of the statement, row or record, and the batch's size.
    public internal(set) var batchPosition: BatchPosition?

    init(resultCode: Int32, extendedResultCode: Int32? = nil, message: String, sql: String? = nil,
         arguments: [DatabaseValue] = [], configName: String? = nil, errorOffset: Int? = nil) {
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
        self.init(resultCode: code, extendedResultCode: extended, message: message, sql: sql,
                  arguments: arguments, configName: configName, errorOffset: offset)
    }

    /// The name of the result code, like `SQLITE_CONSTRAINT`.
    public var codeName: String { String(cString: sqlite3_errstr(extendedResultCode)) }

    public var description: String {
        var text = "SQLite error \(extendedResultCode) (\(codeName)): \(message)"
        if let sql { text += "; SQL: \(sql)" }
        if let errorOffset { text += " (at offset \(errorOffset))" }
        if !arguments.isEmpty { text += "; arguments: [\(arguments.map(\.description).joined(separator: ", "))]" }
        if let batchPosition { text += "; \(batchPosition)" }
        if let configName { text += "; config: \(configName)" }
        return text
    }
}

/// The item of a batch (`batch`, `batchSave`, `batchUpdate`) that failed.
public struct BatchPosition: Sendable, Equatable, CustomStringConvertible {
    /// The 0-based index of the failing statement, argument row or record.
    public let index: Int
    /// The number of items in the batch.
    public let count: Int

    public var description: String { "batch item \(index) (0-based) of \(count)" }
}

/// A misuse of the library or an input it refuses: an unknown config, a wrong argument count,
/// a value it cannot store, a page number below 1, a write to a readonly context, ...
public struct DicRecordError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case unknownConfig
        case duplicateConfig
        case notStarted
        case readonly
        case argumentCount
        case unsupportedArgument
        case invalidArgument
        case multipleColumns
        case missingColumn
        case missingPrimaryKey
        case invalidJSON
        case busy
        case multipleStatements
        /// A model's declarations are wrong (a duplicate column, a type with no converter, ...).
        case invalidModel
        /// A model was used against a config it is not registered with.
        case notRegistered
        /// The database's schema or `user_version` is newer than the code (a downgrade).
        case schemaVersion
        /// A call the library cannot serve where it was made (a Db call on a config inside that
        /// config's onOpen hook).
        case misuse
    }

    public let kind: Kind
    public let message: String
    /// The SQL involved, if any.
    public let sql: String?
    /// The config involved, if any.
    public let configName: String?
    /// SQLite's own error behind this one (`.busy` from SQLite's "database is locked").
    public let databaseError: DatabaseError?
    /// Where a batch failed, when it was a batch.
    public internal(set) var batchPosition: BatchPosition?

    init(_ kind: Kind, _ message: String, sql: String? = nil, configName: String? = nil, databaseError: DatabaseError? = nil) {
        self.kind = kind
        self.message = message
        self.sql = sql
        self.configName = configName
        self.databaseError = databaseError
    }

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
