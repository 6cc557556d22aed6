import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// An awaited read runs on the task's own thread when a reader is free; whatever would wait (a
/// write, a WITH statement that writes) moves to DicRecord's threads and still completes.
@Suite struct AsyncHopTests {
    @Test func readsRunAtOnceAndWritesWaitForTheWriterElsewhere() async throws {
        try await withDatabase { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            try await t.db.update("insert into n(v) values (1)")
            // Another thread holds the writer until the read below is done (30 s at most).
            let held = DispatchSemaphore(value: 0)
            let writerDone = Atomic<Bool>(false)
            let readDone = Flag()
            let db = t.db
            Thread {
                _ = try? db.tx { db in
                    try db.update("update n set v = 2")
                    held.signal()
                    let start = Date()
                    while !readDone.isSet, Date().timeIntervalSince(start) < 30 { Thread.sleep(forTimeInterval: 0.005) }
                    return true
                }
                writerDone.store(true, ordering: .sequentiallyConsistent)
            }.start()
            held.wait()
            // The committed value, without waiting for the writer (no timing: the suite runs under load).
            #expect(try await t.db.queryInt("select v from n") == 1)
            let writerFinished = writerDone.load(ordering: .sequentiallyConsistent)
            #expect(!writerFinished)
            readDone.set()
            #expect(ThreadLeases.current.mustNotWait == false)
            // A write, and a WITH statement that writes: both wait for the writer (off this thread).
            try await t.db.update("insert into n(v) values (3)")
            let returned = try await t.db.find("with x(v) as (select 4) insert into n(v) select v from x returning v")
            #expect(returned.first.map { ($0["v"] as Int?) } == 4)
            #expect(try await t.db.queryInt("select sum(v) from n") == 2 + 3 + 4)
            #expect(ThreadLeases.current.mustNotWait == false)
        }
    }

    /// Whether the calling code runs on one of DicRecord's pool threads.
    private static func onPoolThread() -> Bool { ThreadLeases.current.isPoolThread }

    @Test func aTransactionWhoseWriterIsFreeRunsOnTheTasksOwnThread() async throws {
        try await withDatabase { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let ran = try await t.db.transaction { db -> [Bool] in
                var where_ = [Self.onPoolThread()]
                try await db.update("insert into n(v) values (1)")
                // A nested transaction, and a concurrent child task's call, join it where it runs.
                try await db.tx { db in
                    where_.append(Self.onPoolThread())
                    try await db.update("insert into n(v) values (2)")
                    return true
                }
                async let child = db.queryInt("select count(*) from n")
                #expect(try await child == 2)
                where_.append(Self.onPoolThread())
                return where_
            }
            #expect(ran == [false, false, false])
            #expect(try await t.db.queryInt("select sum(v) from n") == 3)
        }
    }

    @Test func aTransactionThatFindsTheWriterBusyRunsOnAPoolThread() async throws {
        try await withDatabase { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            // Another thread (not a task) holds the writer until the async transaction below has asked for it.
            let held = DispatchSemaphore(value: 0)
            let db = t.db
            let holder = DbSuiteKit.spawn {
                try db.tx { db in
                    try db.update("insert into n(v) values (1)")
                    held.signal()
                    Thread.sleep(forTimeInterval: 0.3)
                    return true
                }
            }
            held.wait()
            let onPool = try await t.db.transaction { db -> Bool in
                try await db.update("insert into n(v) values (2)")
                return Self.onPoolThread()
            }
            #expect(onPool)
            guard case .success(let committed)? = holder.wait(timeout: 20) else {
                Issue.record("the holding transaction did not commit")
                return
            }
            #expect(committed)
            #expect(try await t.db.query("select v from n order by id", as: Int.self) == [1, 2])
        }
    }

    @Test func afterASynchronousWriteInATaskWaitedForATasksTransactionTransactionsRunOnPoolThreads() async throws {
        try await withDatabase { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let pool = try t.context.pool()
            // A synchronous write from a task that finds the writer free changes nothing (a start-up migration).
            #expect(try Self.syncUpdate(t.db, "insert into n(v) values (1)") == 1)
            #expect(pool.lendsWriterToTasks)
            #expect(try await t.db.transaction { _ async in Self.onPoolThread() } == false)

            // One that has to wait, on a cooperative thread, for a transaction that a task holds
            // there: that could block every cooperative thread, so transactions move off them.
            // (The holder keeps its thread, polling, so that it needs no other to finish.)
            let inTransaction = Flag()
            let db = t.db
            let holder = Task {
                try await db.tx { db in
                    try await db.update("insert into n(v) values (2)")
                    inTransaction.set()
                    let start = ContinuousClock.now
                    while pool.lendsWriterToTasks, ContinuousClock.now - start < .seconds(20) { usleep(2_000) }
                    return true
                }
            }
            let start = ContinuousClock.now
            while !inTransaction.isSet, ContinuousClock.now - start < .seconds(20) { try await Task.sleep(for: .milliseconds(2)) }
            let blocked = Task { try Self.syncUpdate(db, "insert into n(v) values (3)") }
            #expect(try await holder.value)
            #expect(try await blocked.value == 1)
            #expect(!pool.lendsWriterToTasks)
            #expect(try await t.db.transaction { db -> Bool in
                try await db.update("insert into n(v) values (4)")
                return Self.onPoolThread()
            })
            #expect(try await t.db.query("select v from n order by id", as: Int.self) == [1, 2, 3, 4])
        }
    }

    private static func syncUpdate(_ db: Db, _ sql: String) throws -> Int { try db.update(sql) }

    @Test func aTransactionOutsideWALRunsOnAPoolThread() async throws {
        var options = DbContext.Options()
        options.journalMode = .delete
        try await withDatabase(options: options) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            // A COMMIT may wait for readers there: the transaction does not run on a cooperative thread.
            let onPool = try await t.db.transaction { db -> Bool in
                try await db.update("insert into n(v) values (1)")
                return Self.onPoolThread()
            }
            #expect(onPool)
            #expect(try await t.db.queryInt("select v from n") == 1)
        }
    }
}
