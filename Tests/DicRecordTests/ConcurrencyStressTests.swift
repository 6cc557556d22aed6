import Foundation
import Testing
@testable import DicRecord

/// One context under load: money moves between 100 accounts inside transactions while other calls
/// read the total on readers. The total never changes, nothing fails, nothing hangs (a watchdog
/// turns a hang into a failure).
@Suite struct ConcurrencyStressTests {
    static let accounts = 100
    static let startingBalance = 1_000
    static let total = accounts * startingBalance

    /// WAL with synchronous NORMAL: the test is about concurrency, not about fsync's speed. A
    /// busy timeout of 120 s: on a slow, loaded machine (or under ThreadSanitizer) a call can
    /// queue for the writer longer than the default 5 s without anything being wrong; a real
    /// hang is the watchdog's to report.
    static var options: DbContext.Options {
        var options = DbContext.Options()
        options.onOpen = { try $0.execute("PRAGMA synchronous = NORMAL") }
        options.busyTimeout = 120
        return options
    }

    /// The stress tests' watchdog: 240 s, scaled for ThreadSanitizer's build (their time limit is
    /// 5 minutes, scaled the same way).
    static let watchdog = 240 * Double(sanitizerSlowdown)

    /// Through the async API, as an async program sets up its tables.
    private func openBank(_ db: Db) async throws {
        try await db.update("create table account (id integer primary key, balance integer not null)")
        try await db.batch("insert into account (id, balance) values (?, ?)",
                           (1...Self.accounts).map { [$0, Self.startingBalance] })
    }

    /// One worker's operations: 60% transfers, 30% reads of the total, 10% a transfer made of two
    /// nested transactions, one of which rolls back.
    private static func work(_ db: Db, seed: UInt64, operations: Int, totals: Counter, badTotals: Counter) async throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<operations {
            let from = Int(random.next() % UInt64(accounts)) + 1
            let to = Int(random.next() % UInt64(accounts)) + 1
            let amount = Int(random.next() % 50) + 1
            switch random.next() % 10 {
            case 0..<6:
                try await db.tx { db in
                    try await db.update("update account set balance = balance - ? where id = ?", amount, from)
                    try await db.update("update account set balance = balance + ? where id = ?", amount, to)
                    return true
                }
            case 6..<9:
                let sum = try await db.queryInt("select sum(balance) from account")
                totals.add(1)
                if sum != total { badTotals.add(1) }
            default:
                try await db.tx { db in
                    try await db.tx { db in
                        try await db.update("update account set balance = balance - ? where id = ?", amount, from)
                        try await db.update("update account set balance = balance + ? where id = ?", amount, to)
                        return true
                    }
                    let abandoned = try await db.tx { db in
                        try await db.update("update account set balance = balance + 1000000 where id = ?", to)
                        return false
                    }
                    #expect(abandoned == false)
                    // Inside the transaction its own work is visible and the total still holds.
                    return try await db.queryInt("select sum(balance) from account") == total
                }
            }
        }
    }

    @Test(.timeLimit(.minutes(5 * sanitizerSlowdown)))
    func eightTasksTimesFiveThousandOperationsKeepTheTotal() async throws {
        try await withDatabase(options: Self.options) { t in
            try await openBank(t.db)
            let db = t.db
            let totals = Counter(), badTotals = Counter()
            try await withWatchdog(seconds: Self.watchdog) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            try await Self.work(db, seed: UInt64(worker) &* 0x9E37_79B9, operations: 5_000,
                                                totals: totals, badTotals: badTotals)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(totals.value > 8_000)  // about 30% of 40,000 operations read the total
            #expect(badTotals.value == 0)
            #expect(try await db.queryInt("select sum(balance) from account") == Self.total)
            #expect(try await db.queryInt("select count(*) from account where balance > 500000") == 0)
        }
    }

    /// Tasks' async transactions and threads' synchronous ones on one writer: nothing is lost,
    /// fails or hangs.
    @Test(.timeLimit(.minutes(5 * sanitizerSlowdown)))
    func tasksAndThreadsShareTheWriterAndKeepTheTotal() async throws {
        try await withDatabase(options: Self.options) { t in
            try await openBank(t.db)
            let db = t.db
            let totals = Counter(), badTotals = Counter(), failures = Counter()
            try await withWatchdog(seconds: Self.watchdog) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<4 {
                        group.addTask {
                            try await Self.work(db, seed: UInt64(worker) &* 0x51_7CC1, operations: 1_500,
                                                totals: totals, badTotals: badTotals)
                        }
                        group.addTask {
                            try await Self.syncWorkOnThread(db, seed: UInt64(worker) + 101, operations: 1_000,
                                                            totals: totals, badTotals: badTotals, failures: failures)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(failures.value == 0)
            #expect(badTotals.value == 0)
            #expect(totals.value > 1_500)
            #expect(try await db.queryInt("select sum(balance) from account") == Self.total)
        }
    }

    @Test(.timeLimit(.minutes(5 * sanitizerSlowdown)))
    func eightThreadsOfSynchronousCallsKeepTheTotal() async throws {
        try await withDatabase(options: Self.options) { t in
            try await openBank(t.db)
            let db = t.db
            let totals = Counter(), badTotals = Counter(), failures = Counter()
            try await withWatchdog(seconds: Self.watchdog) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            try await Self.syncWorkOnThread(db, seed: UInt64(worker) + 17, operations: 2_000,
                                                            totals: totals, badTotals: badTotals, failures: failures)
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(failures.value == 0)
            #expect(badTotals.value == 0)
            #expect(totals.value > 3_000)
            #expect(try await db.queryInt("select sum(balance) from account") == Self.total)
        }
    }

    /// Saves in transactions from 4 threads and 4 tasks on one writer: each connection's rollback
    /// log is touched by one holder at a time (under ThreadSanitizer, by .ci/run). A committed
    /// save keeps its key, a rolled-back one gives it back, and the table holds exactly the kept rows.
    @Test(.timeLimit(.minutes(5 * sanitizerSlowdown)))
    func savesInTransactionsFromThreadsAndTasksKeepOrGiveBackTheirKeys() async throws {
        try await withDatabase(options: Self.options) { t in
            let db = t.db
            try await db.update("create table saved (id integer primary key, worker integer, n integer)")
            let kept = Counter(), failures = Counter()
            @Sendable func check(_ records: [Record], kept keep: Bool) {
                let keys = records.map { $0["id"] as Int? }
                if keep, keys.allSatisfy({ $0 != nil }) { kept.add(3) }
                if !keep, keys.contains(where: { $0 != nil }) || records.contains(where: { $0.modifiedColumns.count != 2 }) {
                    failures.add(1)
                }
            }
            try await withWatchdog(seconds: Self.watchdog) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for worker in 0..<8 {
                        group.addTask {
                            if worker % 2 == 0 {
                                // The synchronous API on a thread of its own.
                                try await onThread {
                                    for round in 0..<150 {
                                        let records = try (0..<3).map { try Record(["worker": worker, "n": round * 3 + $0]) }
                                        try db.tx { db in
                                            for record in records { try db.save("saved", record) }
                                            return round % 3 != 0
                                        }
                                        check(records, kept: round % 3 != 0)
                                    }
                                }
                            } else {
                                // The async API from a task.
                                for round in 0..<150 {
                                    let records = try (0..<3).map { try Record(["worker": worker, "n": round * 3 + $0]) }
                                    try await db.tx { db in
                                        for record in records { try await db.save("saved", record) }
                                        return round % 3 != 0
                                    }
                                    check(records, kept: round % 3 != 0)
                                }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(failures.value == 0)
            #expect(kept.value == 8 * 100 * 3)
            #expect(try await db.queryInt("select count(*) from saved") == kept.value)
        }
    }

    /// `syncWork` on a plain thread of its own, counting a failure before rethrowing it.
    private static func syncWorkOnThread(_ db: Db, seed: UInt64, operations: Int, totals: Counter, badTotals: Counter,
                                         failures: Counter) async throws {
        try await onThread {
            do {
                try syncWork(db, seed: seed, operations: operations, totals: totals, badTotals: badTotals)
            } catch {
                failures.add(1)
                throw error
            }
        }
    }

    /// The synchronous API from plain threads: transfers, reads inside `each` callbacks that
    /// write (nested calls join), nested tx.
    private static func syncWork(_ db: Db, seed: UInt64, operations: Int, totals: Counter, badTotals: Counter) throws {
        var random = SplitMix64(seed: seed)
        for _ in 0..<operations {
            let from = Int(random.next() % UInt64(accounts)) + 1
            let to = Int(random.next() % UInt64(accounts)) + 1
            let amount = Int(random.next() % 50) + 1
            switch random.next() % 10 {
            case 0..<6:
                try db.tx { db in
                    try db.update("update account set balance = balance - ? where id = ?", amount, from)
                    try db.update("update account set balance = balance + ? where id = ?", amount, to)
                    return true
                }
            case 6..<9:
                let sum = try db.queryInt("select sum(balance) from account")
                totals.add(1)
                if sum != total { badTotals.add(1) }
            default:
                try db.tx { db in
                    // A write nested in an `each` callback joins the transaction.
                    try db.each("select id from account where id = ?", from) { _ in
                        try db.update("update account set balance = balance - ? where id = ?", amount, from)
                        return false
                    }
                    try db.tx { db in
                        try db.update("update account set balance = balance + ? where id = ?", amount, to)
                        return true
                    }
                    return true
                }
            }
        }
    }

    /// Threads taking turns at the writer: the one that lets it go wakes one waiter at a time, and
    /// wakes the next once a waiter has come back from its wait. A waiter left asleep while the writer is free would
    /// sleep out its 120 s busy timeout: the 8 × 400 transactions (well under a second) would then
    /// miss the 60 s the test gives them.
    @Test(.timeLimit(.minutes(3 * sanitizerSlowdown)))
    func threadsTakingTurnsAtTheWriterNeverSleepOutTheirWait() throws {
        try withDatabase(options: Self.options) { t in
            try t.db.update("create table n (thread integer, i integer)")
            let db = t.db
            let failures = ErrorLog()
            let done = DispatchGroup()
            for thread in 0..<8 {
                done.enter()
                Thread {
                    defer { done.leave() }
                    do {
                        for i in 0..<400 {
                            try db.tx { db in
                                try db.update("insert into n values (?, ?)", thread, i)
                                return true
                            }
                        }
                    } catch {
                        failures.add("\(error)")
                    }
                }.start()
            }
            #expect(done.wait(timeout: .now() + 60 * Double(sanitizerSlowdown)) == .success)
            #expect(failures.items.isEmpty)
            #expect(try db.queryInt("select count(*) from n") == 8 * 400)
            #expect(try db.queryInt("select count(distinct thread * 1000 + i) from n") == 8 * 400)
        }
    }

    /// A write transaction holds the writer for at least 2 s, and until the reads are done;
    /// meanwhile 100 reads on another task complete, all before the commit, and all see the state
    /// before the transaction. (A read that waited for the writer would wait for ever: the writer
    /// commits only after the reads, or after 30 s, which fails the test.)
    @Test(.timeLimit(.minutes(1 * sanitizerSlowdown)))
    func readersDoNotWaitForAWriter() async throws {
        try await withDatabase(options: Self.options) { t in
            try await openBank(t.db)
            let db = t.db
            let inTransaction = AsyncGate(), committed = Flag(), readsDone = Flag()
            await inTransaction.acquire()
            let writer = Task {
                try await db.tx { db in
                    try await db.update("update account set balance = 0")
                    inTransaction.release()
                    try await Task.sleep(for: .seconds(2))
                    let start = ContinuousClock.now
                    while !readsDone.isSet, ContinuousClock.now - start < .seconds(30) {
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    return true
                }
                committed.set()
            }
            await inTransaction.acquire()  // the writer holds its transaction now
            var readsBeforeCommit = 0
            var sums: Set<Int> = []
            for _ in 0..<100 {
                let sum = try await db.queryInt("select sum(balance) from account")
                sums.insert(sum ?? -1)
                if !committed.isSet { readsBeforeCommit += 1 }
            }
            readsDone.set()
            #expect(readsBeforeCommit == 100)
            #expect(sums == [Self.total])  // the committed state, never the uncommitted zeroes
            try await writer.value
            #expect(try await db.queryInt("select sum(balance) from account") == 0)
        }
    }
}

final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    func set() { lock.lock(); value = true; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return value }
}
