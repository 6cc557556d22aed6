import Foundation

// Running built statements: `try Db.find(select)`, `try Db.update(insert)`, and their async twins.
extension Db {
    /// The rows of a built query; an empty array when nothing matches.
    /// ```swift
    /// let teens = try Db.use("backup").find(Select().from("student").where("age".gt(12)))
    /// ```
    public func find(_ query: Select) throws -> [Record] {
        try findRecords(query.sql, .positional(query.arguments))
    }

    /// The first row of a built query, or nil.
    /// ```swift
    /// let jack = try Db.main.findFirst(Select().from("student").where("name".eq("Jack")))
    /// ```
    public func findFirst(_ query: Select) throws -> Record? {
        try findFirstRecord(query.sql, .positional(query.arguments))
    }

    /// Streams the rows of a built query in constant memory (see `each(_:_:body:)`); return false to stop.
    /// ```swift
    /// try Db.main.each(Select().from("student").orderBy("id")) { student in print(student.name as Any); return true }
    /// ```
    public func each(_ query: Select, body: (Record) throws -> Bool) throws {
        try eachRecord(query.sql, .positional(query.arguments), body)
    }

    /// The single column of a built query as `T` (nil for NULL); more than one column throws.
    /// ```swift
    /// let names = try Db.main.query(Select("name").from("student"), as: String.self)
    /// ```
    public func query<T>(_ query: Select, as type: T.Type) throws -> [T?] {
        try queryValues(query.sql, .positional(query.arguments), as: T.self, limit: nil)
    }

    /// The single value of a built query as `T`; nil when there is no row or it is NULL.
    /// ```swift
    /// let oldest = try Db.main.queryFirst(Select(SQL.max("age")).from("student"), as: Int.self)
    /// ```
    public func queryFirst<T>(_ query: Select, as type: T.Type) throws -> T? {
        try queryValues(query.sql, .positional(query.arguments), as: T.self, limit: 1).first ?? nil
    }

    /// Runs a built INSERT, UPDATE or DELETE; returns the rows changed.
    /// ```swift
    /// let changed = try Db.main.update(Update("student").set(["age": 14]).where("id".eq(15)))
    /// ```
    @discardableResult
    public func update(_ statement: some SqlWriteStatement) throws -> Int {
        try updateRows(statement.sql, .positional(statement.arguments))
    }

    /// The async form of ``Db/find(_:)-8n9ga``.
    public func find(_ query: Select) async throws -> [Record] {
        try await runAsync { try $0.find(query) }
    }
    /// The async form of ``Db/findFirst(_:)-3g8o2``.
    public func findFirst(_ query: Select) async throws -> Record? {
        try await runAsync { try $0.findFirst(query) }
    }
    /// The async form of ``Db/query(_:as:)-17zug``.
    public func query<T: Sendable>(_ query: Select, as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.query(query, as: T.self) }
    }
    /// The async form of ``Db/update(_:)-6adab``.
    @discardableResult
    public func update(_ statement: some SqlWriteStatement) async throws -> Int {
        try await runAsync { try $0.update(statement) }
    }

    // Static shortcuts on main.

    /// The static form of ``Db/find(_:)-8n9ga``: runs on the main config.
    public static func find(_ query: Select) throws -> [Record] { try Db.main.find(query) }
    /// The static form of ``Db/findFirst(_:)-3g8o2``: runs on the main config.
    public static func findFirst(_ query: Select) throws -> Record? { try Db.main.findFirst(query) }
    /// The static form of ``Db/each(_:body:)-7f42g``: runs on the main config.
    public static func each(_ query: Select, body: (Record) throws -> Bool) throws { try Db.main.each(query, body: body) }
    /// The static form of ``Db/query(_:as:)-17zug``: runs on the main config.
    public static func query<T>(_ query: Select, as type: T.Type) throws -> [T?] { try Db.main.query(query, as: T.self) }
    /// The static form of ``Db/queryFirst(_:as:)-zohu``: runs on the main config.
    public static func queryFirst<T>(_ query: Select, as type: T.Type) throws -> T? { try Db.main.queryFirst(query, as: T.self) }
    /// The static form of ``Db/update(_:)-6adab``: runs on the main config.
    @discardableResult
    public static func update(_ statement: some SqlWriteStatement) throws -> Int { try Db.main.update(statement) }
    /// The static async form of ``Db/find(_:)-8n9ga``: runs on the main config.
    public static func find(_ query: Select) async throws -> [Record] { try await Db.main.find(query) }
    /// The static async form of ``Db/findFirst(_:)-3g8o2``: runs on the main config.
    public static func findFirst(_ query: Select) async throws -> Record? { try await Db.main.findFirst(query) }
    /// The static async form of ``Db/update(_:)-6adab``: runs on the main config.
    @discardableResult
    public static func update(_ statement: some SqlWriteStatement) async throws -> Int { try await Db.main.update(statement) }
}

// Built conditions on a model's table: `Student.dao.find(where: "age".gt(18), orderBy: "age".desc, limit: 10)`.
extension Dao {
    /// The models of a built query over the model's table (extra columns are kept).
    /// ```swift
    /// let teens = try Student.dao.find(Select().from("student").where("age".gt(12)).limit(10))
    /// ```
    public func find(_ query: Select) throws -> [M] {
        try findModels(query.sql, .positional(query.arguments))
    }

    /// The models matching `condition` (all without one), in `orderBy` order, with an optional limit and offset.
    /// ```swift
    /// let oldest = try Student.dao.find(where: "age".gt(18), orderBy: "age".desc, limit: 10)
    /// ```
    public func find(where condition: SqlClause? = nil, orderBy: SqlExpression..., limit: Int? = nil, offset: Int? = nil) throws -> [M] {
        try find(select(condition, orderBy, limit, offset))
    }

    /// The first model matching `condition`, in `orderBy` order, or nil.
    /// ```swift
    /// let youngest = try Student.dao.findFirst(where: "age".gt(12), orderBy: "age")
    /// ```
    public func findFirst(where condition: SqlClause? = nil, orderBy: SqlExpression...) throws -> M? {
        let query = try select(condition, orderBy, 1, nil)
        return try findFirstModel(query.sql, .positional(query.arguments))
    }

    /// The number of rows matching `condition`.
    /// ```swift
    /// let teens = try Student.dao.count(where: "age".between(13, 19))
    /// ```
    public func count(where condition: SqlClause) throws -> Int {
        let schema = try target().schema
        let query = Select(SQL.count()).from(schema.tableName).where(condition)
        return try target().db.queryFirst(query, as: Int.self) ?? 0
    }

    /// Deletes the rows matching `condition`; returns how many.
    /// ```swift
    /// try Student.dao.delete(where: "name".eq("张三"))
    /// ```
    @discardableResult
    public func delete(where condition: SqlClause) throws -> Int {
        let (db, schema) = try target()
        return try db.update(Delete(from: schema.tableName).where(condition))
    }

    /// The models matching `condition`, live: now, then again after each commit that may change
    /// them (see ``Db/observe(_:_:initial:removeDuplicates:)``). Rows travel between tasks as
    /// `Sendable` records; each value's models are built where you iterate, so they belong to
    /// your task.
    /// ```swift
    /// for try await adults in Student.dao.observe(where: "age".gt(18), orderBy: "name") { show(adults) }
    /// ```
    public func observe(where condition: SqlClause? = nil, orderBy: SqlExpression..., limit: Int? = nil,
                        initial: Bool = true, removeDuplicates: Bool = true) -> ModelObservation<M> {
        do {
            let (db, schema) = try target()
            let query = try select(condition, orderBy, limit, nil)
            return ModelObservation(records: db.observe(query.sql, arguments: StatementArguments(query.arguments),
                                                        initial: initial, removeDuplicates: removeDuplicates),
                                    dao: self, schema: schema)
        } catch {
            let (stream, continuation) = AsyncThrowingStream<[Record], any Error>.makeStream()
            continuation.finish(throwing: error)
            return ModelObservation(records: stream, dao: self, schema: nil)
        }
    }

    private func select(_ condition: SqlClause?, _ orderBy: [SqlExpression], _ limit: Int?, _ offset: Int?) throws -> Select {
        var query = Select().from(try target().schema.tableName).orderBy(orderBy)
        if let condition { query = query.where(condition) }
        if let limit { query = query.limit(limit) }
        if let offset { query = query.offset(offset) }
        return query
    }

    /// The async form of ``Dao/find(_:)-77t56``.
    public func find(_ query: Select) async throws -> sending [M] {
        try await runAsync { try $0.find(query) }
    }
    /// The async form of ``Dao/find(where:orderBy:limit:offset:)-9ldzr``.
    public func find(where condition: SqlClause? = nil, orderBy: SqlExpression..., limit: Int? = nil, offset: Int? = nil) async throws -> sending [M] {
        try await runAsync { dao in try dao.find(dao.select(condition, orderBy, limit, offset)) }
    }
    /// The async form of ``Dao/count(where:)-73gqy``.
    public func count(where condition: SqlClause) async throws -> Int {
        try await runAsync { try $0.count(where: condition) }
    }
    /// The async form of ``Dao/delete(where:)-7ipp8``.
    @discardableResult
    public func delete(where condition: SqlClause) async throws -> Int {
        try await runAsync { try $0.delete(where: condition) }
    }
}

/// A model query, live (`Student.dao.observe(where:orderBy:)`): each element is the models of one
/// result, built on the consumer's side from the records that crossed tasks.
public struct ModelObservation<M: Model>: AsyncSequence, Sendable {
    public typealias Element = [M]
    let records: AsyncThrowingStream<[Record], any Error>
    let dao: Dao<M>
    let schema: ModelSchema?

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: records.makeAsyncIterator(), dao: dao, schema: schema)
    }

    /// Takes the next result's records and builds its models in the caller's isolation.
    public struct Iterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[Record], any Error>.AsyncIterator
        let dao: Dao<M>
        let schema: ModelSchema?

        public mutating func next() async throws -> [M]? {
            try await next(isolation: nil)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(any Error) -> [M]? {
            guard let records = try await base.next(isolation: actor), let schema else { return nil }
            return try dao.models(records, schema: schema)
        }
    }
}
