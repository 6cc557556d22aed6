import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation
import GRDB
import Synchronization

/// observe_insert: `commits` single-row INSERT commits (each its own transaction: observers work
/// per commit) into `written`, on a fresh WAL file with synchronous NORMAL, with 0, 1 and 100 live
/// queries on an unrelated table (`other`) and on the written table: DicRecord's `observeValue`
/// and GRDB's `ValueObservation` (both `select count(*) from …`). Only the inserts are timed;
/// the observers run beside them.
///
/// observe_latency (printed after the table): commit → value delivered, p50 and p99, for one
/// observer of the written table, in-process (the process commits, then waits for the value) and
/// from another process (the `sqlite3` shell commits a row holding its commit time).
struct ObservationBenchmarks {
    let bench: Bench
    let config: BenchConfig

    var commits: Int { config.quick ? 200 : 2_000 }
    var latencyRounds: Int { config.quick ? 20 : 300 }
    var shellRounds: Int { config.quick ? 3 : 20 }

    static let schema = "CREATE TABLE written(id INTEGER PRIMARY KEY, at REAL); CREATE TABLE other(id INTEGER PRIMARY KEY)"
    static let insert = "INSERT INTO written(at) VALUES (?)"

    /// The observer setups measured: how many, and on which table.
    static let setups: [(count: Int, table: String)] = [(1, "other"), (100, "other"), (1, "written"), (100, "written")]

    func run(_ selected: (String) -> Bool) throws -> [String] {
        if selected("observe_insert") { try insertWithObservers() }
        return selected("observe_latency") ? try latencies() : []
    }

    private func newFile(_ name: String) throws -> String {
        let path = InsertBenchmarks.newFile(config.path(name))
        let db = try RawDatabase(path: path)
        try db.execute("PRAGMA journal_mode = WAL")
        try db.execute(Self.schema)
        return path
    }

    private func insertWithObservers() throws {
        let commits = self.commits
        var path = ""
        try bench.workload("observe_insert") { w in
            var raw: RawDatabase?
            w.measure("raw", setUp: {
                path = try newFile("observe-raw.sqlite")
                raw = try RawDatabase(path: path)
                try raw?.execute("PRAGMA synchronous = NORMAL")
            }, tearDown: { raw = nil }) {
                guard let db = raw else { throw SQLiteError(code: SQLITE_ERROR, message: "not open") }
                let statement = try db.prepare(Self.insert)
                defer { sqlite3_finalize(statement) }
                for n in 0..<commits {
                    sqlite3_bind_double(statement, 1, Double(n))
                    let code = sqlite3_step(statement)
                    guard code == SQLITE_DONE else { throw db.error(code) }
                    sqlite3_reset(statement)
                }
                return commits
            }
            for setup in [(count: 0, table: "other")] + Self.setups {
                let label = setup.count == 0 ? "no observer" : "\(setup.count) observer\(setup.count == 1 ? "" : "s") of \(setup.table)"
                let observers = DicRecordObservers()
                w.measure("dicrecord, \(label)", setUp: {
                    path = try newFile("observe-dicrecord.sqlite")
                    try observers.start(path: path, count: setup.count, table: setup.table)
                }, tearDown: { observers.stop() }) {
                    for n in 0..<commits { try observers.db.update(Self.insert, Double(n)) }
                    return commits
                }
            }
            for setup in [(count: 0, table: "other")] + Self.setups {
                let label = setup.count == 0 ? "no observer" : "\(setup.count) ValueObservation\(setup.count == 1 ? "" : "s") of \(setup.table)"
                let observers = GRDBObservers()
                w.measure("grdb DatabasePool, \(label)", setUp: {
                    path = try newFile("observe-grdb.sqlite")
                    try observers.start(path: path, count: setup.count, table: setup.table)
                }, tearDown: { observers.stop() }) {
                    let pool = try observers.pool()
                    for n in 0..<commits { try pool.write { try $0.execute(sql: Self.insert, arguments: [Double(n)]) } }
                    return commits
                }
            }
        }
    }

    // MARK: Latency

    private func latencies() throws -> [String] {
        bench.log("observe_latency")
        var lines: [String] = []
        // In-process: commit, then wait for the value that shows it.
        let path = try newFile("observe-latency.sqlite")
        let arrivals = Arrivals()
        let dicrecord = try LatencyContext(path: path)
        defer { dicrecord.stop() }
        let dicrecordTask = Task {
            for try await count in dicrecord.db.observeValue("select count(*) from written", as: Int.self) { arrivals.arrived(count ?? 0) }
        }
        defer { dicrecordTask.cancel() }
        try arrivals.wait(for: 0)
        var inProcess: [Double] = []
        for n in 1...latencyRounds {
            let start = ContinuousClock.now
            try dicrecord.db.update(Self.insert, Double(n))
            try arrivals.wait(for: n)
            inProcess.append((ContinuousClock.now - start).seconds)
        }
        lines.append(Self.line("dicrecord observeValue, in-process commit", inProcess))

        let grdbPath = try newFile("observe-latency-grdb.sqlite")
        let grdbArrivals = Arrivals()
        let pool = try DatabasePool(path: grdbPath, configuration: ConcurrencyBenchmarks.grdbConfiguration)
        let cancellable = ValueObservation.tracking { db in try Int.fetchOne(db, sql: "select count(*) from written") ?? 0 }
            .start(in: pool, scheduling: .async(onQueue: DispatchQueue(label: "grdb-latency")), onError: { _ in }, onChange: { grdbArrivals.arrived($0) })
        try grdbArrivals.wait(for: 0)
        var grdbInProcess: [Double] = []
        for n in 1...latencyRounds {
            let start = ContinuousClock.now
            try pool.write { try $0.execute(sql: Self.insert, arguments: [Double(n)]) }
            try grdbArrivals.wait(for: n)
            grdbInProcess.append((ContinuousClock.now - start).seconds)
        }
        lines.append(Self.line("grdb ValueObservation, in-process commit", grdbInProcess))

        // Another process: the sqlite3 shell inserts a row; latency from after it exits to the value.
        // (Its start-up is excluded: the clock starts when its commit is done.)
        var shell: [Double] = []
        var grdbSeen = 0
        let total = latencyRounds
        for n in 1...shellRounds {
            for (file, expected) in [(path, total + n), (grdbPath, total + n)] {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                process.arguments = ["sqlite3", file, "PRAGMA busy_timeout = 5000; INSERT INTO written(at) VALUES (0)"]
                try process.run()
                process.waitUntilExit()
                let committed = ContinuousClock.now
                if file == path {
                    try arrivals.wait(for: expected)
                    shell.append((ContinuousClock.now - committed).seconds)
                } else if (try? grdbArrivals.wait(for: expected, timeout: 1)) != nil {
                    grdbSeen += 1
                }
            }
        }
        lines.append(Self.line("dicrecord observeValue, commit by the sqlite3 shell (poll every 250 ms)", shell))
        lines.append("grdb ValueObservation, commit by the sqlite3 shell: \(grdbSeen) of \(shellRounds) seen within 1 s")
        cancellable.cancel()
        return lines
    }

    static func line(_ what: String, _ seconds: [Double]) -> String {
        let sorted = seconds.sorted()
        func at(_ q: Double) -> Double { sorted[min(sorted.count - 1, Int((Double(sorted.count) * q).rounded(.down)))] }
        return String(format: "%@: p50 %.3f ms, p99 %.3f ms (%d commits)", what, at(0.5) * 1000, at(0.99) * 1000, seconds.count)
    }
}

/// Values a live query delivered, awaited by the benchmark's thread.
final class Arrivals: Sendable {
    private let seen = Mutex<Set<Int>>([])
    private let signal = DispatchSemaphore(value: 0)

    func arrived(_ value: Int) {
        seen.withLock { _ = $0.insert(value) }
        signal.signal()
    }

    func wait(for value: Int, timeout: Double = 10) throws {
        let deadline = DispatchTime.now() + timeout
        while !seen.withLock({ $0.contains(value) }) {
            guard signal.wait(timeout: deadline) == .success else { throw BenchError("no live value \(value) within \(timeout) s") }
        }
    }
}

/// A DicRecord context on a WAL file with synchronous NORMAL.
final class LatencyContext: Sendable {
    let context: DbContext
    var db: Db { Db.use(context.configName) }

    init(path: String, configName: String = "observe") throws {
        var options = DbContext.Options()
        options.onOpen = { connection in try connection.execute("PRAGMA synchronous = NORMAL") }
        context = try DbContext(path: path, configName: configName, options: options)
        try context.start()
    }

    func stop() { context.stop() }
}

/// DicRecord with `count` live queries of `select count(*) from TABLE`, each in a task that
/// takes the values as they come.
final class DicRecordObservers: @unchecked Sendable {   // used by the benchmark's one thread
    private var context: LatencyContext?
    private var tasks: [Task<Void, Never>] = []
    var db: Db { context!.db }

    func start(path: String, count: Int, table: String) throws {
        let context = try LatencyContext(path: path)
        self.context = context
        let ready = Arrivals()
        for i in 0..<count {
            let db = context.db
            tasks.append(Task {
                var first = true
                do {
                    for try await _ in db.observeValue("select count(*) from \(table)", as: Int.self) {
                        if first { ready.arrived(i); first = false }
                    }
                } catch {}
            })
        }
        for i in 0..<count { try ready.wait(for: i) }
    }

    func stop() {
        for task in tasks { task.cancel() }
        tasks = []
        context?.stop()
        context = nil
    }
}

/// GRDB with `count` ValueObservations of `select count(*) from TABLE`.
final class GRDBObservers: @unchecked Sendable {   // used by the benchmark's one thread
    private var databasePool: DatabasePool?
    private var cancellables: [AnyDatabaseCancellable] = []
    private let queue = DispatchQueue(label: "grdb-observers")

    func pool() throws -> DatabasePool {
        guard let databasePool else { throw BenchError("GRDB pool not open") }
        return databasePool
    }

    func start(path: String, count: Int, table: String) throws {
        let pool = try DatabasePool(path: path, configuration: ConcurrencyBenchmarks.grdbConfiguration)
        databasePool = pool
        let ready = Arrivals()
        for i in 0..<count {
            let first = Mutex(true)
            cancellables.append(ValueObservation.tracking { db in try Int.fetchOne(db, sql: "select count(*) from \(table)") ?? 0 }
                .start(in: pool, scheduling: .async(onQueue: queue), onError: { _ in }, onChange: { _ in
                    let isFirst = first.withLock { value -> Bool in
                        defer { value = false }
                        return value
                    }
                    if isFirst { ready.arrived(i) }
                }))
        }
        for i in 0..<count { try ready.wait(for: i) }
    }

    func stop() {
        for cancellable in cancellables { cancellable.cancel() }
        cancellables = []
        databasePool = nil
    }
}
