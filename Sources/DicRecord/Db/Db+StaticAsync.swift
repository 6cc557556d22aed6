import Foundation

// Static async shortcuts: `try await Db.find(...)` is `try await Db.main.find(...)`.
extension Db {
    /// The async form of `Db.tx`, on the main config: commits when `body` returns true, rolls back
    /// when it returns false or throws (and rethrows).
    /// ```swift
    /// try await Db.tx { db in try await db.update("delete from student where id = ?", 15) == 1 }
    /// ```
    @discardableResult
    public static func tx(_ body: (Db) async throws -> Bool) async throws -> Bool {
        try await Db.main.tx(body)
    }

    /// The async form of `Db.transaction`, on the main config: commits unless `body` throws; returns its result.
    /// ```swift
    /// let count = try await Db.transaction { db in try await db.queryInt("select count(*) from student") }
    /// ```
    public static func transaction<T>(_ body: (Db) async throws -> T) async throws -> T {
        try await Db.main.transaction(body)
    }

    /// The async form of `Db.execute`, on the main config: `body` runs with the writer connection on a pool thread.
    /// ```swift
    /// let rowid = try await Db.execute { connection in connection.lastInsertRowid }
    /// ```
    public static func execute<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await Db.main.execute(body)
    }

    /// The async form of `find`: all rows of `sql`, with the variadic arguments bound in order; an empty array when no row matches.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let teens = try await Db.find("select * from student where age > ?", 12)
    /// ```
    public static func find(_ sql: String, _ args: DatabaseArgument...) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords(sql, .positional(args)) }
    }
    /// The async form of `find`: all rows of `sql`, with the arguments given as an array (one per `?`).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let teens = try await Db.find("select * from student where age > ?", arguments: [12])
    /// ```
    public static func find(_ sql: String, arguments: [DatabaseArgument]) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords(sql, .positional(arguments)) }
    }
    /// The async form of `find`: all rows of `sql`, with the arguments given by name for `:name` placeholders.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let teens = try await Db.find("select * from student where age > :age", arguments: ["age": 12])
    /// ```
    public static func find(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords(sql, .named(arguments)) }
    }
    /// The async form of `findFirst`: the first row of `sql`, or nil when there is none. Steps one row only (no LIMIT needed).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try await Db.findFirst("select * from student where name = ?", "Jack")
    /// ```
    public static func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> Record? {
        try await Db.main.runAsync { try $0.findFirstRecord(sql, .positional(args)) }
    }
    /// The async form of `findFirst`: the first row of `sql`, or nil, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try await Db.findFirst("select * from student where name = ?", arguments: ["Jack"])
    /// ```
    public static func findFirst(_ sql: String, arguments: [DatabaseArgument]) async throws -> Record? {
        try await Db.main.runAsync { try $0.findFirstRecord(sql, .positional(arguments)) }
    }
    /// The async form of `findFirst`: the first row of `sql`, or nil, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try await Db.findFirst("select * from student where name = :name", arguments: ["name": "Jack"])
    /// ```
    public static func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Record? {
        try await Db.main.runAsync { try $0.findFirstRecord(sql, .named(arguments)) }
    }
    /// The async form of `findAll`: every row of `table`; an empty array when the table is empty.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let students = try await Db.findAll("student")
    /// ```
    public static func findAll(_ table: String) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords("SELECT * FROM \(SqlText.quote(table))", .none) }
    }
    /// The async form of `findById`: the row of `table` whose `primaryKey` is `id`, or nil when there is none; `columns` limits
    /// the columns read (default `*`).
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let student = try await Db.findById("student", 15)
    /// let names = try await Db.findById("student", 15, columns: "id, name")
    /// ```
    public static func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") async throws -> Record? {
        try await Db.main.runAsync { try $0.findRecordById(table, id, primaryKey: primaryKey, columns: columns) }
    }
    /// The async form of `findByIds`: the row of `table` with a composite key, or nil: the key columns are comma-separated in
    /// `primaryKey` and their values follow in the same order.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let row = try await Db.findByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    public static func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Record? {
        try await Db.main.runAsync { try $0.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*") }
    }
    /// The async form of `each`: streams the rows of `sql` in constant memory; return false from `body` to stop.
    /// The record passed to `body` is reused for the next row unless `body` keeps a reference to it.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.each("select * from student where age > ?", 12) { student in
    ///     print(student.name as Any); return true
    /// }
    /// ```
    public static func each(_ sql: String, _ args: DatabaseArgument..., body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await Db.main.runAsync { try $0.eachRecord(sql, .positional(args), body) }
    }
    /// The async form of `each`: streams the rows of `sql`, with the arguments given as an array; return false from `body` to stop.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.each("select * from student where age > ?", arguments: [12]) { _ in true }
    /// ```
    public static func each(_ sql: String, arguments: [DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await Db.main.runAsync { try $0.eachRecord(sql, .positional(arguments), body) }
    }
    /// The async form of `each`: streams the rows of `sql`, with the arguments given by name; return false from `body` to stop.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.each("select * from student where age > :age", arguments: ["age": 12]) { _ in true }
    /// ```
    public static func each(_ sql: String, arguments: [String: DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await Db.main.runAsync { try $0.eachRecord(sql, .named(arguments), body) }
    }
    /// The async form of `query`: the single column of every row as `T` (nil for NULL). A result with more than one column
    /// throws; a value that cannot convert to `T` throws a `ConversionError`.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let names = try await Db.query("select name from student where age > ?", 12, as: String.self)
    /// ```
    public static func query<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> [T?] {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: nil) }
    }
    /// The async form of `query`: the single column of every row as `T`, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let names = try await Db.query("select name from student where age > ?", arguments: [12], as: String.self)
    /// ```
    public static func query<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: nil) }
    }
    /// The async form of `query`: the single column of every row as `T`, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let names = try await Db.query("select name from student where age > :age", arguments: ["age": 12], as: String.self)
    /// ```
    public static func query<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await Db.main.runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: nil) }
    }
    /// The async form of `queryFirst`: the single column of the first row as `T`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let oldest = try await Db.queryFirst("select max(age) from student", as: Int.self)
    /// ```
    public static func queryFirst<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> T? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryFirst`: the single column of the first row as `T`, or nil, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let age = try await Db.queryFirst("select age from student where id = ?", arguments: [15], as: Int.self)
    /// ```
    public static func queryFirst<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> T? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryFirst`: the single column of the first row as `T`, or nil, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let age = try await Db.queryFirst("select age from student where id = :id", arguments: ["id": 15], as: Int.self)
    /// ```
    public static func queryFirst<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> T? {
        try await Db.main.runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryInt`: the single column of the first row as an `Int`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let count = try await Db.queryInt("select count(*) from student where age > ?", 12) ?? 0
    /// ```
    public static func queryInt(_ sql: String, _ args: DatabaseArgument...) async throws -> Int? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryInt64`: the single column of the first row as an `Int64`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let total = try await Db.queryInt64("select sum(score) from exam where student_id = ?", 15)
    /// ```
    public static func queryInt64(_ sql: String, _ args: DatabaseArgument...) async throws -> Int64? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryDouble`: the single column of the first row as a `Double`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let average = try await Db.queryDouble("select avg(age) from student")
    /// ```
    public static func queryDouble(_ sql: String, _ args: DatabaseArgument...) async throws -> Double? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryString`: the single column of the first row as a `String`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let name = try await Db.queryString("select name from student where id = ?", 15)
    /// ```
    public static func queryString(_ sql: String, _ args: DatabaseArgument...) async throws -> String? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryBool`: the single column of the first row as a `Bool` (0/1, or text such as "yes"); nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let active = try await Db.queryBool("select active from student where id = ?", 15)
    /// ```
    public static func queryBool(_ sql: String, _ args: DatabaseArgument...) async throws -> Bool? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryDate`: the single column of the first row as a `Date` (seconds since 1970, or SQLite date text); nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let born = try await Db.queryDate("select born from student where id = ?", 15)
    /// ```
    public static func queryDate(_ sql: String, _ args: DatabaseArgument...) async throws -> Date? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryData`: the single column of the first row as `Data`; nil when there is no row or it is NULL.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let photo = try await Db.queryData("select photo from student where id = ?", 15)
    /// ```
    public static func queryData(_ sql: String, _ args: DatabaseArgument...) async throws -> Data? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil }
    }
    /// The async form of `update`: runs an INSERT, UPDATE, DELETE or DDL statement; returns the number of rows changed.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let changed = try await Db.update("update student set age = age + 1 where name = ?", "Jack")
    /// ```
    @discardableResult
    public static func update(_ sql: String, _ args: DatabaseArgument...) async throws -> Int {
        try await Db.main.runAsync { try $0.updateRows(sql, .positional(args)) }
    }
    /// The async form of `update`: runs a write statement with the arguments given as an array; returns the number of rows changed.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.update("delete from student where age < ?", arguments: [6])
    /// ```
    @discardableResult
    public static func update(_ sql: String, arguments: [DatabaseArgument]) async throws -> Int {
        try await Db.main.runAsync { try $0.updateRows(sql, .positional(arguments)) }
    }
    /// The async form of `update`: runs a write statement with the arguments given by name; returns the number of rows changed.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.update("update student set age = :age where id = :id", arguments: ["age": 14, "id": 15])
    /// ```
    @discardableResult
    public static func update(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Int {
        try await Db.main.runAsync { try $0.updateRows(sql, .named(arguments)) }
    }
    /// The async form of `save`: iNSERTs the record's columns into `table`, writes the generated key back into the record
    /// and clears its modified flags. True when a row was inserted.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try Record(["name": "Jack", "age": 14])
    /// try await Db.save("student", jack)      // jack.id is now set
    /// ```
    @discardableResult
    public static func save(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.saveRecord(table, record, primaryKey: primaryKey) }
    }
    /// The async form of `update`: uPDATEs the record's modified columns (false when none is modified); a record without its
    /// key value throws.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let jack = try await Db.findById("student", 15)!
    /// jack.age = 15
    /// try await Db.update("student", jack)
    /// ```
    @discardableResult
    public static func update(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.updateRecord(table, record, primaryKey: primaryKey) }
    }
    /// The async form of `delete`: dELETEs the record's row by its key. True when a row was deleted.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// if let jack = try await Db.findById("student", 15) { try await Db.delete("student", jack) }
    /// ```
    @discardableResult
    public static func delete(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.deleteRecord(table, record, primaryKey: primaryKey) }
    }
    /// The async form of `deleteById`: dELETEs the row of `table` whose `primaryKey` is `id`. True when a row was deleted, false when there was none.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let deleted = try await Db.deleteById("student", 15)
    /// ```
    @discardableResult
    public static func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.deleteByKeys(table, keys: [primaryKey], values: .positional([id])) }
    }
    /// The async form of `deleteByIds`: dELETEs the row of `table` with a composite key (comma-separated columns, values in the same order).
    /// True when a row was deleted.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.deleteByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    @discardableResult
    public static func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Bool {
        try await Db.main.runAsync { try $0.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids)) }
    }
    /// The async form of `paginate`: page `pageNumber` (from 1) of `select + " " + sqlExceptSelect`, with the total counted by
    /// `select count(*) from (<select> <sqlExceptSelect without a trailing ORDER BY>)`.
    /// A `pageNumber` or `pageSize` below 1 throws; a page beyond the last has an empty list and the real totals.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try await Db.paginate(1, 10, "select *", "from student where age > ? order by name", 12)
    /// print(page.totalRow, page.list.count)
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }
    /// The async form of `paginate`: a page of records, with the arguments given as an array.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try await Db.paginate(2, 10, "select *", "from student where age > ?", arguments: [12])
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments)) }
    }
    /// The async form of `paginate`: a page of records, with the arguments given by name.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try await Db.paginate(2, 10, "select *", "from student where age > :age", arguments: ["age": 12])
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments)) }
    }
    /// The async form of `paginate`: `paginate` with a total you already know (cached, or counted once): no count query runs.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let page = try await Db.paginate(3, 10, "select *", "from student where age > ?", 12, totalRow: 245)
    /// ```
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., totalRow: Int) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow) }
    }
    /// The async form of keyset pagination, on the main config: the `pageSize` rows whose `key`
    /// comes after `lastKey` (nil for the first page), in key order.
    /// ```swift
    /// let page = try await Db.paginate(after: nil, 20, "select *", "from student where age > ?", 12)
    /// ```
    public static func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) async throws -> KeysetPage<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending) }
    }
    /// The async form of `batch`: runs every statement, all or nothing; returns the rows changed by each.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.batch([Sql("insert into student(name) values (?)", "Jack"),
    ///                    Sql("update teacher set students = students + 1 where id = ?", 3)])
    /// ```
    @discardableResult
    public static func batch(_ statements: [Sql]) async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatch(statements) }
    }
    /// The async form of `batch`: runs `sql` once per argument list, all or nothing; returns the rows changed by each.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.batch("insert into student(name, age) values (?, ?)", [["Jack", 14], ["Rose", 13]])
    /// ```
    @discardableResult
    public static func batch(_ sql: String, _ rows: [[DatabaseArgument]]) async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatch(sql, rows) }
    }
    /// The async form of `batchSave`: saves every record into `table` (as `save` does, keys written back), all or nothing.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// try await Db.batchSave("student", [try Record(["name": "Jack"]), try Record(["name": "Rose"])])
    /// ```
    @discardableResult
    public static func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatchSave(table, records, primaryKey: primaryKey) }
    }
    /// The async form of `batchUpdate`: updates every record's modified columns, all or nothing.
    /// Runs on the main config (a shortcut for `Db.main`).
    /// ```swift
    /// let students = try await Db.find("select * from student where age = ?", 13)
    /// for s in students { s.age = 14 }
    /// try await Db.batchUpdate("student", students)
    /// ```
    @discardableResult
    public static func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatchUpdate(table, records, primaryKey: primaryKey) }
    }
}
