import Foundation

// Running built statements: `try Db.find(select)`, `try Db.update(insert)`, and their async twins.
extension Db {
    /// The rows of a built query: `try db.find(Select().from("students").where("age".gt(18)))`.
    public func find(_ query: Select) throws -> [Record] {
        try findRecords(query.sql, .positional(query.arguments))
    }

    /// The first row of a built query, or nil.
    public func findFirst(_ query: Select) throws -> Record? {
        try findFirstRecord(query.sql, .positional(query.arguments))
    }

    /// Streams the rows of a built query (see `each(_:_:body:)`).
    public func each(_ query: Select, body: (Record) throws -> Bool) throws {
        try eachRecord(query.sql, .positional(query.arguments), body)
    }

    /// The single column of a built query.
    public func query<T>(_ query: Select, as type: T.Type) throws -> [T?] {
        try queryValues(query.sql, .positional(query.arguments), as: T.self, limit: nil)
    }

    /// The single value of a built query, or nil.
    public func queryFirst<T>(_ query: Select, as type: T.Type) throws -> T? {
        try queryValues(query.sql, .positional(query.arguments), as: T.self, limit: 1).first ?? nil
    }

    /// Runs a built INSERT, UPDATE or DELETE; returns the rows changed.
    @discardableResult
    public func update(_ statement: some SqlWriteStatement) throws -> Int {
        try updateRows(statement.sql, .positional(statement.arguments))
    }

    /// The async form of `find(_:)` for a built query.
    public func find(_ query: Select) async throws -> [Record] {
        try await runAsync { try $0.find(query) }
    }

    /// The async form of `findFirst(_:)` for a built query.
    public func findFirst(_ query: Select) async throws -> Record? {
        try await runAsync { try $0.findFirst(query) }
    }

    /// The async form of `query(_:as:)` for a built query.
    public func query<T: Sendable>(_ query: Select, as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.query(query, as: T.self) }
    }

    /// The async form of `update(_:)` for a built statement.
    @discardableResult
    public func update(_ statement: some SqlWriteStatement) async throws -> Int {
        try await runAsync { try $0.update(statement) }
    }

    // Static shortcuts on main.

    public static func find(_ query: Select) throws -> [Record] { try Db.main.find(query) }
    public static func findFirst(_ query: Select) throws -> Record? { try Db.main.findFirst(query) }
    public static func each(_ query: Select, body: (Record) throws -> Bool) throws { try Db.main.each(query, body: body) }
    public static func query<T>(_ query: Select, as type: T.Type) throws -> [T?] { try Db.main.query(query, as: T.self) }
    public static func queryFirst<T>(_ query: Select, as type: T.Type) throws -> T? { try Db.main.queryFirst(query, as: T.self) }
    @discardableResult
    public static func update(_ statement: some SqlWriteStatement) throws -> Int { try Db.main.update(statement) }
    public static func find(_ query: Select) async throws -> [Record] { try await Db.main.find(query) }
    public static func findFirst(_ query: Select) async throws -> Record? { try await Db.main.findFirst(query) }
    @discardableResult
    public static func update(_ statement: some SqlWriteStatement) async throws -> Int { try await Db.main.update(statement) }
}

// Built conditions on a model's table: `Student.dao.find(where: "age".gt(18), orderBy: "age".desc, limit: 10)`.
extension Dao {
    /// The models of a built query over the model's table (extra columns are kept).
    public func find(_ query: Select) throws -> [M] {
        try findModels(query.sql, .positional(query.arguments))
    }

    /// The models matching `condition` (all without one), in `orderBy` order.
    public func find(where condition: SqlClause? = nil, orderBy: SqlExpression..., limit: Int? = nil, offset: Int? = nil) throws -> [M] {
        try find(select(condition, orderBy, limit, offset))
    }

    /// The first model matching `condition`, in `orderBy` order, or nil.
    public func findFirst(where condition: SqlClause? = nil, orderBy: SqlExpression...) throws -> M? {
        let query = try select(condition, orderBy, 1, nil)
        return try findFirstModel(query.sql, .positional(query.arguments))
    }

    /// Rows matching `condition`.
    public func count(where condition: SqlClause) throws -> Int {
        let schema = try target().schema
        let query = Select(SQL.count()).from(schema.tableName).where(condition)
        return try target().db.queryFirst(query, as: Int.self) ?? 0
    }

    /// Deletes the rows matching `condition`; returns how many.
    @discardableResult
    public func delete(where condition: SqlClause) throws -> Int {
        let (db, schema) = try target()
        return try db.update(Delete(from: schema.tableName).where(condition))
    }

    private func select(_ condition: SqlClause?, _ orderBy: [SqlExpression], _ limit: Int?, _ offset: Int?) throws -> Select {
        var query = Select().from(try target().schema.tableName).orderBy(orderBy)
        if let condition { query = query.where(condition) }
        if let limit { query = query.limit(limit) }
        if let offset { query = query.offset(offset) }
        return query
    }

    /// The async form of `find(_:)` for a built query.
    public func find(_ query: Select) async throws -> sending [M] {
        try await runAsync { try $0.find(query) }
    }

    /// The async form of `find(where:orderBy:limit:offset:)`.
    public func find(where condition: SqlClause? = nil, orderBy: SqlExpression..., limit: Int? = nil, offset: Int? = nil) async throws -> sending [M] {
        try await runAsync { dao in try dao.find(dao.select(condition, orderBy, limit, offset)) }
    }

    /// The async form of `count(where:)`.
    public func count(where condition: SqlClause) async throws -> Int {
        try await runAsync { try $0.count(where: condition) }
    }

    /// The async form of `delete(where:)`.
    @discardableResult
    public func delete(where condition: SqlClause) async throws -> Int {
        try await runAsync { try $0.delete(where: condition) }
    }
}
