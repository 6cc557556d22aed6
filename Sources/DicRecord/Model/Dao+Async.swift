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

    /// The async form of ``Dao/find(_:_:)-966pz``.
    public func find(_ sql: String, _ args: DatabaseArgument...) async throws -> sending [M] {
        try await runAsync { try $0.find(sql, arguments: .init(args)) }
    }
    /// The async form of ``Dao/find(_:arguments:)-977nv``.
    public func find(_ sql: String, arguments: StatementArguments) async throws -> sending [M] {
        try await runAsync { try $0.find(sql, arguments: arguments) }
    }
    /// The async form of ``Dao/findFirst(_:_:)-83yt5``.
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findFirst(sql, arguments: .init(args)) }
    }
    /// The async form of ``Dao/findFirst(_:arguments:)-o3p5``.
    public func findFirst(_ sql: String, arguments: StatementArguments) async throws -> sending M? {
        try await runAsync { try $0.findFirst(sql, arguments: arguments) }
    }
    /// The async form of ``Dao/findAll()-3zxmx``.
    public func findAll() async throws -> sending [M] {
        try await runAsync { try $0.findAll() }
    }
    /// The async form of ``Dao/findById(_:)-8m1ji``.
    public func findById(_ id: DatabaseArgument) async throws -> sending M? {
        try await runAsync { try $0.findById(id) }
    }
    /// The async form of ``Dao/findById(_:loadColumns:)-7d7pi``.
    public func findById(_ id: DatabaseArgument, loadColumns: String) async throws -> sending M? {
        try await runAsync { try $0.findById(id, loadColumns: loadColumns) }
    }
    /// The async form of ``Dao/findByIds(_:)-5tyb2``.
    public func findByIds(_ ids: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findByKeyValues(ids) }
    }
    /// The async form of ``Dao/findByCondition(_:_:)-942ds``.
    public func findByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> sending [M] {
        try await runAsync { try $0.findByCondition(condition, arguments: .init(args)) }
    }
    /// The async form of ``Dao/findByCondition(_:arguments:)-94hdr``.
    public func findByCondition(_ condition: String, arguments: StatementArguments) async throws -> sending [M] {
        try await runAsync { try $0.findByCondition(condition, arguments: arguments) }
    }
    /// The async form of ``Dao/findFirstByCondition(_:_:)-37fst``.
    public func findFirstByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> sending M? {
        try await runAsync { try $0.findFirst(condition: condition, .positional(args)) }
    }
    /// The async form of ``Dao/countByCondition(_:_:)-8lypg``.
    public func countByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.count(condition: condition, .positional(args)) }
    }
    /// The async form of ``Dao/count()-9h36g``.
    public func count() async throws -> Int {
        try await runAsync { try $0.count() }
    }
    /// The async form of ``Dao/paginate(_:_:_:_:_:)-866nb``.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> sending Page<M> {
        try await runAsync { try $0.paginateModels(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }
    /// The async form of ``Dao/queryOne(_:_:)-6a4qj``.
    public func queryOne(_ sql: String, _ args: DatabaseArgument...) async throws -> sending Any? {
        try await runAsync { try $0.queryOne(sql, .positional(args)) }
    }
    /// The async form of ``Dao/search(_:limit:)-6kog7``.
    public func search(_ text: String, limit: Int? = nil) async throws -> sending [M] {
        try await runAsync { try $0.search(text, limit: limit) }
    }
    /// The async form of ``Dao/search(fts5Query:limit:)-5y8s3``.
    public func search(fts5Query query: String, limit: Int? = nil) async throws -> sending [M] {
        try await runAsync { try $0.search(fts5Query: query, limit: limit) }
    }

    // MARK: Aggregates

    /// The async form of ``Dao/count(_:where:_:)-6ffsb``.
    public func count(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.aggregate(column, "count", condition, args, as: Int.self) ?? 0 }
    }
    /// The async form of ``Dao/max(_:where:_:as:)-217r7``.
    public func max<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "max", condition, args, as: T.self) }
    }
    /// The async form of ``Dao/min(_:where:_:as:)-1fkz3``.
    public func min<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "min", condition, args, as: T.self) }
    }
    /// The async form of ``Dao/sum(_:where:_:as:)-9pgv7``.
    public func sum<T: Sendable>(_ column: String, where condition: String = "", _ args: DatabaseArgument...,
                                 as type: T.Type = T.self) async throws -> T? {
        try await runAsync { try $0.aggregate(column, "sum", condition, args, as: T.self) }
    }
    /// The async form of ``Dao/total(_:where:_:)-9ujqv``.
    public func total(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Double {
        try await runAsync { try $0.aggregate(column, "total", condition, args, as: Double.self) ?? 0 }
    }
    /// The async form of ``Dao/avg(_:where:_:)-2p0a``.
    public func avg(_ column: String, where condition: String = "", _ args: DatabaseArgument...) async throws -> Double? {
        try await runAsync { try $0.aggregate(column, "avg", condition, args, as: Double.self) }
    }

    // MARK: Deleting

    /// The async form of ``Dao/deleteById(_:)-3xw9b``.
    @discardableResult
    public func deleteById(_ id: DatabaseArgument) async throws -> Bool {
        try await runAsync { try $0.deleteById(id) }
    }
    /// The async form of ``Dao/deleteByIds(_:)-6d78k``.
    @discardableResult
    public func deleteByIds(_ ids: DatabaseArgument...) async throws -> Bool {
        try await runAsync { try $0.deleteByKeyValues(ids) }
    }
    /// The async form of ``Dao/deleteByCondition(_:_:)-8v3fr``.
    @discardableResult
    public func deleteByCondition(_ condition: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.delete(condition: condition, .positional(args)) }
    }
    /// The async form of ``Dao/deleteAll()-9b8bk``.
    @discardableResult
    public func deleteAll() async throws -> Int {
        try await runAsync { try $0.deleteAll() }
    }
}
