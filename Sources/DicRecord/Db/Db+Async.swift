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
    /// `tryHere`: a read runs on the task's own thread when a reader is free at once (see
    /// `BlockingPool.performForTask`); every call here takes its connection before anything of it
    /// runs. Not for `each` and `execute`, whose closures may make calls that wait.
    func runAsync<T>(tryHere: Bool = true, _ work: (Db) throws -> T) async throws -> sending T {
        try await BlockingPool.performForTask(tryHere: tryHere) { try work(self) }
    }

    // MARK: Transactions

    /// The async form of ``Db/tx(_:)-5gu73``: every call the task makes on this config while `body` runs joins the transaction.
    @discardableResult
    public func tx(_ body: (Db) async throws -> Bool) async throws -> Bool {
        try await runAsyncTransaction(body, commit: { $0 })
    }
    /// The async form of ``Db/transaction(_:)-44ce1``: every call the task makes on this config while `body` runs joins the transaction.
    public func transaction<T>(_ body: (Db) async throws -> T) async throws -> T {
        try await runAsyncTransaction(body, commit: { _ in true })
    }
    /// The async form of ``Db/execute(_:)-8s0xw``: `body` runs on a pool thread, in the task's transaction if any.
    public func execute<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await runAsync(tryHere: false) { try $0.execute(body) }
    }

    // MARK: Twins of Db+API.swift

    /// The async form of ``Db/find(_:_:)-3vdsr``.
    public func find(_ sql: String, _ args: DatabaseArgument...) async throws -> [Record] {
        try await runAsync { try $0.find(sql, arguments: .init(args)) }
    }
    /// The async form of ``Db/find(_:arguments:)-6s7p3``.
    public func find(_ sql: String, arguments: StatementArguments) async throws -> [Record] {
        try await runAsync { try $0.find(sql, arguments: arguments) }
    }
    /// The async form of ``Db/findFirst(_:_:)-4w8mk``.
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> Record? {
        try await runAsync { try $0.findFirst(sql, arguments: .init(args)) }
    }
    /// The async form of ``Db/findFirst(_:arguments:)-28k13``.
    public func findFirst(_ sql: String, arguments: StatementArguments) async throws -> Record? {
        try await runAsync { try $0.findFirst(sql, arguments: arguments) }
    }
    /// The async form of ``Db/findAll(_:)-6gal7``.
    public func findAll(_ table: String) async throws -> [Record] {
        try await runAsync { try $0.findAll(table) }
    }
    /// The async form of ``Db/findById(_:_:primaryKey:columns:)-89nyl``.
    public func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") async throws -> Record? {
        try await runAsync { try $0.findById(table, id, primaryKey: primaryKey, columns: columns) }
    }
    /// The async form of ``Db/findByIds(_:primaryKey:_:)-1dkpg``.
    public func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Record? {
        try await runAsync { try $0.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*") }
    }
    /// The async form of ``Db/each(_:_:body:)-95mp5``.
    public func each(_ sql: String, _ args: DatabaseArgument..., body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync(tryHere: false) { try $0.each(sql, arguments: .init(args), body: body) }
    }
    /// The async form of ``Db/each(_:arguments:body:)-5hia9``.
    public func each(_ sql: String, arguments: StatementArguments, body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync(tryHere: false) { try $0.each(sql, arguments: arguments, body: body) }
    }
    /// The async form of ``Db/query(_:_:as:)-8o94m``.
    public func query<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.query(sql, arguments: .init(args), as: type) }
    }
    /// The async form of ``Db/query(_:arguments:as:)-5l5xu``.
    public func query<T: Sendable>(_ sql: String, arguments: StatementArguments, as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.query(sql, arguments: arguments, as: type) }
    }
    /// The async form of ``Db/queryFirst(_:_:as:)-89lb8``.
    public func queryFirst<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: type) }
    }
    /// The async form of ``Db/queryFirst(_:arguments:as:)-4ehw8``.
    public func queryFirst<T: Sendable>(_ sql: String, arguments: StatementArguments, as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryFirst(sql, arguments: arguments, as: type) }
    }
    /// The async form of ``Db/queryInt(_:_:)-1fa8i``.
    public func queryInt(_ sql: String, _ args: DatabaseArgument...) async throws -> Int? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: Int.self) }
    }
    /// The async form of ``Db/queryInt64(_:_:)-6g9b0``.
    public func queryInt64(_ sql: String, _ args: DatabaseArgument...) async throws -> Int64? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: Int64.self) }
    }
    /// The async form of ``Db/queryDouble(_:_:)-61cwj``.
    public func queryDouble(_ sql: String, _ args: DatabaseArgument...) async throws -> Double? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: Double.self) }
    }
    /// The async form of ``Db/queryString(_:_:)-2wa9u``.
    public func queryString(_ sql: String, _ args: DatabaseArgument...) async throws -> String? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: String.self) }
    }
    /// The async form of ``Db/queryBool(_:_:)-50774``.
    public func queryBool(_ sql: String, _ args: DatabaseArgument...) async throws -> Bool? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: Bool.self) }
    }
    /// The async form of ``Db/queryDate(_:_:)-1dwav``.
    public func queryDate(_ sql: String, _ args: DatabaseArgument...) async throws -> Date? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: Date.self) }
    }
    /// The async form of ``Db/queryData(_:_:)-6rhdf``.
    public func queryData(_ sql: String, _ args: DatabaseArgument...) async throws -> Data? {
        try await runAsync { try $0.queryFirst(sql, arguments: .init(args), as: Data.self) }
    }
    /// The async form of ``Db/update(_:_:)-1m7q``.
    @discardableResult
    public func update(_ sql: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.update(sql, arguments: .init(args)) }
    }
    /// The async form of ``Db/update(_:arguments:)-2zopg``.
    @discardableResult
    public func update(_ sql: String, arguments: StatementArguments) async throws -> Int {
        try await runAsync { try $0.update(sql, arguments: arguments) }
    }
    /// The async form of ``Db/save(_:_:primaryKey:)-7n0v2``.
    @discardableResult
    public func save(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.save(table, record, primaryKey: primaryKey) }
    }
    /// The async form of ``Db/update(_:_:primaryKey:)-2b1j8``.
    @discardableResult
    public func update(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.update(table, record, primaryKey: primaryKey) }
    }
    /// The async form of ``Db/delete(_:_:primaryKey:)-7uouw``.
    @discardableResult
    public func delete(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.delete(table, record, primaryKey: primaryKey) }
    }
    /// The async form of ``Db/deleteById(_:_:primaryKey:)-4t9ey``.
    @discardableResult
    public func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.deleteById(table, id, primaryKey: primaryKey) }
    }
    /// The async form of ``Db/deleteByIds(_:primaryKey:_:)-1o7yb``.
    @discardableResult
    public func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Bool {
        try await runAsync { try $0.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids)) }
    }
    /// The async form of ``Db/paginate(_:_:_:_:_:)-4fhab``.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> Page<Record> {
        try await runAsync { try $0.paginate(pageNumber, pageSize, select, sqlExceptSelect, arguments: .init(args)) }
    }
    /// The async form of ``Db/paginate(_:_:_:_:arguments:)-47qdp``.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: StatementArguments) async throws -> Page<Record> {
        try await runAsync { try $0.paginate(pageNumber, pageSize, select, sqlExceptSelect, arguments: arguments) }
    }
    /// The async form of ``Db/paginate(_:_:_:_:_:totalRow:)-1kotp``.
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., totalRow: Int) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow) }
    }
    /// The async form of ``Db/paginate(after:_:_:_:_:key:descending:)-72q4o``.
    public func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) async throws -> KeysetPage<Record> {
        try await runAsync { try $0.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending) }
    }
    /// The async form of ``Db/batch(_:)-52pon``.
    @discardableResult
    public func batch(_ statements: [Sql]) async throws -> [Int] {
        try await runAsync { try $0.batch(statements) }
    }
    /// The async form of ``Db/batch(_:_:)-6kfcu``.
    @discardableResult
    public func batch(_ sql: String, _ rows: [[DatabaseArgument]]) async throws -> [Int] {
        try await runAsync { try $0.batch(sql, rows) }
    }
    /// The async form of ``Db/batchSave(_:_:primaryKey:)-zvc4``.
    @discardableResult
    public func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await runAsync { try $0.batchSave(table, records, primaryKey: primaryKey) }
    }
    /// The async form of ``Db/batchUpdate(_:_:primaryKey:)-6bpra``.
    @discardableResult
    public func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await runAsync { try $0.batchUpdate(table, records, primaryKey: primaryKey) }
    }
}
