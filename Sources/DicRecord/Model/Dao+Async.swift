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

    /// The async form of `find(_:_:)`: `let students = try await Student.dao.find("select * from student")`.
    public func find(_ sql: String, _ args: DatabaseArgument...) async throws -> sending [M] {
        try await runAsync { try $0.findModels(sql, .positional(args)) }
    }

    public func find(_ sql: String, arguments: [DatabaseArgument]) async throws -> sending [M] {
        try await runAsync { try $0.findModels(sql, .positional(arguments)) }
    }

    /// The async form of `findFirst(_:_:)`.
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findFirstModel(sql, .positional(args)) }
    }

    public func findFirst(_ sql: String, arguments: [DatabaseArgument]) async throws -> sending M? {
        try await runAsync { try $0.findFirstModel(sql, .positional(arguments)) }
    }

    /// The async form of `findAll()`.
    public func findAll() async throws -> sending [M] {
        try await runAsync { try $0.findAll() }
    }

    /// The async form of `findById(_:)`: `let s = try await Student.dao.findById(15)`.
    public func findById(_ id: DatabaseArgument) async throws -> sending M? {
        try await runAsync { try $0.findById(id) }
    }

    /// The async form of `findById(_:loadColumns:)`.
    public func findById(_ id: DatabaseArgument, loadColumns: String) async throws -> sending M? {
        try await runAsync { try $0.findById(id, loadColumns: loadColumns) }
    }

    /// The async form of `findByIds(_:)`.
    public func findByIds(_ ids: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findByKeyValues(ids) }
    }

    /// The async form of `findByCondition(_:_:)`.
    public func findByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> sending [M] {
        try await runAsync { try $0.find(condition: condition, .positional(args)) }
    }

    public func findByCondition(_ condition: String, arguments: [DatabaseArgument]) async throws -> sending [M] {
        try await runAsync { try $0.find(condition: condition, .positional(arguments)) }
    }

    /// The async form of `findFirstByCondition(_:_:)`.
    public func findFirstByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findFirst(condition: condition, .positional(args)) }
    }

    /// The async form of `countByCondition(_:_:)`.
    public func countByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.count(condition: condition, .positional(args)) }
    }

    /// The async form of `count()`.
    public func count() async throws -> Int {
        try await runAsync { try $0.count(condition: "", .none) }
    }

    /// The async form of `paginate(_:_:_:_:_:)`.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> sending Page<M> {
        try await runAsync { try $0.paginateModels(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }

    /// The async form of `queryOne(_:_:)`.
    public func queryOne(_ sql: String, _ args: DatabaseArgument...) async throws -> sending Any? {
        try await runAsync { try $0.queryOne(sql, .positional(args)) }
    }

    /// The async form of `search(_:limit:)`.
    public func search(_ text: String, limit: Int? = nil) async throws -> sending [M] {
        try await runAsync { try $0.search(text, limit: limit) }
    }

    // MARK: Aggregates

    /// The async form of `count(_:where:_:)`.
    public func count(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.aggregate(column, "count", condition, args, as: Int.self) ?? 0 }
    }

    /// The async form of `max(_:where:_:as:)`.
    public func max<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "max", condition, args, as: T.self) }
    }

    /// The async form of `min(_:where:_:as:)`.
    public func min<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "min", condition, args, as: T.self) }
    }

    /// The async form of `sum(_:where:_:as:)`.
    public func sum<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "sum", condition, args, as: T.self) }
    }

    /// The async form of `total(_:where:_:)`.
    public func total(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Double {
        try await runAsync { try $0.aggregate(column, "total", condition, args, as: Double.self) ?? 0 }
    }

    /// The async form of `avg(_:where:_:)`.
    public func avg(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Double? {
        try await runAsync { try $0.aggregate(column, "avg", condition, args, as: Double.self) }
    }

    // MARK: Deleting

    /// The async form of `deleteById(_:)`.
    @discardableResult
    public func deleteById(_ id: DatabaseArgument) async throws -> Bool {
        try await runAsync { try $0.deleteById(id) }
    }

    /// The async form of `deleteByIds(_:)`.
    @discardableResult
    public func deleteByIds(_ ids: DatabaseArgument...) async throws -> Bool {
        try await runAsync { try $0.deleteByKeyValues(ids) }
    }

    /// The async form of `deleteByCondition(_:_:)`.
    @discardableResult
    public func deleteByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.delete(condition: condition, .positional(args)) }
    }

    /// The async form of `deleteAll()`.
    @discardableResult
    public func deleteAll() async throws -> Int {
        try await runAsync { try $0.deleteAll() }
    }
}
