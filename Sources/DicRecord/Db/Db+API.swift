import Foundation

// The public methods of a `Db` handle. Each takes its arguments two ways: variadic
// (`find(sql, 1, "a")`) or as `StatementArguments`: an array literal (`arguments: [1, "a"]`) or,
// for `:name` placeholders, a dictionary literal (`arguments: ["name": "a"]`). `Db+Static.swift` repeats them as static shortcuts on main.
extension Db {
    // MARK: Finding records

    /// All rows of `sql`, with the variadic arguments bound in order; an empty array when no row matches.
    /// ```swift
    /// let teens = try Db.use("backup").find("select * from student where age > ?", 12)
    /// ```
    public func find(_ sql: String, _ args: DatabaseArgument...) throws -> [Record] {
        try findRecords(sql, .positional(args))
    }

    /// All rows of `sql`, with the arguments given at once: an array (one per `?`) or a
    /// dictionary (one per `:name`).
    /// ```swift
    /// let teens = try Db.main.find("select * from student where age > ?", arguments: [12])
    /// let older = try Db.main.find("select * from student where age > :age", arguments: ["age": 12])
    /// ```
    public func find(_ sql: String, arguments: StatementArguments) throws -> [Record] {
        try findRecords(sql, arguments.storage)
    }

    /// The first row of `sql`, or nil when there is none. Steps one row only (no LIMIT needed).
    /// ```swift
    /// let jack = try Db.use("backup").findFirst("select * from student where name = ?", "Jack")
    /// ```
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) throws -> Record? {
        try findFirstRecord(sql, .positional(args))
    }

    /// The first row of `sql`, or nil, with the arguments given as an array or by name.
    /// ```swift
    /// let jack = try Db.main.findFirst("select * from student where name = ?", arguments: ["Jack"])
    /// let rose = try Db.main.findFirst("select * from student where name = :name", arguments: ["name": "Rose"])
    /// ```
    public func findFirst(_ sql: String, arguments: StatementArguments) throws -> Record? {
        try findFirstRecord(sql, arguments.storage)
    }

    /// Every row of `table`; an empty array when the table is empty.
    /// ```swift
    /// let students = try Db.use("backup").findAll("student")
    /// ```
    public func findAll(_ table: String) throws -> [Record] {
        try findRecords("SELECT * FROM \(SqlText.quote(table))", .none)
    }

    /// The row of `table` whose `primaryKey` is `id`, or nil when there is none; `columns` limits
    /// the columns read (default `*`).
    /// ```swift
    /// let student = try Db.main.findById("student", 15)
    /// let names = try Db.main.findById("student", 15, columns: "id, name")
    /// ```
    public func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") throws -> Record? {
        try findRecordById(table, id, primaryKey: primaryKey, columns: columns)
    }

    /// The row of `table` with a composite key, or nil: the key columns are comma-separated in
    /// `primaryKey` and their values follow in the same order.
    /// ```swift
    /// let row = try Db.main.findByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    public func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Record? {
        try findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*")
    }

    /// Streams the rows of `sql` in constant memory; return false from `body` to stop.
    /// The record passed to `body` is reused for the next row unless `body` keeps a reference to it.
    /// ```swift
    /// try Db.main.each("select * from student where age > ?", 12) { student in
    ///     print(student.name as Any); return true
    /// }
    /// ```
    public func each(_ sql: String, _ args: DatabaseArgument..., body: (Record) throws -> Bool) throws {
        try eachRecord(sql, .positional(args), body)
    }

    /// Streams the rows of `sql`, with the arguments given as an array or by name; return false
    /// from `body` to stop.
    /// ```swift
    /// try Db.main.each("select * from student where age > ?", arguments: [12]) { _ in true }
    /// try Db.main.each("select * from student where age > :age", arguments: ["age": 12]) { _ in true }
    /// ```
    public func each(_ sql: String, arguments: StatementArguments, body: (Record) throws -> Bool) throws {
        try eachRecord(sql, arguments.storage, body)
    }

    // MARK: Single-column queries

    /// The single column of every row as `T` (nil for NULL). A result with more than one column
    /// throws; a value that cannot convert to `T` throws a `ConversionError`.
    /// ```swift
    /// let names = try Db.main.query("select name from student where age > ?", 12, as: String.self)
    /// ```
    public func query<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> [T?] {
        try queryValues(sql, .positional(args), as: T.self, limit: nil)
    }

    /// The single column of every row as `T`, with the arguments given as an array or by name.
    /// ```swift
    /// let names = try Db.main.query("select name from student where age > ?", arguments: [12], as: String.self)
    /// let older = try Db.main.query("select name from student where age > :age", arguments: ["age": 12], as: String.self)
    /// ```
    public func query<T>(_ sql: String, arguments: StatementArguments, as type: T.Type) throws -> [T?] {
        try queryValues(sql, arguments.storage, as: T.self, limit: nil)
    }

    /// The single column of the first row as `T`; nil when there is no row or it is NULL.
    /// ```swift
    /// let oldest = try Db.main.queryFirst("select max(age) from student", as: Int.self)
    /// ```
    public func queryFirst<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> T? {
        try queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as `T`, or nil, with the arguments given as an array or by name.
    /// ```swift
    /// let age = try Db.main.queryFirst("select age from student where id = ?", arguments: [15], as: Int.self)
    /// let same = try Db.main.queryFirst("select age from student where id = :id", arguments: ["id": 15], as: Int.self)
    /// ```
    public func queryFirst<T>(_ sql: String, arguments: StatementArguments, as type: T.Type) throws -> T? {
        try queryValues(sql, arguments.storage, as: T.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as an `Int`; nil when there is no row or it is NULL.
    /// ```swift
    /// let count = try Db.main.queryInt("select count(*) from student where age > ?", 12) ?? 0
    /// ```
    public func queryInt(_ sql: String, _ args: DatabaseArgument...) throws -> Int? {
        try queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as an `Int64`; nil when there is no row or it is NULL.
    /// ```swift
    /// let total = try Db.main.queryInt64("select sum(score) from exam where student_id = ?", 15)
    /// ```
    public func queryInt64(_ sql: String, _ args: DatabaseArgument...) throws -> Int64? {
        try queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `Double`; nil when there is no row or it is NULL.
    /// ```swift
    /// let average = try Db.main.queryDouble("select avg(age) from student")
    /// ```
    public func queryDouble(_ sql: String, _ args: DatabaseArgument...) throws -> Double? {
        try queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `String`; nil when there is no row or it is NULL.
    /// ```swift
    /// let name = try Db.main.queryString("select name from student where id = ?", 15)
    /// ```
    public func queryString(_ sql: String, _ args: DatabaseArgument...) throws -> String? {
        try queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `Bool` (0/1, or text such as "yes"); nil when there is no row or it is NULL.
    /// ```swift
    /// let active = try Db.main.queryBool("select active from student where id = ?", 15)
    /// ```
    public func queryBool(_ sql: String, _ args: DatabaseArgument...) throws -> Bool? {
        try queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as a `Date` (seconds since 1970, or SQLite date text); nil when there is no row or it is NULL.
    /// ```swift
    /// let born = try Db.main.queryDate("select born from student where id = ?", 15)
    /// ```
    public func queryDate(_ sql: String, _ args: DatabaseArgument...) throws -> Date? {
        try queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil
    }

    /// The single column of the first row as `Data`; nil when there is no row or it is NULL.
    /// ```swift
    /// let photo = try Db.main.queryData("select photo from student where id = ?", 15)
    /// ```
    public func queryData(_ sql: String, _ args: DatabaseArgument...) throws -> Data? {
        try queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil
    }

    // MARK: Writing

    /// Runs an INSERT, UPDATE, DELETE or DDL statement; returns the number of rows changed.
    /// ```swift
    /// let changed = try Db.main.update("update student set age = age + 1 where name = ?", "Jack")
    /// ```
    @discardableResult
    public func update(_ sql: String, _ args: DatabaseArgument...) throws -> Int {
        try updateRows(sql, .positional(args))
    }

    /// Runs a write statement with the arguments given as an array or by name; returns the number
    /// of rows changed.
    /// ```swift
    /// try Db.main.update("delete from student where age < ?", arguments: [6])
    /// try Db.main.update("update student set age = :age where id = :id", arguments: ["age": 14, "id": 15])
    /// ```
    @discardableResult
    public func update(_ sql: String, arguments: StatementArguments) throws -> Int {
        try updateRows(sql, arguments.storage)
    }

    /// INSERTs the record's columns into `table`, writes the generated key back into the record
    /// and clears its modified flags. True when a row was inserted.
    /// ```swift
    /// let jack = try Record(["name": "Jack", "age": 14])
    /// try Db.main.save("student", jack)      // jack.id is now set
    /// ```
    @discardableResult
    public func save(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try saveRecord(table, record, primaryKey: primaryKey)
    }

    /// UPDATEs the record's modified columns (false when none is modified); a record without its
    /// key value throws.
    /// ```swift
    /// let jack = try Db.main.findById("student", 15)!
    /// jack.age = 15
    /// try Db.main.update("student", jack)
    /// ```
    @discardableResult
    public func update(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try updateRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the record's row by its key. True when a row was deleted.
    /// ```swift
    /// if let jack = try Db.main.findById("student", 15) { try Db.main.delete("student", jack) }
    /// ```
    @discardableResult
    public func delete(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try deleteRecord(table, record, primaryKey: primaryKey)
    }

    /// DELETEs the row of `table` whose `primaryKey` is `id`. True when a row was deleted, false when there was none.
    /// ```swift
    /// let deleted = try Db.main.deleteById("student", 15)
    /// ```
    @discardableResult
    public func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") throws -> Bool {
        try deleteByKeys(table, keys: [primaryKey], values: .positional([id]))
    }

    /// DELETEs the row of `table` with a composite key (comma-separated columns, values in the same order).
    /// True when a row was deleted.
    /// ```swift
    /// try Db.main.deleteByIds("enrollment", primaryKey: "student_id, course_id", 1, 7)
    /// ```
    @discardableResult
    public func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Bool {
        try deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids))
    }

    // MARK: Pagination

    /// Page `pageNumber` (from 1) of `select + " " + sqlExceptSelect`, with the total counted by
    /// `select count(*) from (<select> <sqlExceptSelect without a trailing ORDER BY>)`.
    /// A `pageNumber` or `pageSize` below 1 throws; a page beyond the last has an empty list and the real totals.
    /// ```swift
    /// let page = try Db.main.paginate(1, 10, "select *", "from student where age > ? order by name", 12)
    /// print(page.totalRow, page.list.count)
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args))
    }

    /// A page of records, with the arguments given as an array or by name.
    /// ```swift
    /// let page = try Db.main.paginate(2, 10, "select *", "from student where age > ?", arguments: [12])
    /// let named = try Db.main.paginate(2, 10, "select *", "from student where age > :age", arguments: ["age": 12])
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: StatementArguments) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, arguments.storage)
    }

    /// `paginate` with a total you already know (cached, or counted once): no count query runs.
    /// ```swift
    /// let page = try Db.main.paginate(3, 10, "select *", "from student where age > ?", 12, totalRow: 245)
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., totalRow: Int) throws -> Page<Record> {
        try paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow)
    }

    /// Keyset pagination: the `pageSize` rows whose `key` comes after `lastKey` (nil for the first
    /// page), in key order. A deep page costs what the first one does, and nothing is counted.
    /// Throws when the page's last key is TEXT that is not UTF-8 (written by another program into
    /// SQLite): `nextKey` would hold its replacement characters and misplace the next page.
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
    /// ```swift
    /// try Db.main.batch([Sql("insert into student(name) values (?)", "Jack"),
    ///                    Sql("update teacher set students = students + 1 where id = ?", 3)])
    /// ```
    @discardableResult
    public func batch(_ statements: [Sql]) throws -> [Int] {
        try runBatch(statements)
    }

    /// Runs `sql` once per argument list, all or nothing; returns the rows changed by each.
    /// ```swift
    /// try Db.main.batch("insert into student(name, age) values (?, ?)", [["Jack", 14], ["Rose", 13]])
    /// ```
    @discardableResult
    public func batch(_ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        try runBatch(sql, rows)
    }

    /// Saves every record into `table` (as `save` does, keys written back), all or nothing.
    /// ```swift
    /// try Db.main.batchSave("student", [try Record(["name": "Jack"]), try Record(["name": "Rose"])])
    /// ```
    @discardableResult
    public func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try runBatchSave(table, records, primaryKey: primaryKey)
    }

    /// Updates every record's modified columns, all or nothing.
    /// ```swift
    /// let students = try Db.main.find("select * from student where age = ?", 13)
    /// for s in students { s.age = 14 }
    /// try Db.main.batchUpdate("student", students)
    /// ```
    @discardableResult
    public func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try runBatchUpdate(table, records, primaryKey: primaryKey)
    }

    // MARK: Transactions

    /// Runs `body` in a transaction: commits when it returns true, rolls back when it returns false
    /// or throws (and rethrows). Nested, it is a SAVEPOINT that rolls back only its own work.
    /// The `db` given to `body` is bound to the context the transaction runs on (even for
    /// `Db.main`): keep using the handle you called `tx` on outside the closure.
    /// ```swift
    /// try Db.main.tx { db in
    ///     try db.update("update account set balance = balance - 10 where id = ?", 1) == 1
    /// }
    /// ```
    @discardableResult
    public func tx(_ body: (Db) throws -> Bool) throws -> Bool {
        try runTx(body)
    }

    /// `tx`, run again (up to `retries` more times) when the database reports a conflict with
    /// another transaction (`DicRecordError.Kind.conflict`: PostgreSQL's serialization failure or
    /// deadlock, SQLSTATE 40001/40P01); nothing of a failed attempt was committed. Only an
    /// outermost transaction retries: nested in another, the conflict aborts the outer one, which
    /// gets the error. `body` must be safe to run again (no side effects outside the database).
    /// ```swift
    /// try Db.use("pg").tx(retryOnConflict: 5) { db in
    ///     try db.update("update counter set n = n + 1 where id = ?", 1) == 1
    /// }
    /// ```
    @discardableResult
    public func tx(retryOnConflict retries: Int, _ body: (Db) throws -> Bool) throws -> Bool {
        try runTx(retryingOnConflict: retries, body)
    }

    /// Runs `body` in a transaction that commits unless `body` throws; returns its result.
    /// As with `tx`, the `db` given to `body` is bound to the transaction's context.
    /// ```swift
    /// let id = try Db.main.transaction { db in
    ///     try db.update("insert into student(name) values (?)", "Jack")
    ///     return try db.queryInt("select last_insert_rowid()")
    /// }
    /// ```
    public func transaction<T>(_ body: (Db) throws -> T) throws -> T {
        try runTransaction(body)
    }

    /// Runs `body` with the SQLite writer connection (joining the current transaction, if any);
    /// on another engine's config, a `.misuse` error.
    /// ```swift
    /// try Db.main.execute { connection in try connection.execute("pragma optimize") }
    /// ```
    public func execute<T>(_ body: (Connection) throws -> T) throws -> T {
        try context().pool(for: "execute { connection in … } (a SQLite connection)").write(body)
    }
}
