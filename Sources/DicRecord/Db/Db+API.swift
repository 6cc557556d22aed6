import Foundation

// The public methods of a `Db` handle. Each takes its arguments three ways: variadic
// (`find(sql, 1, "a")`), as an array (`arguments: [1, "a"]`) and, for `:name` placeholders, as a
// dictionary (`arguments: ["name": "a"]`). `Db+Static.swift` repeats them as static shortcuts on main.
extension Db {
    // MARK: Finding records

    /// All rows of `sql`.
    public func find(_ sql: String, _ args: DatabaseArgument...) throws -> [Record] {
        try findRecords(sql, .positional(args))
    }

    public func find(_ sql: String, arguments: [DatabaseArgument]) throws -> [Record] {
        try findRecords(sql, .positional(arguments))
    }

    public func find(_ sql: String, arguments: [String: DatabaseArgument]) throws -> [Record] {
        try findRecords(sql, .named(arguments))
    }

    /// The first row of `sql`, or nil. Steps one row only (no LIMIT needed).
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) throws -> Record? {
        try findFirstRecord(sql, .positional(args))
    }

    public func findFirst(_ sql: String, arguments: [DatabaseArgument]) throws -> Record? {
        try findFirstRecord(sql, .positional(arguments))
    }

    public func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) throws -> Record? {
        try findFirstRecord(sql, .named(arguments))
    }

    /// Every row of `table`.
    public func findAll(_ table: String) throws -> [Record] {
        try findRecords("SELECT * FROM \(SqlText.quote(table))", .none)
    }

    /// The row of `table` whose `primaryKey` is `id`, or nil.
    public func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") throws -> Record? {
        try findRecordById(table, id, primaryKey: primaryKey, columns: columns)
    }

    /// The row of `table` with a composite key: `findByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)`.
    public func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Record? {
        try findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*")
    }

    /// Streams the rows of `sql` in constant memory; return false from `body` to stop.
    /// The record passed to `body` is reused for the next row unless `body` keeps a reference to it.
    public func each(_ sql: String, _ args: DatabaseArgument..., body: (Record) throws -> Bool) throws {
        try eachRecord(sql, .positional(args), body)
    }

    public func each(_ sql: String, arguments: [DatabaseArgument], body: (Record) throws -> Bool) throws {
        try eachRecord(sql, .positional(arguments), body)
    }

    public func each(_ sql: String, arguments: [String: DatabaseArgument], body: (Record) throws -> Bool) throws {
        try eachRecord(sql, .named(arguments), body)
    }

    // MARK: Single-column queries

    /// The single column of every row as `T` (nil for NULL). More than one column is an error.
    public func query<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> [T?] {
        try queryValues(sql, .positional(args), as: T.self, limit: nil)
    }

    public func query<T>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) throws -> [T?] {
        try queryValues(sql, .positional(arguments), as: T.self, limit: nil)
    }

    public func query<T>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) throws -> [T?] {
        try queryValues(sql, .named(arguments), as: T.self, limit: nil)
    }

    /// The single column of the first row as `T`; nil when there is no row or it is NULL.
    public func queryFirst<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> T? {
        try queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil
    }

    public func queryFirst<T>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) throws -> T? {
        try queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil
    }

    public func queryFirst<T>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) throws -> T? {
        try queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil
    }

    /// `queryFirst(sql, args…, as: Int.self)`.
    public func queryInt(_ sql: String, _ args: DatabaseArgument...) throws -> Int? {
        try queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil
    }

    public func queryInt64(_ sql: String, _ args: DatabaseArgument...) throws -> Int64? {
        try queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil
    }

    public func queryDouble(_ sql: String, _ args: DatabaseArgument...) throws -> Double? {
        try queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil
    }

    public func queryString(_ sql: String, _ args: DatabaseArgument...) throws -> String? {
        try queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil
    }

    public func queryBool(_ sql: String, _ args: DatabaseArgument...) throws -> Bool? {
        try queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil
    }

    public func queryDate(_ sql: String, _ args: DatabaseArgument...) throws -> Date? {
        try queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil
    }

    public func queryData(_ sql: String, _ args: DatabaseArgument...) throws -> Data? {
        try queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil
    }

    // MARK: Writing

    /// Runs an INSERT, UPDATE, DELETE or DDL statement; returns the number of rows changed.
    @discardableResult
    public func update(_ sql: String, _ args: DatabaseArgument...) throws -> Int {
        try updateRows(sql, .positional(args))
    }

    @discardableResult
    public func update(_ sql: String, arguments: [DatabaseArgument]) throws -> Int {
        try updateRows(sql, .positional(arguments))
    }

    @discardableResult
    public func update(_ sql: String, arguments: [String: DatabaseArgument]) throws -> Int {
        try updateRows(sql, .named(arguments))
    }

    /// INSERTs the record's columns into `table`, writes the generated key back into the record
    /// and clears its modified flags. True when a row was inserted.
    @discardableResult
    public func save(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try saveRecord(table, record, primaryKey: primaryKey)
    }

    /// UPDATEs the record's modified columns (false when none is modified); the key must be present.
    @discardableResult
    public func update(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try updateRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the record's row by its key. True when a row was deleted.
    @discardableResult
    public func delete(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try deleteRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the row of `table` whose `primaryKey` is `id`. True when a row was deleted.
    @discardableResult
    public func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") throws -> Bool {
        try deleteByKeys(table, keys: [primaryKey], values: .positional([id]))
    }

    /// DELETEs the row of `table` with a composite key.
    @discardableResult
    public func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Bool {
        try deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids))
    }

    // MARK: Pagination

    /// Page `pageNumber` (from 1) of `select + " " + sqlExceptSelect`, with the total counted by
    /// `select count(*) from (<select> <sqlExceptSelect without a trailing ORDER BY>)`.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args))
    }

    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments))
    }

    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments))
    }

    /// `paginate` with a total you already know (cached, or counted once): no count query runs.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., totalRow: Int) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow)
    }

    /// Keyset pagination: the `pageSize` rows whose `key` comes after `lastKey` (nil for the first
    /// page), in key order. A deep page costs what the first one does, and nothing is counted.
    /// ```swift
    /// var page = try Db.paginate(after: nil, 20, "select *", "from people where active = ?", 1)
    /// while let next = page.nextKey { page = try Db.paginate(after: next, 20, "select *", "from people where active = ?", 1) }
    /// ```
    public func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) throws -> KeysetPage<Record> {
        try paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending)
    }

    // MARK: Batches (atomic: one transaction, or a savepoint inside an enclosing one)

    /// Runs every statement, all or nothing; returns the rows changed by each.
    @discardableResult
    public func batch(_ statements: [Sql]) throws -> [Int] {
        try runBatch(statements)
    }

    /// Runs `sql` once per argument list, all or nothing; returns the rows changed by each.
    @discardableResult
    public func batch(_ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        try runBatch(sql, rows)
    }

    /// Saves every record into `table` (as `save` does, keys written back), all or nothing.
    @discardableResult
    public func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try runBatchSave(table, records, primaryKey: primaryKey)
    }

    /// Updates every record's modified columns, all or nothing.
    @discardableResult
    public func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try runBatchUpdate(table, records, primaryKey: primaryKey)
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: commits when it returns true, rolls back when it returns false
    /// or throws (and rethrows). Nested, it is a SAVEPOINT that rolls back only its own work.
    @discardableResult
    public func tx(_ body: (Db) throws -> Bool) throws -> Bool {
        try runTx(body)
    }

    /// Runs `body` in a transaction that commits unless `body` throws; returns its result.
    public func transaction<T>(_ body: (Db) throws -> T) throws -> T {
        try runTransaction(body)
    }

    /// Runs `body` with the writer connection (joining the current transaction, if any).
    public func execute<T>(_ body: (Connection) throws -> T) throws -> T {
        try writing(body)
    }
}
