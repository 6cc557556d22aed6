import Foundation

// Static shortcuts: `Db.find(...)` is `Db.main.find(...)`, for every method of `Db+API.swift`.
extension Db {
    /// The static form of ``Db/find(_:_:)-3vdsr``: runs on the main config.
    public static func find(_ sql: String, _ args: DatabaseArgument...) throws -> [Record] {
        try Db.main.find(sql, arguments: .init(args))
    }
    /// The static form of ``Db/find(_:arguments:)-6s7p3``: runs on the main config.
    public static func find(_ sql: String, arguments: StatementArguments) throws -> [Record] {
        try Db.main.find(sql, arguments: arguments)
    }
    /// The static form of ``Db/findFirst(_:_:)-4w8mk``: runs on the main config.
    public static func findFirst(_ sql: String, _ args: DatabaseArgument...) throws -> Record? {
        try Db.main.findFirst(sql, arguments: .init(args))
    }
    /// The static form of ``Db/findFirst(_:arguments:)-28k13``: runs on the main config.
    public static func findFirst(_ sql: String, arguments: StatementArguments) throws -> Record? {
        try Db.main.findFirst(sql, arguments: arguments)
    }
    /// The static form of ``Db/findAll(_:)-6gal7``: runs on the main config.
    public static func findAll(_ table: String) throws -> [Record] {
        try Db.main.findAll(table)
    }
    /// The static form of ``Db/findById(_:_:primaryKey:columns:)-89nyl``: runs on the main config.
    public static func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") throws -> Record? {
        try Db.main.findById(table, id, primaryKey: primaryKey, columns: columns)
    }
    /// The static form of ``Db/findByIds(_:primaryKey:_:)-1dkpg``: runs on the main config.
    public static func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Record? {
        try Db.main.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*")
    }
    /// The static form of ``Db/each(_:_:body:)-95mp5``: runs on the main config.
    public static func each(_ sql: String, _ args: DatabaseArgument..., body: (Record) throws -> Bool) throws {
        try Db.main.each(sql, arguments: .init(args), body: body)
    }
    /// The static form of ``Db/each(_:arguments:body:)-5hia9``: runs on the main config.
    public static func each(_ sql: String, arguments: StatementArguments, body: (Record) throws -> Bool) throws {
        try Db.main.each(sql, arguments: arguments, body: body)
    }
    /// The static form of ``Db/query(_:_:as:)-8o94m``: runs on the main config.
    public static func query<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> [T?] {
        try Db.main.query(sql, arguments: .init(args), as: type)
    }
    /// The static form of ``Db/query(_:arguments:as:)-5l5xu``: runs on the main config.
    public static func query<T>(_ sql: String, arguments: StatementArguments, as type: T.Type) throws -> [T?] {
        try Db.main.query(sql, arguments: arguments, as: type)
    }
    /// The static form of ``Db/queryFirst(_:_:as:)-89lb8``: runs on the main config.
    public static func queryFirst<T>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) throws -> T? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: type)
    }
    /// The static form of ``Db/queryFirst(_:arguments:as:)-4ehw8``: runs on the main config.
    public static func queryFirst<T>(_ sql: String, arguments: StatementArguments, as type: T.Type) throws -> T? {
        try Db.main.queryFirst(sql, arguments: arguments, as: type)
    }
    /// The static form of ``Db/queryInt(_:_:)-1fa8i``: runs on the main config.
    public static func queryInt(_ sql: String, _ args: DatabaseArgument...) throws -> Int? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: Int.self)
    }
    /// The static form of ``Db/queryInt64(_:_:)-6g9b0``: runs on the main config.
    public static func queryInt64(_ sql: String, _ args: DatabaseArgument...) throws -> Int64? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: Int64.self)
    }
    /// The static form of ``Db/queryDouble(_:_:)-61cwj``: runs on the main config.
    public static func queryDouble(_ sql: String, _ args: DatabaseArgument...) throws -> Double? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: Double.self)
    }
    /// The static form of ``Db/queryString(_:_:)-2wa9u``: runs on the main config.
    public static func queryString(_ sql: String, _ args: DatabaseArgument...) throws -> String? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: String.self)
    }
    /// The static form of ``Db/queryBool(_:_:)-50774``: runs on the main config.
    public static func queryBool(_ sql: String, _ args: DatabaseArgument...) throws -> Bool? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: Bool.self)
    }
    /// The static form of ``Db/queryDate(_:_:)-1dwav``: runs on the main config.
    public static func queryDate(_ sql: String, _ args: DatabaseArgument...) throws -> Date? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: Date.self)
    }
    /// The static form of ``Db/queryData(_:_:)-6rhdf``: runs on the main config.
    public static func queryData(_ sql: String, _ args: DatabaseArgument...) throws -> Data? {
        try Db.main.queryFirst(sql, arguments: .init(args), as: Data.self)
    }
    /// The static form of ``Db/update(_:_:)-1m7q``: runs on the main config.
    @discardableResult
    public static func update(_ sql: String, _ args: DatabaseArgument...) throws -> Int {
        try Db.main.update(sql, arguments: .init(args))
    }
    /// The static form of ``Db/update(_:arguments:)-2zopg``: runs on the main config.
    @discardableResult
    public static func update(_ sql: String, arguments: StatementArguments) throws -> Int {
        try Db.main.update(sql, arguments: arguments)
    }
    /// The static form of ``Db/save(_:_:primaryKey:)-7n0v2``: runs on the main config.
    @discardableResult
    public static func save(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.save(table, record, primaryKey: primaryKey)
    }
    /// The static form of ``Db/update(_:_:primaryKey:)-2b1j8``: runs on the main config.
    @discardableResult
    public static func update(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.update(table, record, primaryKey: primaryKey)
    }
    /// The static form of ``Db/delete(_:_:primaryKey:)-7uouw``: runs on the main config.
    @discardableResult
    public static func delete(_ table: String, _ record: Record, primaryKey: String = "id") throws -> Bool {
        try Db.main.delete(table, record, primaryKey: primaryKey)
    }
    /// The static form of ``Db/deleteById(_:_:primaryKey:)-4t9ey``: runs on the main config.
    @discardableResult
    public static func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") throws -> Bool {
        try Db.main.deleteById(table, id, primaryKey: primaryKey)
    }
    /// The static form of ``Db/deleteByIds(_:primaryKey:_:)-1o7yb``: runs on the main config.
    @discardableResult
    public static func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) throws -> Bool {
        try Db.main.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids))
    }
    /// The static form of ``Db/paginate(_:_:_:_:_:)-4fhab``: runs on the main config.
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) throws -> Page<Record> {
        try Db.main.paginate(pageNumber, pageSize, select, sqlExceptSelect, arguments: .init(args))
    }
    /// The static form of ``Db/paginate(_:_:_:_:arguments:)-47qdp``: runs on the main config.
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: StatementArguments) throws -> Page<Record> {
        try Db.main.paginate(pageNumber, pageSize, select, sqlExceptSelect, arguments: arguments)
    }
    /// The static form of ``Db/paginate(_:_:_:_:_:totalRow:)-1kotp``: runs on the main config.
    public static func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., totalRow: Int) throws -> Page<Record> {
        try Db.main.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow)
    }
    /// The static form of ``Db/paginate(after:_:_:_:_:key:descending:)-72q4o``: runs on the main config.
    public static func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                                _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) throws -> KeysetPage<Record> {
        try Db.main.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending)
    }
    /// The static form of ``Db/batch(_:)-52pon``: runs on the main config.
    @discardableResult
    public static func batch(_ statements: [Sql]) throws -> [Int] {
        try Db.main.batch(statements)
    }
    /// The static form of ``Db/batch(_:_:)-6kfcu``: runs on the main config.
    @discardableResult
    public static func batch(_ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        try Db.main.batch(sql, rows)
    }
    /// The static form of ``Db/batchSave(_:_:primaryKey:)-zvc4``: runs on the main config.
    @discardableResult
    public static func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try Db.main.batchSave(table, records, primaryKey: primaryKey)
    }
    /// The static form of ``Db/batchUpdate(_:_:primaryKey:)-6bpra``: runs on the main config.
    @discardableResult
    public static func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") throws -> [Int] {
        try Db.main.batchUpdate(table, records, primaryKey: primaryKey)
    }
    /// The static form of ``Db/tx(_:)-5gu73``: runs on the main config.
    @discardableResult
    public static func tx(_ body: (Db) throws -> Bool) throws -> Bool {
        try Db.main.tx(body)
    }
    /// The static form of ``Db/tx(retryOnConflict:_:)``: runs on the main config.
    @discardableResult
    public static func tx(retryOnConflict retries: Int, _ body: (Db) throws -> Bool) throws -> Bool {
        try Db.main.tx(retryOnConflict: retries, body)
    }
    /// The static form of ``Db/transaction(_:)-44ce1``: runs on the main config.
    public static func transaction<T>(_ body: (Db) throws -> T) throws -> T {
        try Db.main.transaction(body)
    }
    /// The static form of ``Db/execute(_:)-8s0xw``: runs on the main config.
    public static func execute<T>(_ body: (Connection) throws -> T) throws -> T {
        try Db.main.execute(body)
    }
}
