import Foundation

// Static shortcuts: `Db.find(...)` is `Db.main.find(...)`, for every method of `Db+API.swift`.
extension Db {
    /// All rows of `sql`, with the variadic arguments bound in order; an empty array when no row matches.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let teens = try Db.find("select * from student where age > ?", 12)
    /// ```
    public static func find(_ sql: String, _ args: DatabaseArgument...) throws -> [Record] {
        try Db.main.findRecords(sql, .positional(args))
    }

    /// All rows of `sql`, with the arguments given as an array (one per `?`).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let teens = try Db.find("select * from student where age > ?", arguments: [12])
    /// ```
    public static func find(_ sql: String, arguments: [DatabaseArgument]) throws -> [Record] {
        try Db.main.findRecords(sql, .positional(arguments))
    }

    /// All rows of `sql`, with the arguments given by name for `:name` placeholders.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let teens = try Db.find("select * from student where age > :age", arguments: ["age": 12])
    /// ```
    public static func find(_ sql: String, arguments: [String: DatabaseArgument]) throws -> [Record] {
        try Db.main.findRecords(sql, .named(arguments))
    }

    /// The first row of `sql`, or nil when there is none. Steps one row only (no LIMIT needed).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try Db.findFirst("select * from student where name = ?", "Jack")
    /// ```
    public static func findFirst(_ sql: String, _ args: DatabaseArgument...) throws -> Record? {
        try Db.main.findFirstRecord(sql, .positional(args))
    }

    /// The first row of `sql`, or nil, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try Db.findFirst("select * from student where name = ?", arguments: ["Jack"])
    /// ```
    public static func findFirst(_ sql: String, arguments: [DatabaseArgument]) throws -> Record? {
        try Db.main.findFirstRecord(sql, .positional(arguments))
    }

    /// The first row of `sql`, or nil, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try Db.findFirst("select * from student where name = :name", arguments: ["name": "Jack"])
    /// ```
    public static func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) throws -> Record? {
        try Db.main.findFirstRecord(sql, .named(arguments))
    }

    /// Every row of `table`; an empty array when the table is empty.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let students = try Db.findAll("student")
    /// ```
    public static func findAll(_ table: String) throws -> [Record] {
        try Db.main.findRecords("SELECT * FROM \(SqlText.quote(table))", .none)
    }

    /// The row of `table` whose `primaryKey` is `id`, or nil when there is none; `columns` limits
    /// the columns read (default `*`).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let student = try Db.findById("student", 15)
    /// let names = try Db.findById("student", 15, columns: "id, name")
    /// ```
    public static func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") throws -> Record? {
        try Db.main.findRecordById(table, id, primaryKey: primaryKey, columns: columns)
    }

    /// The row of `table` with a composite key, or nil: the key columns are comma-separated in
    /// `primaryKey` and their values follow in the same order.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let row = try Db.findByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    public static func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Record? {
        try Db.main.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*")
    }

    /// Streams the rows of `sql` in constant memory; return false from `body` to stop.
    /// The record passed to `body` is reused for the next row unless `body` keeps a reference to it.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.each("select * from student where age > ?", 12) { student in
    ///     print(student.name as Any); return true
    /// }
    /// ```
    public static func each(_ sql: String, _ args: DatabaseArgument..., body: (Record) throws -> Bool) throws {
        try Db.main.eachRecord(sql, .positional(args), body)
    }

    /// Streams the rows of `sql`, with the arguments given as an array; return false from `body` to stop.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.each("select * from student where age > ?", arguments: [12]) { _ in true }
    /// ```
    public static func each(_ sql: String, arguments: [DatabaseArgument], body: (Record) throws -> Bool) throws {
        try Db.main.eachRecord(sql, .positional(arguments), body)
    }

    /// Streams the rows of `sql`, with the arguments given by name; return false from `body` to stop.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.each("select * from student where age > :age", arguments: ["age": 12]) { _ in true }
    /// ```
    public static func each(_ sql: String, arguments: [String: DatabaseArgument], body: (Record) throws -> Bool) throws {
        try Db.main.eachRecord(sql, .named(arguments), body)
    }

    /// The single column of every row as `T` (nil for NULL). A result with more than one column
    /// throws; a value that cannot convert to `T` throws a `ConversionError`.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let names = try Db.query("select name from student where age > ?", 12, as: String.self)
    /// ```
    public static func query<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> [T?] {
        try Db.main.queryValues(sql, .positional(args), as: T.self, limit: nil)
    }

    /// The single column of every row as `T`, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let names = try Db.query("select name from student where age > ?", arguments: [12], as: String.self)
    /// ```
    public static func query<T>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) throws -> [T?] {
        try Db.main.queryValues(sql, .positional(arguments), as: T.self, limit: nil)
    }

    /// The single column of every row as `T`, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let names = try Db.query("select name from student where age > :age", arguments: ["age": 12], as: String.self)
    /// ```
    public static func query<T>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) throws -> [T?] {
        try Db.main.queryValues(sql, .named(arguments), as: T.self, limit: nil)
    }

    /// The single column of the first row as `T`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let oldest = try Db.queryFirst("select max(age) from student", as: Int.self)
    /// ```
    public static func queryFirst<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> T? {
        try Db.main.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as `T`, or nil, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let age = try Db.queryFirst("select age from student where id = ?", arguments: [15], as: Int.self)
    /// ```
    public static func queryFirst<T>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) throws -> T? {
        try Db.main.queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as `T`, or nil, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let age = try Db.queryFirst("select age from student where id = :id", arguments: ["id": 15], as: Int.self)
    /// ```
    public static func queryFirst<T>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) throws -> T? {
        try Db.main.queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as an `Int`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let count = try Db.queryInt("select count(*) from student where age > ?", 12) ?? 0
    /// ```
    public static func queryInt(_ sql: String, _ args: DatabaseArgument...) throws -> Int? {
        try Db.main.queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as an `Int64`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let total = try Db.queryInt64("select sum(score) from exam where student_id = ?", 15)
    /// ```
    public static func queryInt64(_ sql: String, _ args: DatabaseArgument...) throws -> Int64? {
        try Db.main.queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `Double`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let average = try Db.queryDouble("select avg(age) from student")
    /// ```
    public static func queryDouble(_ sql: String, _ args: DatabaseArgument...) throws -> Double? {
        try Db.main.queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `String`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let name = try Db.queryString("select name from student where id = ?", 15)
    /// ```
    public static func queryString(_ sql: String, _ args: DatabaseArgument...) throws -> String? {
        try Db.main.queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `Bool` (0/1, or text such as "yes"); nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let active = try Db.queryBool("select active from student where id = ?", 15)
    /// ```
    public static func queryBool(_ sql: String, _ args: DatabaseArgument...) throws -> Bool? {
        try Db.main.queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `Date` (seconds since 1970, or SQLite date text); nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let born = try Db.queryDate("select born from student where id = ?", 15)
    /// ```
    public static func queryDate(_ sql: String, _ args: DatabaseArgument...) throws -> Date? {
        try Db.main.queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as `Data`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let photo = try Db.queryData("select photo from student where id = ?", 15)
    /// ```
    public static func queryData(_ sql: String, _ args: DatabaseArgument...) throws -> Data? {
        try Db.main.queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil
    }

    /// Runs an INSERT, UPDATE, DELETE or DDL statement; returns the number of rows changed.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let changed = try Db.update("update student set age = age + 1 where name = ?", "Jack")
    /// ```
    @discardableResult
    public static func update(_ sql: String, _ args: DatabaseArgument...) throws -> Int {
        try Db.main.updateRows(sql, .positional(args))
    }

    /// Runs a write statement with the arguments given as an array; returns the number of rows changed.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.update("delete from student where age < ?", arguments: [6])
    /// ```
    @discardableResult
    public static func update(_ sql: String, arguments: [DatabaseArgument]) throws -> Int {
        try Db.main.updateRows(sql, .positional(arguments))
    }

    /// Runs a write statement with the arguments given by name; returns the number of rows changed.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.update("update student set age = :age where id = :id", arguments: ["age": 14, "id": 15])
    /// ```
    @discardableResult
    public static func update(_ sql: String, arguments: [String: DatabaseArgument]) throws -> Int {
        try Db.main.updateRows(sql, .named(arguments))
    }

    /// INSERTs the record's columns into `table`, writes the generated key back into the record
    /// and clears its modified flags. True when a row was inserted.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try Record(["name": "Jack", "age": 14])
    /// try Db.save("student", jack)      // jack.id is now set
    /// ```
    @discardableResult
    public static func save(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.saveRecord(table, record, primaryKey: primaryKey)
    }

    /// UPDATEs the record's modified columns (false when none is modified); a record without its
    /// key value throws.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try Db.findById("student", 15)!
    /// jack.age = 15
    /// try Db.update("student", jack)
    /// ```
    @discardableResult
    public static func update(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.updateRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the record's row by its key. True when a row was deleted.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// if let jack = try Db.findById("student", 15) { try Db.delete("student", jack) }
    /// ```
    @discardableResult
    public static func delete(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.deleteRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the row of `table` whose `primaryKey` is `id`. True when a row was deleted, false when there was none.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let deleted = try Db.deleteById("student", 15)
    /// ```
    @discardableResult
    public static func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") throws -> Bool {
        try Db.main.deleteByKeys(table, keys: [primaryKey], values: .positional([id]))
    }

    /// DELETEs the row of `table` with a composite key (comma-separated columns, values in the same order).
    /// True when a row was deleted.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.deleteByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    @discardableResult
    public static func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Bool {
        try Db.main.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids))
    }

    /// Page `pageNumber` (from 1) of `select + " " + sqlExceptSelect`, with the total counted by
    /// `select count(*) from (<select> <sqlExceptSelect without a trailing ORDER BY>)`.
    /// A `pageNumber` or `pageSize` below 1 throws; a page beyond the last has an empty list and the real totals.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try Db.paginate(1, 10, "select *", "from student where age > ? order by name", 12)
    /// print(page.totalRow, page.list.count)
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args))
    }

    /// A page of records, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try Db.paginate(2, 10, "select *", "from student where age > ?", arguments: [12])
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments))
    }

    /// A page of records, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try Db.paginate(2, 10, "select *", "from student where age > :age", arguments: ["age": 12])
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments))
    }

    /// `paginate` with a total you already know (cached, or counted once): no count query runs.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try Db.paginate(3, 10, "select *", "from student where age > ?", 12, totalRow: 245)
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., totalRow: Int) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow)
    }

    /// Keyset pagination on the main config: the `pageSize` rows whose `key` comes after `lastKey`
    /// (nil for the first page), in key order; see the instance method.
    /// ```swift
    /// let page = try Db.paginate(after: nil, 20, "select *", "from student where age > ?", 12)
    /// ```
    public static func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) throws -> KeysetPage<Record> {
        try Db.main.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending)
    }

    /// Runs every statement, all or nothing; returns the rows changed by each.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.batch([Sql("insert into student(name) values (?)", "Jack"),
    ///                    Sql("update teacher set students = students + 1 where id = ?", 3)])
    /// ```
    @discardableResult
    public static func batch(_ statements: [Sql]) throws -> [Int] {
        try Db.main.runBatch(statements)
    }

    /// Runs `sql` once per argument list, all or nothing; returns the rows changed by each.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.batch("insert into student(name, age) values (?, ?)", [["Jack", 14], ["Rose", 13]])
    /// ```
    @discardableResult
    public static func batch(_ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        try Db.main.runBatch(sql, rows)
    }

    /// Saves every record into `table` (as `save` does, keys written back), all or nothing.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.batchSave("student", [try Record(["name": "Jack"]), try Record(["name": "Rose"])])
    /// ```
    @discardableResult
    public static func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try Db.main.runBatchSave(table, records, primaryKey: primaryKey)
    }

    /// Updates every record's modified columns, all or nothing.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let students = try Db.find("select * from student where age = ?", 13)
    /// for s in students { s.age = 14 }
    /// try Db.batchUpdate("student", students)
    /// ```
    @discardableResult
    public static func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try Db.main.runBatchUpdate(table, records, primaryKey: primaryKey)
    }

    /// Runs `body` in a transaction: commits when it returns true, rolls back when it returns false
    /// or throws (and rethrows). Nested, it is a SAVEPOINT that rolls back only its own work.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.tx { db in
    ///     try db.update("update account set balance = balance - 10 where id = ?", 1) == 1
    /// }
    /// ```
    @discardableResult
    public static func tx(_ body: (Db) throws -> Bool) throws -> Bool {
        try Db.main.runTx(body)
    }

    /// Runs `body` in a transaction that commits unless `body` throws; returns its result.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let id = try Db.transaction { db in
    ///     try db.update("insert into student(name) values (?)", "Jack")
    ///     return try db.queryInt("select last_insert_rowid()")
    /// }
    /// ```
    public static func transaction<T>(_ body: (Db) throws -> T) throws -> T {
        try Db.main.runTransaction(body)
    }

    /// Runs `body` with the writer connection (joining the current transaction, if any).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try Db.execute { connection in try connection.execute("pragma optimize") }
    /// ```
    public static func execute<T>(_ body: (Connection) throws -> T) throws -> T {
        try Db.main.writing(body)
    }
}
