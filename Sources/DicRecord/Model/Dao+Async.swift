import Foundation

// The async API of a dao: every finder, counter and deleter has a twin that runs off the caller's
// thread, inside the calling task's async transactions (see `Db+Async.swift`).
//
// Models are not Sendable: the ones an async call returns were made for the awaiting task and
// belong to it alone (the result is `sending`). Their `didLoad` hook runs on the pool thread that
// fetched them, inside the same transactions.
extension Dao {
    /// Runs `work` with this dao on a pool thread for the calling task.
    func runAsync<T>(_ work: @escaping @Sendable (Dao<M>) throws -> T) async throws -> sending T {
        try await BlockingPool.performForTask { [self] in try work(self) }
    }

    // MARK: Finding

    /// The async form of `find(_:_:)`: the models of any query over the model's table.
    /// ```swift
    /// let students = try await Student.dao.find("select * from student where age > ?", 12)
    /// ```
    public func find(_ sql: String, _ args: DatabaseArgument...) async throws -> sending [M] {
        try await runAsync { try $0.findModels(sql, .positional(args)) }
    }

    /// The async form of `find(_:arguments:)`: the models of a query, arguments as an array.
    /// ```swift
    /// let students = try await Student.dao.find("select * from student where age > ?", arguments: [12])
    /// ```
    public func find(_ sql: String, arguments: [DatabaseArgument]) async throws -> sending [M] {
        try await runAsync { try $0.findModels(sql, .positional(arguments)) }
    }

    /// The async form of `findFirst(_:_:)`: the first model of `sql`, or nil.
    /// ```swift
    /// let jack = try await Student.dao.findFirst("select * from student where name = ?", "Jack")
    /// ```
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findFirstModel(sql, .positional(args)) }
    }

    /// The async form of `findFirst(_:arguments:)`: the first model of `sql`, or nil, arguments as an array.
    /// ```swift
    /// let jack = try await Student.dao.findFirst("select * from student where name = ?", arguments: ["Jack"])
    /// ```
    public func findFirst(_ sql: String, arguments: [DatabaseArgument]) async throws -> sending M? {
        try await runAsync { try $0.findFirstModel(sql, .positional(arguments)) }
    }

    /// The async form of `findAll()`: every row of the table, as models.
    /// ```swift
    /// let everyone = try await Student.dao.findAll()
    /// ```
    public func findAll() async throws -> sending [M] {
        try await runAsync { try $0.findAll() }
    }

    /// The async form of `findById(_:)`: the model whose key is `id`, or nil.
    /// ```swift
    /// let student = try await Student.dao.findById(15)
    /// ```
    public func findById(_ id: DatabaseArgument) async throws -> sending M? {
        try await runAsync { try $0.findById(id) }
    }

    /// The async form of `findById(_:loadColumns:)`: only `loadColumns` are read.
    /// ```swift
    /// let student = try await Student.dao.findById(15, loadColumns: "id, name")
    /// ```
    public func findById(_ id: DatabaseArgument, loadColumns: String) async throws -> sending M? {
        try await runAsync { try $0.findById(id, loadColumns: loadColumns) }
    }

    /// The async form of `findByIds(_:)`: the model with a composite key, or nil.
    /// ```swift
    /// let enrollment = try await Enrollment.dao.findByIds(1, 7)
    /// ```
    public func findByIds(_ ids: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findByKeyValues(ids) }
    }

    /// The async form of `findByCondition(_:_:)`: the models matching `condition`.
    /// ```swift
    /// let teens = try await Student.dao.findByCondition("age > ?", 12)
    /// ```
    public func findByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> sending [M] {
        try await runAsync { try $0.find(condition: condition, .positional(args)) }
    }

    /// The async form of `findByCondition(_:arguments:)`: the models matching `condition`, arguments as an array.
    /// ```swift
    /// let teens = try await Student.dao.findByCondition("age > ?", arguments: [12])
    /// ```
    public func findByCondition(_ condition: String, arguments: [DatabaseArgument]) async throws -> sending [M] {
        try await runAsync { try $0.find(condition: condition, .positional(arguments)) }
    }

    /// The async form of `findFirstByCondition(_:_:)`: the first model matching `condition`, or nil.
    /// ```swift
    /// let youngest = try await Student.dao.findFirstByCondition("age > ? order by age", 12)
    /// ```
    public func findFirstByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findFirst(condition: condition, .positional(args)) }
    }

    /// The async form of `countByCondition(_:_:)`: the number of rows matching `condition`.
    /// ```swift
    /// let teens = try await Student.dao.countByCondition("age > ?", 12)
    /// ```
    public func countByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.count(condition: condition, .positional(args)) }
    }

    /// The async form of `count()`: the number of rows in the table.
    /// ```swift
    /// let total = try await Student.dao.count()
    /// ```
    public func count() async throws -> Int {
        try await runAsync { try $0.count(condition: "", .none) }
    }

    /// The async form of `paginate(_:_:_:_:_:)`: a page of models.
    /// ```swift
    /// let page = try await Student.dao.paginate(1, 10, "select *", "from student where age > ?", 12)
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> sending Page<M> {
        try await runAsync { try $0.paginateModels(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }

    /// The async form of `queryOne(_:_:)`: the single value of a one-column query, or nil.
    /// ```swift
    /// let oldest = try await Student.dao.queryOne("select max(age) from student")
    /// ```
    public func queryOne(_ sql: String, _ args: DatabaseArgument...) async throws -> sending Any? {
        try await runAsync { try $0.queryOne(sql, .positional(args)) }
    }

    /// The async form of `search(_:limit:)`: models whose `searchColumns` match `text`, best match first.
    /// ```swift
    /// let hits = try await Article.dao.search("swift sqlite", limit: 20)
    /// ```
    public func search(_ text: String, limit: Int? = nil) async throws -> sending [M] {
        try await runAsync { try $0.search(text, limit: limit) }
    }

    /// The async form of `search(fts5Query:limit:)`: models matching an FTS5 query, best match first.
    /// ```swift
    /// let hits = try await Article.dao.search(fts5Query: "swift OR sqli*", limit: 20)
    /// ```
    public func search(fts5Query query: String, limit: Int? = nil) async throws -> sending [M] {
        try await runAsync { try $0.search(fts5Query: query, limit: limit) }
    }

    // MARK: Aggregates

    /// The async form of `count(_:where:_:)`: non-NULL values of `column` in the matching rows.
    /// ```swift
    /// let withEmail = try await User.dao.count("email")
    /// ```
    public func count(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.aggregate(column, "count", condition, args, as: Int.self) ?? 0 }
    }

    /// The async form of `max(_:where:_:as:)`: the largest value of `column`, nil on no rows.
    /// ```swift
    /// let oldest = try await Student.dao.max("age", as: Int.self)
    /// ```
    public func max<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "max", condition, args, as: T.self) }
    }

    /// The async form of `min(_:where:_:as:)`: the smallest value of `column`, nil on no rows.
    /// ```swift
    /// let youngest = try await Student.dao.min("age", as: Int.self)
    /// ```
    public func min<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "min", condition, args, as: T.self) }
    }

    /// The async form of `sum(_:where:_:as:)`: SQLite's `sum`, nil on no rows.
    /// ```swift
    /// let ages = try await Student.dao.sum("age", where: "class_id = ?", 3, as: Int.self)
    /// ```
    public func sum<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "sum", condition, args, as: T.self) }
    }

    /// The async form of `total(_:where:_:)`: the sum as a Double, 0.0 on no rows.
    /// ```swift
    /// let total = try await Student.dao.total("age")
    /// ```
    public func total(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Double {
        try await runAsync { try $0.aggregate(column, "total", condition, args, as: Double.self) ?? 0 }
    }

    /// The async form of `avg(_:where:_:)`: the average of `column`, nil on no rows.
    /// ```swift
    /// let averageAge = try await Student.dao.avg("age")
    /// ```
    public func avg(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Double? {
        try await runAsync { try $0.aggregate(column, "avg", condition, args, as: Double.self) }
    }

    // MARK: Deleting

    /// The async form of `deleteById(_:)`: true when a row was deleted.
    /// ```swift
    /// try await Student.dao.deleteById(20)
    /// ```
    @discardableResult
    public func deleteById(_ id: DatabaseArgument) async throws -> Bool {
        try await runAsync { try $0.deleteById(id) }
    }

    /// The async form of `deleteByIds(_:)`: true when a row was deleted.
    /// ```swift
    /// try await Enrollment.dao.deleteByIds(1, 7)
    /// ```
    @discardableResult
    public func deleteByIds(_ ids: DatabaseArgument...) async throws -> Bool {
        try await runAsync { try $0.deleteByKeyValues(ids) }
    }

    /// The async form of `deleteByCondition(_:_:)`: deletes the matching rows (an empty condition throws); returns how many.
    /// ```swift
    /// try await Student.dao.deleteByCondition("name = ?", "张三")
    /// ```
    @discardableResult
    public func deleteByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.delete(condition: condition, .positional(args)) }
    }

    /// The async form of `deleteAll()`: deletes every row; returns how many.
    /// ```swift
    /// try await Student.dao.deleteAll()
    /// ```
    @discardableResult
    public func deleteAll() async throws -> Int {
        try await runAsync { try $0.deleteAll() }
    }
}
