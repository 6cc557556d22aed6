import Foundation
import Testing
@testable import DicRecord

/// An async transaction that finds the writer busy waits with its task suspended (no thread
/// blocked, on a cooperative thread or DicRecord's): it is cancelled, times out, or is told the
/// context stopped like a waiting thread is.
@Suite struct WriterWaitTests {
    private static func options(busyTimeout: Double) -> DbContext.Options {
        var options = DbContext.Options()
        options.busyTimeout = busyTimeout
        return options
    }

    /// Holds the writer on a plain thread (a sync `tx`) until `release` is set; returns once it holds it.
    private static func holdWriter(_ db: Db, until release: Flag) -> DbSuiteKit.Spawned<Bool> {
        let holding = DispatchSemaphore(value: 0)
        let spawned = DbSuiteKit.spawn {
            try db.tx { db in
                try db.update("insert into n(v) values (1)")
                holding.signal()
                while !release.isSet { Thread.sleep(forTimeInterval: 0.005) }
                return true
            }
        }
        holding.wait()
        return spawned
    }

    /// Waits (polling, bounded) until `pool` has `count` tasks waiting for its writer.
    private static func waitForQueued(_ pool: ConnectionPool, _ count: Int) async throws {
        let start = ContinuousClock.now
        while pool.tasksWaitingForWriter != count {
            guard ContinuousClock.now - start < .seconds(20) else {
                Issue.record("\(pool.tasksWaitingForWriter) tasks wait for the writer, not \(count)")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    private static func insert(_ db: Db, _ v: Int) async throws -> Bool {
        try await db.tx { db in try await db.update("insert into n(v) values (?)", v) == 1 }
    }

    @Test func aCancelledTaskStopsWaitingAndTheWriterStaysUsable() async throws {
        try await withDatabase(options: Self.options(busyTimeout: 30)) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let pool = try t.context.pool()
            let release = Flag()
            let holder = Self.holdWriter(t.db, until: release)
            let db = t.db
            let waiting = Task { try await Self.insert(db, 2) }
            try await Self.waitForQueued(pool, 1)
            waiting.cancel()
            await #expect(throws: CancellationError.self) { try await waiting.value }
            #expect(pool.tasksWaitingForWriter == 0)
            release.set()
            #expect(holder.wait(timeout: 20).map { (try? $0.get()) == true } == true)
            // The writer was not handed to the cancelled task: the next transaction gets it.
            #expect(try await Self.insert(t.db, 3))
            #expect(try await t.db.query("select v from n order by id", as: Int.self) == [1, 3])
        }
    }

    @Test func aTaskWaitingLongerThanTheBusyTimeoutThrowsBusy() async throws {
        try await withDatabase(configName: "ledger", options: Self.options(busyTimeout: 0.2)) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let pool = try t.context.pool()
            let release = Flag()
            let holder = Self.holdWriter(t.db, until: release)
            let error = try await #require(throws: DicRecordError.self) { try await Self.insert(t.db, 2) }
            #expect(error.kind == .busy)
            #expect(error.configName == "ledger")
            #expect(error.message == "database is locked: waited 0.2 s for the writer of config 'ledger', held by another task or thread")
            #expect(pool.tasksWaitingForWriter == 0)
            release.set()
            #expect(holder.wait(timeout: 20).map { (try? $0.get()) == true } == true)
            #expect(try await Self.insert(t.db, 3))
            #expect(try await t.db.query("select v from n order by id", as: Int.self) == [1, 3])
        }
    }

    @Test func waitingTasksTakeTheWriterInTurnAndAllCommit() async throws {
        try await withDatabase(options: Self.options(busyTimeout: 30)) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let pool = try t.context.pool()
            let release = Flag()
            let holder = Self.holdWriter(t.db, until: release)
            let db = t.db
            var tasks: [Task<Bool, any Error>] = []
            for v in 2...5 {
                tasks.append(Task { try await Self.insert(db, v) })
                try await Self.waitForQueued(pool, v - 1)
            }
            release.set()
            for task in tasks { #expect(try await task.value) }
            #expect(holder.wait(timeout: 20).map { (try? $0.get()) == true } == true)
            // First come, first served.
            #expect(try await t.db.query("select v from n order by id", as: Int.self) == [1, 2, 3, 4, 5])
        }
    }

    @Test func stoppingTheContextEndsTheWaitWithNotStarted() async throws {
        try await withDatabase(options: Self.options(busyTimeout: 30)) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let pool = try t.context.pool()
            let release = Flag()
            let holder = Self.holdWriter(t.db, until: release)
            let db = t.db
            let waiting = Task { try await Self.insert(db, 2) }
            try await Self.waitForQueued(pool, 1)
            // stop() waits for the holder to hand the writer back; the waiting task never gets it.
            let context = t.context
            let stopped = DbSuiteKit.spawn { context.stop() }
            try await Task.sleep(for: .milliseconds(50))
            release.set()
            #expect(stopped.wait(timeout: 20) != nil)
            let error = try await #require(throws: DicRecordError.self) { try await waiting.value }
            #expect(error.kind == .notStarted)
            #expect(holder.wait(timeout: 20).map { (try? $0.get()) == true } == true)
        }
    }
}
