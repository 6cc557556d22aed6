import Foundation

// Static async shortcuts: `try await Db.find(...)` is `try await Db.main.find(...)`.
extension Db {
    /// The async form of `Db.tx`, on main.
    @discardableResult
    public static func tx(_ body: (Db) async throws -> Bool) async throws -> Bool {
        try await Db.main.tx(body)
    }

    /// The async form of `Db.transaction`, on main.
    public static func transaction<T>(_ body: (Db) async throws -> T) async throws -> T {
        try await Db.main.transaction(body)
    }

    /// The async form of `Db.execute`, on main.
    public static func execute<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await Db.main.execute(body)
    }

    public static func find(_ sql: String, _ args: DatabaseArgument...) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords(sql, .positional(args)) }
    }
    public static func find(_ sql: String, arguments: [DatabaseArgument]) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords(sql, .positional(arguments)) }
    }
    public static func find(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords(sql, .named(arguments)) }
    }
    public static func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> Record? {
        try await Db.main.runAsync { try $0.findFirstRecord(sql, .positional(args)) }
    }
    public static func findFirst(_ sql: String, arguments: [DatabaseArgument]) async throws -> Record? {
        try await Db.main.runAsync { try $0.findFirstRecord(sql, .positional(arguments)) }
    }
    public static func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Record? {
        try await Db.main.runAsync { try $0.findFirstRecord(sql, .named(arguments)) }
    }
    public static func findAll(_ table: String) async throws -> [Record] {
        try await Db.main.runAsync { try $0.findRecords("SELECT * FROM \(SqlText.quote(table))", .none) }
    }
    public static func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") async throws -> Record? {
        try await Db.main.runAsync { try $0.findRecordById(table, id, primaryKey: primaryKey, columns: columns) }
    }
    public static func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Record? {
        try await Db.main.runAsync { try $0.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*") }
    }
    public static func each(_ sql: String, _ args: DatabaseArgument..., body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await Db.main.runAsync { try $0.eachRecord(sql, .positional(args), body) }
    }
    public static func each(_ sql: String, arguments: [DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await Db.main.runAsync { try $0.eachRecord(sql, .positional(arguments), body) }
    }
    public static func each(_ sql: String, arguments: [String: DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await Db.main.runAsync { try $0.eachRecord(sql, .named(arguments), body) }
    }
    public static func query<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> [T?] {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: nil) }
    }
    public static func query<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: nil) }
    }
    public static func query<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await Db.main.runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: nil) }
    }
    public static func queryFirst<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> T? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil }
    }
    public static func queryFirst<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> T? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil }
    }
    public static func queryFirst<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> T? {
        try await Db.main.runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil }
    }
    public static func queryInt(_ sql: String, _ args: DatabaseArgument...) async throws -> Int? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil }
    }
    public static func queryInt64(_ sql: String, _ args: DatabaseArgument...) async throws -> Int64? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil }
    }
    public static func queryDouble(_ sql: String, _ args: DatabaseArgument...) async throws -> Double? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil }
    }
    public static func queryString(_ sql: String, _ args: DatabaseArgument...) async throws -> String? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil }
    }
    public static func queryBool(_ sql: String, _ args: DatabaseArgument...) async throws -> Bool? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil }
    }
    public static func queryDate(_ sql: String, _ args: DatabaseArgument...) async throws -> Date? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil }
    }
    public static func queryData(_ sql: String, _ args: DatabaseArgument...) async throws -> Data? {
        try await Db.main.runAsync { try $0.queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil }
    }
    @discardableResult
    public static func update(_ sql: String, _ args: DatabaseArgument...) async throws -> Int {
        try await Db.main.runAsync { try $0.updateRows(sql, .positional(args)) }
    }
    @discardableResult
    public static func update(_ sql: String, arguments: [DatabaseArgument]) async throws -> Int {
        try await Db.main.runAsync { try $0.updateRows(sql, .positional(arguments)) }
    }
    @discardableResult
    public static func update(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Int {
        try await Db.main.runAsync { try $0.updateRows(sql, .named(arguments)) }
    }
    @discardableResult
    public static func save(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.saveRecord(table, record, primaryKey: primaryKey) }
    }
    @discardableResult
    public static func update(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.updateRecord(table, record, primaryKey: primaryKey) }
    }
    @discardableResult
    public static func delete(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.deleteRecord(table, record, primaryKey: primaryKey) }
    }
    @discardableResult
    public static func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") async throws -> Bool {
        try await Db.main.runAsync { try $0.deleteByKeys(table, keys: [primaryKey], values: .positional([id])) }
    }
    @discardableResult
    public static func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Bool {
        try await Db.main.runAsync { try $0.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids)) }
    }
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments)) }
    }
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments)) }
    }
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., totalRow: Int) async throws -> Page<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow) }
    }
    public static func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) async throws -> KeysetPage<Record> {
        try await Db.main.runAsync { try $0.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending) }
    }
    @discardableResult
    public static func batch(_ statements: [Sql]) async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatch(statements) }
    }
    @discardableResult
    public static func batch(_ sql: String, _ rows: [[DatabaseArgument]]) async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatch(sql, rows) }
    }
    @discardableResult
    public static func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatchSave(table, records, primaryKey: primaryKey) }
    }
    @discardableResult
    public static func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await Db.main.runAsync { try $0.runBatchUpdate(table, records, primaryKey: primaryKey) }
    }
}
