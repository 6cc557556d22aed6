import Foundation

/// The task executor of the async API: the jobs of tasks that prefer it run on `BlockingPool`
/// threads, where a call may block (waiting for the writer, in SQLite's busy handler, on a long
/// statement) without holding up Swift's cooperative pool.
final class PoolExecutor: TaskExecutor {
    static let shared = PoolExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        BlockingPool.shared.run { job.runSynchronously(on: PoolExecutor.shared.asUnownedTaskExecutor()) }
    }
}

extension BlockingPool {
    /// Runs `work` for the calling task on a pool thread (a hop only when the task is not on one
    /// already), inside the task's async transactions; long reads stop between rows once the task
    /// is cancelled.
    static func performForTask<T>(_ work: () throws -> T) async throws -> sending T {
        try Task.checkCancellation()
        if ThreadLeases.current.isPoolThread { return try await inline(work) }
        let result = try await withTaskExecutorPreference(PoolExecutor.shared) { Handover(value: try await inline(work)) }
        return result.value
    }

    /// Runs `work` right here, on the pool thread the task runs on.
    private static func inline<T>(_ work: () throws -> T) async throws -> sending T {
        let flag = CancellationFlag()
        let result: Handover<T> = try await withTaskCancellationHandler {
            let leases = ThreadLeases.current
            let outer = leases.cancellation
            leases.cancellation = flag
            defer { leases.cancellation = outer }
            return Handover(value: try work())
        } onCancel: {
            flag.cancel()
        }
        return result.value
    }
}

/// A value handed from the code that made it to the task that awaits it, which alone uses it
/// afterwards (models are not `Sendable`, but one fetched for a task belongs to that task).
struct Handover<T>: @unchecked Sendable {
    let value: T
}

// The async API: every method of `Db+API.swift` has a twin that runs off the caller's thread (on
// threads of its own, never blocking Swift's cooperative pool) and returns Sendable results.
//
// Inside `try await db.tx { db in … }`, every call the task makes on that config (async or not,
// from the closure, from its child tasks, or nested in other library calls) joins the transaction.
// Long reads (`find`, `each`, `query`, `paginate`) stop between rows when the task is cancelled and
// throw `CancellationError`.
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

    /// The async form of ``transaction(_:)``: commits unless `body` throws; returns its result.
    public func transaction<T>(_ body: (Db) async throws -> T) async throws -> T {
        try await runAsyncTransaction(body, commit: { _ in true })
    }

    /// The async form of ``execute(_:)``: `body` runs with the writer connection on a pool thread.
    public func execute<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await runAsync { try $0.writing(body) }
    }

    func runAsyncTransaction<T>(_ body: (Db) async throws -> T, commit: (T) -> Bool) async throws -> T {
        // The whole transaction, body included, runs on pool threads: the calls in it run inline,
        // with no hop per call, and waiting for the writer blocks no cooperative thread.
        try await withTaskExecutorPreference(PoolExecutor.shared) {
            let context = try self.context()
            let pool = try context.pool()
            let poolID = ObjectIdentifier(pool)
            let enclosing = AsyncScope.transactions
            if let outer = enclosing.last(where: { $0.poolID == poolID && $0.isOpen }) {
                return try await nestedAsyncTransaction(outer, enclosing, body, commit: commit)
            }
            try Task.checkCancellation()
            let connection = try pool.leaseWriter()
            let lease = TransactionLease(poolID: poolID, connection: connection, configName: context.configName)
            AsyncScope.openCount.add(1, ordering: .relaxed)
            defer {
                lease.end()
                AsyncScope.openCount.subtract(1, ordering: .relaxed)
                pool.returnWriter()
            }
            let scope = enclosing + [lease]
            try control(lease) { _ = try connection.run("BEGIN IMMEDIATE", .none); connection.transactionDepth = 1 }
            let result: T
            do {
                result = try await AsyncScope.$transactions.withValue(scope) { try await body(self) }
            } catch {
                try? control(lease) { connection.transactionDepth = 0; rollback(connection, depth: 0, savepoint: "") }
                throw error
            }
            let commits = commit(result)
            try control(lease) {
                connection.transactionDepth = 0
                guard commits else { return rollback(connection, depth: 0, savepoint: "") }
                do {
                    _ = try connection.run("COMMIT", .none)
                } catch {
                    rollback(connection, depth: 0, savepoint: "")
                    throw error
                }
                connection.keepSaves(committedAt: 0)
            }
            return result
        }
    }

    /// A transaction nested in the task's async transaction `lease`: a SAVEPOINT. Nested
    /// transactions at one depth (from concurrent child tasks) take turns.
    private func nestedAsyncTransaction<T>(_ lease: TransactionLease, _ enclosing: [TransactionLease],
                                           _ body: (Db) async throws -> T, commit: (T) -> Bool) async throws -> T {
        let level = enclosing.reduce(0) { $0 + ($1 === lease ? 1 : 0) }
        let gate = lease.nestingGate(depth: level)
        await gate.acquire()
        defer { gate.release() }
        let connection = lease.connection
        let depth = try control(lease) { () -> Int in
            let depth = connection.transactionDepth
            _ = try connection.run("SAVEPOINT dicrecord_savepoint_\(depth)", .none)
            connection.transactionDepth = depth + 1
            return depth
        }
        let savepoint = "dicrecord_savepoint_\(depth)"
        let result: T
        do {
            result = try await AsyncScope.$transactions.withValue(enclosing + [lease]) { try await body(self) }
        } catch {
            try? control(lease) { connection.transactionDepth = depth; rollback(connection, depth: depth, savepoint: savepoint) }
            throw error
        }
        let commits = commit(result)
        try control(lease) {
            connection.transactionDepth = depth
            guard commits else { return rollback(connection, depth: depth, savepoint: savepoint) }
            do {
                _ = try connection.run("RELEASE \(savepoint)", .none)
            } catch {
                rollback(connection, depth: depth, savepoint: savepoint)
                throw error
            }
            connection.keepSaves(committedAt: depth)
        }
        return result
    }

    /// Runs a transaction's own statement (BEGIN, COMMIT, ROLLBACK, SAVEPOINT…) holding its
    /// connection; it runs even when the task is cancelled.
    private func control<R>(_ lease: TransactionLease, _ work: () throws -> R) throws -> R {
        guard let result = try lease.join(ThreadLeases.current, { _ in try work() }) else {
            throw DicRecordError(.misuse, "the transaction on config '\(lease.configName)' has already ended", configName: lease.configName)
        }
        return result
    }

    // MARK: Twins of Db+API.swift

    public func find(_ sql: String, _ args: DatabaseArgument...) async throws -> [Record] {
        try await runAsync { try $0.findRecords(sql, .positional(args)) }
    }
    public func find(_ sql: String, arguments: [DatabaseArgument]) async throws -> [Record] {
        try await runAsync { try $0.findRecords(sql, .positional(arguments)) }
    }
    public func find(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> [Record] {
        try await runAsync { try $0.findRecords(sql, .named(arguments)) }
    }
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) async throws -> Record? {
        try await runAsync { try $0.findFirstRecord(sql, .positional(args)) }
    }
    public func findFirst(_ sql: String, arguments: [DatabaseArgument]) async throws -> Record? {
        try await runAsync { try $0.findFirstRecord(sql, .positional(arguments)) }
    }
    public func findFirst(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Record? {
        try await runAsync { try $0.findFirstRecord(sql, .named(arguments)) }
    }
    public func findAll(_ table: String) async throws -> [Record] {
        try await runAsync { try $0.findRecords("SELECT * FROM \(SqlText.quote(table))", .none) }
    }
    public func findById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id", columns: String = "*") async throws -> Record? {
        try await runAsync { try $0.findRecordById(table, id, primaryKey: primaryKey, columns: columns) }
    }
    public func findByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Record? {
        try await runAsync { try $0.findByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids), columns: "*") }
    }
    public func each(_ sql: String, _ args: DatabaseArgument..., body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync { try $0.eachRecord(sql, .positional(args), body) }
    }
    public func each(_ sql: String, arguments: [DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync { try $0.eachRecord(sql, .positional(arguments), body) }
    }
    public func each(_ sql: String, arguments: [String: DatabaseArgument], body: @escaping @Sendable (Record) throws -> Bool) async throws {
        try await runAsync { try $0.eachRecord(sql, .named(arguments), body) }
    }
    public func query<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: nil) }
    }
    public func query<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: nil) }
    }
    public func query<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> [T?] {
        try await runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: nil) }
    }
    public func queryFirst<T: Sendable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil }
    }
    public func queryFirst<T: Sendable>(_ sql: String, arguments: [DatabaseArgument], as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryValues(sql, .positional(arguments), as: T.self, limit: 1).first ?? nil }
    }
    public func queryFirst<T: Sendable>(_ sql: String, arguments: [String: DatabaseArgument], as type: T.Type) async throws -> T? {
        try await runAsync { try $0.queryValues(sql, .named(arguments), as: T.self, limit: 1).first ?? nil }
    }
    public func queryInt(_ sql: String, _ args: DatabaseArgument...) async throws -> Int? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Int.self, limit: 1).first ?? nil }
    }
    public func queryInt64(_ sql: String, _ args: DatabaseArgument...) async throws -> Int64? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Int64.self, limit: 1).first ?? nil }
    }
    public func queryDouble(_ sql: String, _ args: DatabaseArgument...) async throws -> Double? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Double.self, limit: 1).first ?? nil }
    }
    public func queryString(_ sql: String, _ args: DatabaseArgument...) async throws -> String? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: String.self, limit: 1).first ?? nil }
    }
    public func queryBool(_ sql: String, _ args: DatabaseArgument...) async throws -> Bool? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Bool.self, limit: 1).first ?? nil }
    }
    public func queryDate(_ sql: String, _ args: DatabaseArgument...) async throws -> Date? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Date.self, limit: 1).first ?? nil }
    }
    public func queryData(_ sql: String, _ args: DatabaseArgument...) async throws -> Data? {
        try await runAsync { try $0.queryValues(sql, .positional(args), as: Data.self, limit: 1).first ?? nil }
    }
    @discardableResult
    public func update(_ sql: String, _ args: DatabaseArgument...) async throws -> Int {
        try await runAsync { try $0.updateRows(sql, .positional(args)) }
    }
    @discardableResult
    public func update(_ sql: String, arguments: [DatabaseArgument]) async throws -> Int {
        try await runAsync { try $0.updateRows(sql, .positional(arguments)) }
    }
    @discardableResult
    public func update(_ sql: String, arguments: [String: DatabaseArgument]) async throws -> Int {
        try await runAsync { try $0.updateRows(sql, .named(arguments)) }
    }
    @discardableResult
    public func save(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.saveRecord(table, record, primaryKey: primaryKey) }
    }
    @discardableResult
    public func update(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.updateRecord(table, record, primaryKey: primaryKey) }
    }
    @discardableResult
    public func delete(_ table: String, _ record: Record, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.deleteRecord(table, record, primaryKey: primaryKey) }
    }
    @discardableResult
    public func deleteById(_ table: String, _ id: DatabaseArgument, primaryKey: String = "id") async throws -> Bool {
        try await runAsync { try $0.deleteByKeys(table, keys: [primaryKey], values: .positional([id])) }
    }
    @discardableResult
    public func deleteByIds(_ table: String, primaryKey: String, _ ids: DatabaseArgument...) async throws -> Bool {
        try await runAsync { try $0.deleteByKeys(table, keys: SqlText.keyColumns(primaryKey), values: .positional(ids)) }
    }
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args)) }
    }
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [DatabaseArgument]) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(arguments)) }
    }
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         arguments: [String: DatabaseArgument]) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .named(arguments)) }
    }
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., totalRow: Int) async throws -> Page<Record> {
        try await runAsync { try $0.paginateRecords(pageNumber, pageSize, select, sqlExceptSelect, .positional(args), totalRow: totalRow) }
    }
    public func paginate(after lastKey: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument..., key: String = "id", descending: Bool = false) async throws -> KeysetPage<Record> {
        try await runAsync { try $0.paginateRecords(after: lastKey, pageSize, select, sqlExceptSelect, args, keyColumn: key, descending: descending) }
    }
    @discardableResult
    public func batch(_ statements: [Sql]) async throws -> [Int] {
        try await runAsync { try $0.runBatch(statements) }
    }
    @discardableResult
    public func batch(_ sql: String, _ rows: [[DatabaseArgument]]) async throws -> [Int] {
        try await runAsync { try $0.runBatch(sql, rows) }
    }
    @discardableResult
    public func batchSave(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await runAsync { try $0.runBatchSave(table, records, primaryKey: primaryKey) }
    }
    @discardableResult
    public func batchUpdate(_ table: String, _ records: [Record], primaryKey: String = "id") async throws -> [Int] {
        try await runAsync { try $0.runBatchUpdate(table, records, primaryKey: primaryKey) }
    }
}
