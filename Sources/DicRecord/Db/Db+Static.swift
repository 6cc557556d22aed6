import Foundation

// Static shortcuts: `Db.find(...)` is `Db.main.find(...)`, for every method of `Db+API.swift`.
extension Db {
    /// All rows of `sql`.
    public static func find(_ sql: String, _ args: DatabaseArgument...) throws -> [Record] {
        try Db.main.findRecords(sql, .positional(args))
    }

    public static func find(_ sql: String, arguments: [DatabaseArgument]) throws -> [Record] {
        try Db.main.findRecords(sql, .positional(arguments))
    }

    public static func find(_ sql: String, arguments: [String: DatabaseArgument]) throws -> [Record] {
        try Db.main.findRecords(sql, .named(arguments))
    }

    /// The first row of `sql`, or nil. Steps one row only (no LIMIT needed).
    public static func findFirst(_ sql: String, _ args: DatabaseArgument...) throws -> Record? {
        try Db.main.findFirstRecord(sql, .positional(args))
    }

    public static func findFirst(_ sql: String, arguments: [DatabaseArgument]) throws -> Record? {
        try Db.main.findFirstRecord(sql, .positional(arguments))
    }

    public static func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) throws -> Record? {
        try Db.main.findFirstRecord(sql, .named(arguments))
    }

    /// Every row of `table`.
    public static func findAll(_ table: String) throws -> [Record] {
        try Db.main.findRecords("SELECT * FROM \(SqlText.quote(table))", .none)
    }

    /// The row of `table` whose `primaryKey` is `id`, or nil.
    public static func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") throws -> Record? {
        try Db.main.findRecordById(table, id, primaryKey: primaryKey, columns: columns)
    }

    /// The row of `table` with a composite key: `findByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)`.
    public static func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Record? {
        try Db.main.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*")
    }

    /// Streams the rows of `sql` in constant memory; return false from `body` to stop.
    /// The record passed to `body` is reused for the next row unless `body` keeps a reference to it.
    public static func each(_ sql: String, _ args: DatabaseArgument..., body: (Record) throws -> Bool) throws {
        try Db.main.eachRecord(sql, .positional(args), body)
    }

    public static func each(_ sql: String, arguments: [DatabaseArgument], body: (Record) throws -> Bool) throws {
        try Db.main.eachRecord(sql, .positional(arguments), body)
    }

    public static func each(_ sql: String, arguments: [String: DatabaseArgument], body: (Record) throws -> Bool) throws {
        try Db.main.eachRecord(sql, .named(arguments), body)
    }

    /// The single column of every row as `T` (nil for NULL). More than one column is an error.
    public static func query<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> [T?] {
        try Db.main.queryValues(sql, .positional(args), as: T.self, limit: nil)
    }

    public static func query<T>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) throws -> [T?] {
        try Db.main.queryValues(sql, .positional(arguments), as: T.self, limit: nil)
    }

    public static func query<T>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) throws -> [T?] {
        try Db.main.queryValues(sql, .named(arguments), as: T.self, limit: nil)
    }

    /// The single column of the first row as `T`; nil when there is no row or it is NULL.
    public static func queryFirst<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> T? {
        try Db.main.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil
    }

    public static func queryFirst<T>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) throws -> T? {
        try Db.main.queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil
    }

    public static func queryFirst<T>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) throws -> T? {
        try Db.main.queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil
    }

    /// `queryFirst(sql, args…, as: Int.self)`.
    public static func queryInt(_ sql: String, _ args: DatabaseArgument...) throws -> Int? {
        try Db.main.queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil
    }

    public static func queryInt64(_ sql: String, _ args: DatabaseArgument...) throws -> Int64? {
        try Db.main.queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil
    }

    public static func queryDouble(_ sql: String, _ args: DatabaseArgument...) throws -> Double? {
        try Db.main.queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil
    }

    public static func queryString(_ sql: String, _ args: DatabaseArgument...) throws -> String? {
        try Db.main.queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil
    }

    public static func queryBool(_ sql: String, _ args: DatabaseArgument...) throws -> Bool? {
        try Db.main.queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil
    }

    public static func queryDate(_ sql: String, _ args: DatabaseArgument...) throws -> Date? {
        try Db.main.queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil
    }

    public static func queryData(_ sql: String, _ args: DatabaseArgument...) throws -> Data? {
        try Db.main.queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil
    }

    /// Runs an INSERT, UPDATE, DELETE or DDL statement; returns the number of rows changed.
    @discardableResult
    public static func update(_ sql: String, _ args: DatabaseArgument...) throws -> Int {
        try Db.main.updateRows(sql, .positional(args))
    }

    @discardableResult
    public static func update(_ sql: String, arguments: [DatabaseArgument]) throws -> Int {
        try Db.main.updateRows(sql, .positional(arguments))
    }

    @discardableResult
    public static func update(_ sql: String, arguments: [String: DatabaseArgument]) throws -> Int {
        try Db.main.updateRows(sql, .named(arguments))
    }

    /// INSERTs the record's columns into `table`, writes the generated key back into the record
    /// and clears its modified flags. True when a row was inserted.
    @discardableResult
    public static func save(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.saveRecord(table, record, primaryKey: primaryKey)
    }

    /// UPDATEs the record's modified columns (false when none is modified); the key must be present.
    @discardableResult
    public static func update(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.updateRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the record's row by its key. True when a row was deleted.
    @discardableResult
    public static func delete(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.deleteRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the row of `table` whose `primaryKey` is `id`. True when a row was deleted.
    @discardableResult
    public static func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") throws -> Bool {
        try Db.main.deleteByKeys(table, keys: [primaryKey], values: .positional([id]))
    }

    /// DELETEs the row of `table` with a composite key.
    @discardableResult
    public static func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Bool {
        try Db.main.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids))
    }

    /// Page `pageNumber` (from 1) of `select + " " + sqlExceptSelect`, with the total counted by
    /// `select count(*) from (<select> <sqlExceptSelect without a trailing ORDER BY>)`.
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args))
    }

    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments))
    }

    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments))
    }

    /// `paginate` with a total you already know (cached, or counted once): no count query runs.
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., totalRow: Int) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow)
    }

    /// Keyset pagination on main; see the instance method.
    public static func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) throws -> KeysetPage<Record> {
        try Db.main.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending)
    }

    /// Runs every statement, all or nothing; returns the rows changed by each.
    @discardableResult
    public static func batch(_ statements: [Sql]) throws -> [Int] {
        try Db.main.runBatch(statements)
    }

    /// Runs `sql` once per argument list, all or nothing; returns the rows changed by each.
    @discardableResult
    public static func batch(_ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        try Db.main.runBatch(sql, rows)
    }

    /// Saves every record into `table` (as `save` does, keys written back), all or nothing.
    @discardableResult
    public static func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try Db.main.runBatchSave(table, records, primaryKey: primaryKey)
    }

    /// Updates every record's modified columns, all or nothing.
    @discardableResult
    public static func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try Db.main.runBatchUpdate(table, records, primaryKey: primaryKey)
    }

    /// Runs `body` in a transaction: commits when it returns true, rolls back when it returns false
    /// or throws (and rethrows). Nested, it is a SAVEPOINT that rolls back only its own work.
    @discardableResult
    public static func tx(_ body: (Db) throws -> Bool) throws -> Bool {
        try Db.main.runTx(body)
    }

    /// Runs `body` in a transaction that commits unless `body` throws; returns its result.
    public static func transaction<T>(_ body: (Db) throws -> T) throws -> T {
        try Db.main.runTransaction(body)
    }

    /// Runs `body` with the writer connection (joining the current transaction, if any).
    public static func execute<T>(_ body: (Connection) throws -> T) throws -> T {
        try Db.main.writing(body)
    }
}
