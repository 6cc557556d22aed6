import Foundation

// The async API: every method of `Db+API.swift` has a twin that runs off the caller's thread (on
// threads of its own, never blocking Swift's cooperative pool) and returns Sendable results.
//
// Inside `try await db.tx { db in … }`, every call the task makes on that config (async or not,
// from the closure, from its child tasks, or nested in other library calls) joins the transaction.
// Long reads (`find`, `each`, `query`, `paginate`) stop between rows when the task is cancelled and
// throw `CancellationError`. What a transaction does is in Transactions.swift.
extension Db {
    /// Runs `work` with this handle on a pool thread, inside the calling task's async transactions.
    func runAsync<T>(_ work: (Db) throws -> T) async throws -> sending T {
        try await BlockingPool.performForTask { try work(self) }
    }

    // MARK: Transactions

    /// The async form of `tx(_:)`: commits when `body` returns true, rolls back when it returns
    /// false or throws (and rethrows). Every call the task makes on this config while `body`
    /// runs joins the transaction; nested, it is a SAVEPOINT.
    /// ```swift
    /// try await Db.use("bank").tx { db in
    ///     try await db.update("update account set balance = balance - ? where id = ?", 10, 1)
    ///     try await db.update("update account set balance = balance + ? where id = ?", 10, 2)
    ///     return true
    /// }
    /// ```
    @discardableResult
    public func tx(_ body: (Db) async throws -> Bool) async throws -> Bool {
        try await runAsyncTransaction(body, commit: { $0 })
    }

    /// The async form of `transaction`: commits unless `body` throws; returns its result. Every call
    /// the task makes on this config while `body` runs joins the transaction.
    /// ```swift
    /// let id = try await Db.use("backup").transaction { db in
    ///     try await db.update("insert into student(name) values (?)", "Jack")
    ///     return try await db.queryInt("select last_insert_rowid()")
    /// }
    /// ```
    public func transaction<T>(_ body: (Db) async throws -> T) async throws -> T {
        try await runAsyncTransaction(body, commit: { _ in true })
    }

    /// The async form of `execute`: `body` runs with the writer connection on a pool thread
    /// (joining the task's transaction, if any); returns its result.
    /// ```swift
    /// try await Db.main.execute { connection in try connection.execute("pragma optimize") }
    /// ```
    public func execute<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await runAsync { try $0.writing(body) }
    }

    // MARK: Twins of Db+API.swift

    /// The async form of `find`: all rows of `sql`, with the variadic arguments bound in order; an empty array when no row matches.
    /// ```swift
    /// let teens = try await Db.use("backup").find("select * from student where age > ?", 12)
    /// ```
    public func find(_ sql: String, _ args: DatabaseArgument...) async throws -> [Record] {
        try await runAsync { try $0.findRecords(sql, .positional(args)) }
    }
    /// The async form of `find`: all rows of `sql`, with the arguments given as an array (one per `?`).
    /// ```swift
    /// let teens = try await Db.main.find("select * from student where age > ?", arguments: [12])
    /// ```
    public func find(_ sql: String, arguments: [DatabaseArgument]) async throws -> [Record] {
        try await runAsync { try $0.findRecords(sql, .positional(arguments)) }
    }
    /// The async form of `find`: all rows of `sql`, with the arguments given by name for `:name` placeholders.
    /// ```swift
    /// let teens = try await Db.main.find("select * from student where age > :age", arguments: ["age": 12])
    /// ```
    public func find(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> [Record] {
        try await runAsync { try $0.findRecords(sql, .named(arguments)) }
    }
    /// The async form of `findFirst`: the first row of `sql`, or nil when there is none. Steps one row only (no LIMIT needed).
    /// ```swift
    /// let jack = try await Db.use("backup").findFirst("select * from student where name = ?", "Jack")
    /// ```
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> Record? {
        try await runAsync { try $0.findFirstRecord(sql, .positional(args)) }
    }
    /// The async form of `findFirst`: the first row of `sql`, or nil, with the arguments given as an array.
    /// ```swift
    /// let jack = try await Db.main.findFirst("select * from student where name = ?", arguments: ["Jack"])
    /// ```
    public func findFirst(_ sql: String, arguments: [DatabaseArgument]) async throws -> Record? {
        try await runAsync { try $0.findFirstRecord(sql, .positional(arguments)) }
    }
    /// The async form of `findFirst`: the first row of `sql`, or nil, with the arguments given by name.
    /// ```swift
    /// let jack = try await Db.main.findFirst("select * from student where name = :name", arguments: ["name": "Jack"])
    /// ```
    public func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Record? {
        try await runAsync { try $0.findFirstRecord(sql, .named(arguments)) }
    }
    /// The async form of `findAll`: every row of `table`; an empty array when the table is empty.
    /// ```swift
    /// let students = try await Db.use("backup").findAll("student")
    /// ```
    public func findAll(_ table: String) async throws -> [Record] {
        try await runAsync { try $0.findRecords("SELECT * FROM \(SqlText.quote(table))", .none) }
    }
    /// The async form of `findById`: the row of `table` whose `primaryKey` is `id`, or nil when there is none; `columns` limits
    /// the columns read (default `*`).
    /// ```swift
    /// let student = try await Db.main.findById("student", 15)
    /// let names = try await Db.main.findById("student", 15, columns: "id, name")
    /// ```
    public func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") async throws -> Record? {
        try await runAsync { try $0.findRecordById(table, id, primaryKey: primaryKey, columns: columns) }
    }
    /// The async form of `findByIds`: the row of `table` with a composite key, or nil: the key columns are comma-separated in
    /// `primaryKey` and their values follow in the same order.
    /// ```swift
    /// let row = try await Db.main.findByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    public func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Record? {
        try await runAsync { try $0.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*") }
    }
    /// The async form of `each`: streams the rows of `sql` in constant memory; return false from `body` to stop.
    /// The record passed to `body` is reused for the next row unless `body` keeps a reference to it.
    /// ```swift
    /// try await Db.main.each("select * from student where age > ?", 12) { student in
    ///     print(student.name as Any); return true
    /// }
    /// ```
    public func each(_ sql: String, _ args: DatabaseArgument..., body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync { try $0.eachRecord(sql, .positional(args), body) }
    }
    /// The async form of `each`: streams the rows of `sql`, with the arguments given as an array; return false from `body` to stop.
    /// ```swift
    /// try await Db.main.each("select * from student where age > ?", arguments: [12]) { _ in true }
    /// ```
    public func each(_ sql: String, arguments: [DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync { try $0.eachRecord(sql, .positional(arguments), body) }
    }
    /// The async form of `each`: streams the rows of `sql`, with the arguments given by name; return false from `body` to stop.
    /// ```swift
    /// try await Db.main.each("select * from student where age > :age", arguments: ["age": 12]) { _ in true }
    /// ```
    public func each(_ sql: String, arguments: [String: DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync { try $0.eachRecord(sql, .named(arguments), body) }
    }
    /// The async form of `query`: the single column of every row as `T` (nil for NULL). A result with more than one column
    /// throws; a value that cannot convert to `T` throws a `ConversionError`.
    /// ```swift
    /// let names = try await Db.main.query("select name from student where age > ?", 12, as: String.self)
    /// ```
    public func query<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: nil) }
    }
    /// The async form of `query`: the single column of every row as `T`, with the arguments given as an array.
    /// ```swift
    /// let names = try await Db.main.query("select name from student where age > ?", arguments: [12], as: String.self)
    /// ```
    public func query<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: nil) }
    }
    /// The async form of `query`: the single column of every row as `T`, with the arguments given by name.
    /// ```swift
    /// let names = try await Db.main.query("select name from student where age > :age", arguments: ["age": 12], as: String.self)
    /// ```
    public func query<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: nil) }
    }
    /// The async form of `queryFirst`: the single column of the first row as `T`; nil when there is no row or it is NULL.
    /// ```swift
    /// let oldest = try await Db.main.queryFirst("select max(age) from student", as: Int.self)
    /// ```
    public func queryFirst<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryFirst`: the single column of the first row as `T`, or nil, with the arguments given as an array.
    /// ```swift
    /// let age = try await Db.main.queryFirst("select age from student where id = ?", arguments: [15], as: Int.self)
    /// ```
    public func queryFirst<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryFirst`: the single column of the first row as `T`, or nil, with the arguments given by name.
    /// ```swift
    /// let age = try await Db.main.queryFirst("select age from student where id = :id", arguments: ["id": 15], as: Int.self)
    /// ```
    public func queryFirst<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryInt`: the single column of the first row as an `Int`; nil when there is no row or it is NULL.
    /// ```swift
    /// let count = try await Db.main.queryInt("select count(*) from student where age > ?", 12) ?? 0
    /// ```
    public func queryInt(_ sql: String, _ args: DatabaseArgument...) async throws -> Int? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryInt64`: the single column of the first row as an `Int64`; nil when there is no row or it is NULL.
    /// ```swift
    /// let total = try await Db.main.queryInt64("select sum(score) from exam where student_id = ?", 15)
    /// ```
    public func queryInt64(_ sql: String, _ args: DatabaseArgument...) async throws -> Int64? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryDouble`: the single column of the first row as a `Double`; nil when there is no row or it is NULL.
    /// ```swift
    /// let average = try await Db.main.queryDouble("select avg(age) from student")
    /// ```
    public func queryDouble(_ sql: String, _ args: DatabaseArgument...) async throws -> Double? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryString`: the single column of the first row as a `String`; nil when there is no row or it is NULL.
    /// ```swift
    /// let name = try await Db.main.queryString("select name from student where id = ?", 15)
    /// ```
    public func queryString(_ sql: String, _ args: DatabaseArgument...) async throws -> String? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryBool`: the single column of the first row as a `Bool` (0/1, or text such as "yes"); nil when there is no row or it is NULL.
    /// ```swift
    /// let active = try await Db.main.queryBool("select active from student where id = ?", 15)
    /// ```
    public func queryBool(_ sql: String, _ args: DatabaseArgument...) async throws -> Bool? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryDate`: the single column of the first row as a `Date` (seconds since 1970, or SQLite date text); nil when there is no row or it is NULL.
    /// ```swift
    /// let born = try await Db.main.queryDate("select born from student where id = ?", 15)
    /// ```
    public func queryDate(_ sql: String, _ args: DatabaseArgument...) async throws -> Date? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil }
    }
    /// The async form of `queryData`: the single column of the first row as `Data`; nil when there is no row or it is NULL.
    /// ```swift
    /// let photo = try await Db.main.queryData("select photo from student where id = ?", 15)
    /// ```
    public func queryData(_ sql: String, _ args: DatabaseArgument...) async throws -> Data? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil }
    }
    /// The async form of `update`: runs an INSERT, UPDATE, DELETE or DDL statement; returns the number of rows changed.
    /// ```swift
    /// let changed = try await Db.main.update("update student set age = age + 1 where name = ?", "Jack")
    /// ```
    @discardableResult
    public func update(_ sql: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.updateRows(sql, .positional(args)) }
    }
    /// The async form of `update`: runs a write statement with the arguments given as an array; returns the number of rows changed.
    /// ```swift
    /// try await Db.main.update("delete from student where age < ?", arguments: [6])
    /// ```
    @discardableResult
    public func update(_ sql: String, arguments: [DatabaseArgument]) async throws -> Int {
        try await runAsync { try $0.updateRows(sql, .positional(arguments)) }
    }
    /// The async form of `update`: runs a write statement with the arguments given by name; returns the number of rows changed.
    /// ```swift
    /// try await Db.main.update("update student set age = :age where id = :id", arguments: ["age": 14, "id": 15])
    /// ```
    @discardableResult
    public func update(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Int {
        try await runAsync { try $0.updateRows(sql, .named(arguments)) }
    }
    /// The async form of `save`: iNSERTs the record's columns into `table`, writes the generated key back into the record
    /// and clears its modified flags. True when a row was inserted.
    /// ```swift
    /// let jack = try Record(["name": "Jack", "age": 14])
    /// try await Db.main.save("student", jack)      // jack.id is now set
    /// ```
    @discardableResult
    public func save(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.saveRecord(table, record, primaryKey: primaryKey) }
    }
    /// The async form of `update`: uPDATEs the record's modified columns (false when none is modified); a record without its
    /// key value throws.
    /// ```swift
    /// let jack = try await Db.main.findById("student", 15)!
    /// jack.age = 15
    /// try await Db.main.update("student", jack)
    /// ```
    @discardableResult
    public func update(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.updateRecord(table, record, primaryKey: primaryKey) }
    }
    /// The async form of `delete`: dELETEs the record's row by its key. True when a row was deleted.
    /// ```swift
    /// if let jack = try await Db.main.findById("student", 15) { try await Db.main.delete("student", jack) }
    /// ```
    @discardableResult
    public func delete(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.deleteRecord(table, record, primaryKey: primaryKey) }
    }
    /// The async form of `deleteById`: dELETEs the row of `table` whose `primaryKey` is `id`. True when a row was deleted, false when there was none.
    /// ```swift
    /// let deleted = try await Db.main.deleteById("student", 15)
    /// ```
    @discardableResult
    public func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.deleteByKeys(table, keys: [primaryKey], values: .positional([id])) }
    }
    /// The async form of `deleteByIds`: dELETEs the row of `table` with a composite key (comma-separated columns, values in the same order).
    /// True when a row was deleted.
    /// ```swift
    /// try await Db.main.deleteByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    @discardableResult
    public func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Bool {
        try await runAsync { try $0.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids)) }
    }
    /// The async form of `paginate`: page `pageNumber` (from 1) of `select + " " + sqlExceptSelect`, with the total counted by
    /// `select count(*) from (<select> <sqlExceptSelect without a trailing ORDER BY>)`.
    /// A `pageNumber` or `pageSize` below 1 throws; a page beyond the last has an empty list and the real totals.
    /// ```swift
    /// let page = try await Db.main.paginate(1, 10, "select *", "from student where age > ? order by name", 12)
    /// print(page.totalRow, page.list.count)
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }
    /// The async form of `paginate`: a page of records, with the arguments given as an array.
    /// ```swift
    /// let page = try await Db.main.paginate(2, 10, "select *", "from student where age > ?", arguments: [12])
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments)) }
    }
    /// The async form of `paginate`: a page of records, with the arguments given by name.
    /// ```swift
    /// let page = try await Db.main.paginate(2, 10, "select *", "from student where age > :age", arguments: ["age": 12])
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments)) }
    }
    /// The async form of `paginate`: `paginate` with a total you already know (cached, or counted once): no count query runs.
    /// ```swift
    /// let page = try await Db.main.paginate(3, 10, "select *", "from student where age > ?", 12, totalRow: 245)
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., totalRow: Int) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow) }
    }
    /// The async form of keyset pagination: the `pageSize` rows whose `key` comes after `lastKey`
    /// (nil for the first page), in key order.
    /// ```swift
    /// let page = try await Db.main.paginate(after: nil, 20, "select *", "from student where age > ?", 12)
    /// ```
    public func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) async throws -> KeysetPage<Record> {
        try await runAsync { try $0.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending) }
    }
    /// The async form of `batch`: runs every statement, all or nothing; returns the rows changed by each.
    /// ```swift
    /// try await Db.main.batch([Sql("insert into student(name) values (?)", "Jack"),
    ///                    Sql("update teacher set students = students + 1 where id = ?", 3)])
    /// ```
    @discardableResult
    public func batch(_ statements: [Sql]) async throws -> [Int] {
        try await runAsync { try $0.runBatch(statements) }
    }
    /// The async form of `batch`: runs `sql` once per argument list, all or nothing; returns the rows changed by each.
    /// ```swift
    /// try await Db.main.batch("insert into student(name, age) values (?, ?)", [["Jack", 14], ["Rose", 13]])
    /// ```
    @discardableResult
    public func batch(_ sql: String, _ rows: [[DatabaseArgument]]) async throws -> [Int] {
        try await runAsync { try $0.runBatch(sql, rows) }
    }
    /// The async form of `batchSave`: saves every record into `table` (as `save` does, keys written back), all or nothing.
    /// ```swift
    /// try await Db.main.batchSave("student", [try Record(["name": "Jack"]), try Record(["name": "Rose"])])
    /// ```
    @discardableResult
    public func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await runAsync { try $0.runBatchSave(table, records, primaryKey: primaryKey) }
    }
    /// The async form of `batchUpdate`: updates every record's modified columns, all or nothing.
    /// ```swift
    /// let students = try await Db.main.find("select * from student where age = ?", 13)
    /// for s in students { s.age = 14 }
    /// try await Db.main.batchUpdate("student", students)
    /// ```
    @discardableResult
    public func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await runAsync { try $0.runBatchUpdate(table, records, primaryKey: primaryKey) }
    }
}
