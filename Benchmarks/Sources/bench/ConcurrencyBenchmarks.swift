import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation
import GRDB

/// concurrency: the stress test of the concurrency issue as a benchmark. 8 workers × `operations`
/// operations on one file of 100 accounts: 60% transfers (a transaction of two UPDATEs), 30% reads
/// of the total, 10% a transaction with a committed and a rolled-back savepoint. Every
/// implementation runs the same operations (a seeded generator per worker); transfers commute, so
/// the final balances, and the checksum over them, are the same whatever the interleaving.
///
/// read_during_write: while another thread holds a write transaction open (it commits only when
/// the reads are done, or after 2 s), `readsDuringWrite` point reads. A read that waited for the
/// writer would take the 2 s.
///
/// Both use WAL and synchronous NORMAL for every implementation (readers beside a writer need WAL).
/// - raw: one connection per thread, prepared statements, writes serialized by a mutex (SQLite's
///   own busy handler would sleep in steps of milliseconds), reads free;
/// - grdb: a `DatabasePool`, async `write`/`read` from 8 tasks;
/// - dicrecord: the synchronous API from 8 threads, and the async API from 8 tasks.
struct ConcurrencyBenchmarks {
    let bench: Bench
    let config: BenchConfig

    static let accounts = 100
    static let startingBalance = 1_000
    static let workers = 8

    var operations: Int { config.quick ? 200 : 5_000 }
    var readsDuringWrite: Int { config.quick ? 100 : 1_000 }

    func run(_ selected: (String) -> Bool) throws {
        if selected("concurrency") { try stress() }
        if selected("read_during_write") { try readDuringWrite() }
        if selected("one_task_tx") { try oneTaskTransactions() }
    }

    var oneTaskTransfers: Int { config.quick ? 1_000 : 20_000 }

    // MARK: One task's transactions

    /// one_task_tx: the transfers of the stress test, one after another from one thread or task,
    /// with no other work beside them: what one transaction costs, with no contention to vary it
    /// (under callgrind, the same count of instructions run after run). The awaited row hops to
    /// the writer's line and back for each transaction.
    private func oneTaskTransactions() throws {
        let count = oneTaskTransfers
        let plan = Self.plan(worker: 0, count: count).compactMap { operation -> (from: Int, to: Int, amount: Int)? in
            if case .transfer(let from, let to, let amount) = operation { return (from, to, amount) }
            return nil
        }
        try bench.workload("one_task_tx") { w in
            let rawPath = config.path("one-raw.sqlite")
            w.measure("raw", setUp: { _ = try Self.newBank(rawPath) }, checksum: { try Self.checksum(rawPath, badReads: 0) }) {
                let raw = try RawBank(path: rawPath)
                for transfer in plan { try raw.transfer(transfer.amount, from: transfer.from, to: transfer.to) }
            }
            let path = config.path("one-dicrecord.sqlite")
            var context: DbContext?
            let newContext = { context = try Self.startBank("one", path: Self.newBank(path)) }
            let db = Db.use("one")
            w.measure("dicrecord tx, sync", setUp: newContext, tearDown: { context?.stop() },
                      checksum: { try Self.checksum(path, badReads: 0) }) {
                for transfer in plan {
                    try db.tx { db in
                        try db.update(Self.debit, transfer.amount, transfer.from)
                        try db.update(Self.credit, transfer.amount, transfer.to)
                        return true
                    }
                }
            }
            w.measure("dicrecord tx, awaited", setUp: newContext, tearDown: { context?.stop() },
                      checksum: { try Self.checksum(path, badReads: 0) }) {
                try blocking {
                    for transfer in plan {
                        try await db.tx { db in
                            try await db.update(Self.debit, transfer.amount, transfer.from)
                            try await db.update(Self.credit, transfer.amount, transfer.to)
                            return true
                        }
                    }
                }
            }
        }
    }

    // MARK: Operations

    enum Operation {
        case transfer(from: Int, to: Int, amount: Int)
        case readTotal
        case nested(from: Int, to: Int, amount: Int)
    }

    /// Worker `worker`'s operations, the same for every implementation.
    static func plan(worker: Int, count: Int) -> [Operation] {
        var random = SplitMix(seed: UInt64(worker + 1) &* 0x9E37_79B9)
        return (0..<count).map { _ in
            let from = Int(random.next() % UInt64(accounts)) + 1
            let to = Int(random.next() % UInt64(accounts)) + 1
            let amount = Int(random.next() % 50) + 1
            switch random.next() % 10 {
            case 0..<6: return .transfer(from: from, to: to, amount: amount)
            case 6..<9: return .readTotal
            default: return .nested(from: from, to: to, amount: amount)
            }
        }
    }

    static let schema = "CREATE TABLE account (id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)"
    static let debit = "UPDATE account SET balance = balance - ? WHERE id = ?"
    static let credit = "UPDATE account SET balance = balance + ? WHERE id = ?"
    static let total = "SELECT sum(balance) FROM account"

    /// GRDB's pool as the others run: synchronous NORMAL, and a 5 s busy timeout like raw's and
    /// DicRecord's (GRDB's default fails at once on SQLITE_BUSY, which a pool's connections can
    /// meet while another one recovers the WAL of a fresh file: a failed run, not a measurement).
    static var grdbConfiguration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = NORMAL") }
        return configuration
    }

    /// A new bank file at `path` in WAL mode.
    static func newBank(_ path: String) throws -> String {
        _ = InsertBenchmarks.newFile(path)
        let db = try RawDatabase(path: path)
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute(schema)
        try db.execute("BEGIN")
        for id in 1...accounts { try db.execute("INSERT INTO account VALUES (\(id), \(startingBalance))") }
        try db.execute("COMMIT")
        return path
    }

    /// The checksum: Σ id × balance (the same for every interleaving), plus a million for every
    /// read of the total that saw a wrong one.
    static func checksum(_ path: String, badReads: Int) throws -> Int {
        try RawDatabase(path: path).queryInt("SELECT sum(id * balance) FROM account") + badReads * 1_000_000
    }

    // MARK: Stress

    private func stress() throws {
        let operations = self.operations
        let plans = (0..<Self.workers).map { Self.plan(worker: $0, count: operations) }
        let expectedTotal = Self.accounts * Self.startingBalance
        try bench.workload("concurrency") { w in
            let rawPath = config.path("bank-raw.sqlite")
            let badReads = Tally()
            w.measure("raw", setUp: { _ = try Self.newBank(rawPath) },
                      checksum: { try Self.checksum(rawPath, badReads: badReads.take()) }) {
                let writeLock = NSLock()
                try onThreads(Self.workers) { worker in
                    let raw = try RawBank(path: rawPath)
                    for operation in plans[worker] {
                        switch operation {
                        case .transfer(let from, let to, let amount):
                            writeLock.lock()
                            defer { writeLock.unlock() }
                            try raw.transfer(amount, from: from, to: to)
                        case .readTotal:
                            if try raw.total() != expectedTotal { badReads.add() }
                        case .nested(let from, let to, let amount):
                            writeLock.lock()
                            defer { writeLock.unlock() }
                            try raw.nestedTransfer(amount, from: from, to: to)
                        }
                    }
                }
            }

            // A reference row: the floor under any async API that runs a transaction off Swift's
            // cooperative threads (a transaction that holds the writer there can starve the tasks
            // it waits for): raw C from 8 tasks, each write transaction handed to one serial
            // queue and awaited (the cheapest hop there and back), reads on the task's own thread.
            w.measure("floor: raw C from 8 tasks, each write awaited on a serial queue", setUp: { _ = try Self.newBank(rawPath) },
                      checksum: { try Self.checksum(rawPath, badReads: badReads.take()) }) {
                let writer = try SerialWriter(path: rawPath)
                defer { writer.close() }
                try blocking {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for plan in plans {
                            group.addTask {
                                let reader = try RawBank(path: rawPath)
                                for operation in plan {
                                    switch operation {
                                    case .transfer(let from, let to, let amount):
                                        try await writer.run { raw in try raw.transfer(amount, from: from, to: to) }
                                    case .readTotal:
                                        if try reader.total() != expectedTotal { badReads.add() }
                                    case .nested(let from, let to, let amount):
                                        try await writer.run { raw in try raw.nestedTransfer(amount, from: from, to: to) }
                                    }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }

            let grdbPath = config.path("bank-grdb.sqlite")
            var pool: DatabasePool?
            w.measure("grdb DatabasePool, 8 tasks, async write/read", setUp: {
                pool = try DatabasePool(path: Self.newBank(grdbPath), configuration: Self.grdbConfiguration)
            }, tearDown: { pool = nil }, checksum: { try Self.checksum(grdbPath, badReads: badReads.take()) }) {
                let pool = pool!
                try blocking {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for plan in plans {
                            group.addTask {
                                for operation in plan {
                                    switch operation {
                                    case .transfer(let from, let to, let amount):
                                        try await pool.write { db in
                                            try db.execute(sql: Self.debit, arguments: [amount, from])
                                            try db.execute(sql: Self.credit, arguments: [amount, to])
                                        }
                                    case .readTotal:
                                        let total = try await pool.read { db in try Int.fetchOne(db, sql: Self.total) }
                                        if total != expectedTotal { badReads.add() }
                                    case .nested(let from, let to, let amount):
                                        try await pool.write { db in
                                            try db.inSavepoint {
                                                try db.execute(sql: Self.debit, arguments: [amount, from])
                                                try db.execute(sql: Self.credit, arguments: [amount, to])
                                                return .commit
                                            }
                                            try db.inSavepoint {
                                                try db.execute(sql: Self.credit, arguments: [1_000_000, to])
                                                return .rollback
                                            }
                                        }
                                    }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }

            let dicrecordPath = config.path("bank-dicrecord.sqlite")
            var context: DbContext?
            let newContext = { context = try Self.startBank("bank", path: Self.newBank(dicrecordPath)) }
            let db = Db.use("bank")
            w.measure("dicrecord sync API, 8 threads", setUp: newContext, tearDown: { context?.stop() },
                      checksum: { try Self.checksum(dicrecordPath, badReads: badReads.take()) }) {
                try onThreads(Self.workers) { worker in
                    for operation in plans[worker] {
                        switch operation {
                        case .transfer(let from, let to, let amount):
                            try db.tx { db in
                                try db.update(Self.debit, amount, from)
                                try db.update(Self.credit, amount, to)
                                return true
                            }
                        case .readTotal:
                            if try db.queryInt(Self.total) != expectedTotal { badReads.add() }
                        case .nested(let from, let to, let amount):
                            try db.tx { db in
                                try db.tx { db in
                                    try db.update(Self.debit, amount, from)
                                    try db.update(Self.credit, amount, to)
                                    return true
                                }
                                try db.tx { db in
                                    try db.update(Self.credit, 1_000_000, to)
                                    return false
                                }
                                return true
                            }
                        }
                    }
                }
            }
            w.measure("dicrecord async API, 8 tasks", setUp: newContext, tearDown: { context?.stop() },
                      checksum: { try Self.checksum(dicrecordPath, badReads: badReads.take()) }) {
                try blocking {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for plan in plans {
                            group.addTask {
                                for operation in plan {
                                    switch operation {
                                    case .transfer(let from, let to, let amount):
                                        try await db.tx { db in
                                            try await db.update(Self.debit, amount, from)
                                            try await db.update(Self.credit, amount, to)
                                            return true
                                        }
                                    case .readTotal:
                                        if try await db.queryInt(Self.total) != expectedTotal { badReads.add() }
                                    case .nested(let from, let to, let amount):
                                        try await db.tx { db in
                                            try await db.tx { db in
                                                try await db.update(Self.debit, amount, from)
                                                try await db.update(Self.credit, amount, to)
                                                return true
                                            }
                                            try await db.tx { db in
                                                try await db.update(Self.credit, 1_000_000, to)
                                                return false
                                            }
                                            return true
                                        }
                                    }
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                }
            }
        }
    }

    static func startBank(_ configName: String, path: String) throws -> DbContext {
        var options = DbContext.Options()
        options.onOpen = { try $0.execute("PRAGMA synchronous = NORMAL") }
        let context = try DbContext(path: path, configName: configName, options: options)
        try context.start()
        return context
    }

    // MARK: Reads beside a writer

    private func readDuringWrite() throws {
        let reads = readsDuringWrite
        let holdLimit: TimeInterval = 2
        let checksum = { (sum: Int) in sum }
        try bench.workload("read_during_write") { w in
            // Each run: a writer thread opens a transaction that changes every balance, signals,
            // and commits when the reads are done (or after holdLimit). Only the reads are timed.
            let rawPath = config.path("rdw-raw.sqlite")
            var writer: HeldWriter?
            w.measure("raw", setUp: {
                _ = try Self.newBank(rawPath)
                writer = HeldWriter(limit: holdLimit) {
                    let raw = try RawBank(path: rawPath)
                    try raw.exec("BEGIN IMMEDIATE")
                    try raw.exec("UPDATE account SET balance = balance + 1")
                    return { try raw.exec("COMMIT") }
                }
                try writer!.start()
            }, tearDown: { writer?.finish(); writer = nil }, checksum: checksum) {
                let raw = try RawBank(path: rawPath)
                var sum = 0
                for n in 0..<reads { sum += try raw.balance(n % Self.accounts + 1) }
                return sum
            }

            let grdbPath = config.path("rdw-grdb.sqlite")
            var pool: DatabasePool?
            w.measure("grdb DatabasePool read", setUp: {
                pool = try DatabasePool(path: Self.newBank(grdbPath), configuration: Self.grdbConfiguration)
                let pool = pool!
                writer = HeldWriter(limit: holdLimit) {
                    let opened = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                    let done = DispatchSemaphore(value: 0)
                    DispatchQueue.global().async {
                        try? pool.write { db in
                            try db.execute(sql: "UPDATE account SET balance = balance + 1")
                            opened.signal()
                            release.wait()
                        }
                        done.signal()
                    }
                    opened.wait()
                    return { release.signal(); done.wait() }
                }
                try writer!.start()
            }, tearDown: { writer?.finish(); writer = nil; pool = nil }, checksum: checksum) {
                let pool = pool!
                var sum = 0
                for n in 0..<reads {
                    sum += try pool.read { db in try Int.fetchOne(db, sql: "SELECT balance FROM account WHERE id = ?", arguments: [n % Self.accounts + 1]) ?? 0 }
                }
                return sum
            }

            let dicrecordPath = config.path("rdw-dicrecord.sqlite")
            var context: DbContext?
            let db = Db.use("rdw")
            let newWriter = {
                context = try Self.startBank("rdw", path: Self.newBank(dicrecordPath))
                writer = HeldWriter(limit: holdLimit) {
                    let opened = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
                    let done = DispatchSemaphore(value: 0)
                    Thread {
                        _ = try? db.tx { db in
                            try db.update("UPDATE account SET balance = balance + 1")
                            opened.signal()
                            release.wait()
                            return true
                        }
                        done.signal()
                    }.start()
                    opened.wait()
                    return { release.signal(); done.wait() }
                }
                try writer!.start()
            }
            w.measure("dicrecord queryInt, sync", setUp: newWriter, tearDown: { writer?.finish(); writer = nil; context?.stop() },
                      checksum: checksum) {
                var sum = 0
                for n in 0..<reads {
                    sum += try db.queryInt("SELECT balance FROM account WHERE id = ?", n % Self.accounts + 1) ?? 0
                }
                return sum
            }
            w.measure("dicrecord queryInt, async", setUp: newWriter, tearDown: { writer?.finish(); writer = nil; context?.stop() },
                      checksum: checksum) {
                try blocking {
                    var sum = 0
                    for n in 0..<reads {
                        sum += try await db.queryInt("SELECT balance FROM account WHERE id = ?", n % Self.accounts + 1) ?? 0
                    }
                    return sum
                }
            }
        }
    }
}

// MARK: Helpers

/// A raw connection to a bank file, with its statements prepared once.
final class RawBank {
    private let db: RawDatabase
    private let debit: OpaquePointer, credit: OpaquePointer, sum: OpaquePointer, select: OpaquePointer

    init(path: String) throws {
        db = try RawDatabase(path: path)
        sqlite3_busy_timeout(db.handle, 5_000)
        try db.execute("PRAGMA synchronous = NORMAL")
        debit = try db.prepare(ConcurrencyBenchmarks.debit)
        credit = try db.prepare(ConcurrencyBenchmarks.credit)
        sum = try db.prepare(ConcurrencyBenchmarks.total)
        select = try db.prepare("SELECT balance FROM account WHERE id = ?")
    }

    deinit {
        [debit, credit, sum, select].forEach { sqlite3_finalize($0) }
    }

    func exec(_ sql: String) throws { try db.execute(sql) }

    /// A transfer: one transaction of two UPDATEs.
    func transfer(_ amount: Int, from: Int, to: Int) throws {
        try exec("BEGIN IMMEDIATE")
        try move(amount, from: from, to: to)
        try exec("COMMIT")
    }

    /// A transaction with a committed savepoint (the transfer) and a rolled-back one.
    func nestedTransfer(_ amount: Int, from: Int, to: Int) throws {
        try exec("BEGIN IMMEDIATE")
        try exec("SAVEPOINT a")
        try move(amount, from: from, to: to)
        try exec("RELEASE a")
        try exec("SAVEPOINT b")
        try move(1_000_000, from: from, to: to)
        try exec("ROLLBACK TO b")
        try exec("RELEASE b")
        try exec("COMMIT")
    }

    func move(_ amount: Int, from: Int, to: Int) throws {
        for (statement, id) in [(debit, from), (credit, to)] {
            sqlite3_reset(statement)
            sqlite3_bind_int64(statement, 1, Int64(amount))
            sqlite3_bind_int64(statement, 2, Int64(id))
            let code = sqlite3_step(statement)
            guard code == SQLITE_DONE else { throw db.error(code) }
        }
    }

    func total() throws -> Int {
        // Reset after reading, not only before: a statement left on its row keeps its read
        // transaction (and an old snapshot) open.
        defer { sqlite3_reset(sum) }
        guard sqlite3_step(sum) == SQLITE_ROW else { throw db.error(sqlite3_errcode(db.handle)) }
        return Int(sqlite3_column_int64(sum, 0))
    }

    func balance(_ id: Int) throws -> Int {
        defer { sqlite3_reset(select) }
        sqlite3_bind_int64(select, 1, Int64(id))
        guard sqlite3_step(select) == SQLITE_ROW else { throw db.error(sqlite3_errcode(db.handle)) }
        return Int(sqlite3_column_int64(select, 0))
    }
}

/// A write transaction held open on another thread: `open` starts it and returns how to commit.
/// `finish()` commits it (at the latest `limit` seconds after it opened).
final class HeldWriter: @unchecked Sendable {
    private let open: () throws -> () throws -> Void
    private let limit: TimeInterval
    private let finished = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)

    init(limit: TimeInterval, open: @escaping () throws -> () throws -> Void) {
        self.limit = limit
        self.open = open
    }

    func start() throws {
        let ready = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: (any Error)?
        Thread { [self] in
            do {
                let commit = try open()
                ready.signal()
                _ = finished.wait(timeout: .now() + limit)
                try commit()
            } catch {
                failure = error
                ready.signal()
            }
            done.signal()
        }.start()
        ready.wait()
        if let failure { throw failure }
    }

    func finish() {
        finished.signal()
        done.wait()
    }
}

/// Runs `body(worker)` on `count` threads at once and waits for all; rethrows the first error.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
    let group = DispatchGroup()
    let errors = Tally.Errors()
    for worker in 0..<count {
        group.enter()
        Thread {
            do { try body(worker) } catch { errors.record(error) }
            group.leave()
        }.start()
    }
    group.wait()
    if let error = errors.first { throw error }
}

/// One connection that only a serial queue touches: `run` hands it `body` there and awaits it
/// (`@unchecked Sendable`: the bank is used on the queue alone, one job at a time).
final class SerialWriter: @unchecked Sendable {
    private var bank: RawBank?
    private let queue = DispatchQueue(label: "bench.serial-writer")

    init(path: String) throws { bank = try RawBank(path: path) }

    func run(_ body: @escaping @Sendable (RawBank) throws -> Void) async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            queue.async {
                done.resume(with: Result {
                    guard let bank = self.bank else { throw SQLiteError(code: SQLITE_MISUSE, message: "the serial writer is closed") }
                    try body(bank)
                })
            }
        }
    }

    /// Closes the connection now. The last connection to a WAL file checkpoints as it closes,
    /// holding the file: left to whichever thread lets go of the writer last, that could overlap
    /// the checksum's read, which then fails with SQLITE_BUSY.
    func close() { queue.sync { bank = nil } }
}

/// Runs async `body` from synchronous benchmark code and waits for its result.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let done = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var result: Result<T, any Error>?
    Task {
        do { result = .success(try await body()) } catch { result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try result!.get()
}

/// A counter shared by threads, read and reset after each run.
final class Tally: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add() { lock.lock(); count += 1; lock.unlock() }

    func take() -> Int {
        lock.lock()
        defer { count = 0; lock.unlock() }
        return count
    }

    final class Errors: @unchecked Sendable {
        private let lock = NSLock()
        private var errors: [any Error] = []
        func record(_ error: any Error) { lock.lock(); errors.append(error); lock.unlock() }
        var first: (any Error)? { lock.lock(); defer { lock.unlock() }; return errors.first }
    }
}

/// SplitMix64: the same operations for every implementation.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
