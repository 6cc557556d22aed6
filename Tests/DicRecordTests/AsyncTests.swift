import Foundation
import Testing
@testable import DicRecord

final class AsyncPupil: Model {
    @Column var name: String?
    @Column var age: Int = 0
}

/// The async API: twins of the Db and dao methods, async transactions that every call of the task
/// joins, cancellation between rows.
@Suite struct AsyncTests {
    private func makeTable(_ db: Db, rows: Int = 0) throws {
        try db.update(db.ddl("create table t (id integer primary key, v integer, s text)"))
        if rows > 0 {
            try db.batch("insert into t (v, s) values (?, ?)", (1...rows).map { [$0, "row \($0)"] })
        }
    }

    @Test(arguments: Engine.available) func twinsReturnTheSameAsTheSyncMethods(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db, rows: 20)
            let db = t.db
            #expect(try await db.find("select * from t where v > ?", 15).map { $0["v"] as Int? } == [16, 17, 18, 19, 20])
            #expect(try await db.findFirst("select * from t order by v desc")?["v"] as Int? == 20)
            #expect(try await db.findById("t", 3)?["s"] as String? == "row 3")
            #expect(try await db.queryInt("select count(*) from t") == 20)
            #expect(try await db.query("select v from t where v <= ?", 2, as: Int.self) == [1, 2])
            #expect(try await db.update("update t set s = ? where v > ?", "big", 18) == 2)
            let page = try await db.paginate(2, 5, "select *", "from t order by v")
            #expect(page.list.map { $0["v"] as Int? } == [6, 7, 8, 9, 10])
            #expect(page.totalRow == 20)
            let record = Record()
            record.v = 99
            #expect(try await db.save("t", record))
            #expect(record["id"] as Int? == 21)
            #expect(try await db.batch("insert into t (v) values (?)", [[100], [101]]) == [1, 1])
            #expect(try await Db.queryInt("select count(*) from t") == 23)
            #expect(try await db.deleteById("t", 21))
            let seen = Counter()
            try await db.each("select v from t order by v") { record in
                seen.add(record["v"] ?? 0)
                return seen.value < 10
            }
            #expect(seen.value == 10)  // 1 + 2 + 3 + 4: stopped after returning false
        }
    }

    @Test(arguments: Engine.available) func asyncTransactionCommitsAndRollsBack(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db)
            let db = t.db
            #expect(try await db.tx { db in
                try await db.update("insert into t (v) values (1)")
                return true
            })
            #expect(try await db.tx { db in
                try await db.update("insert into t (v) values (2)")
                return false
            } == false)
            await #expect(throws: DatabaseError.self) {
                try await db.tx { db in
                    try await db.update("insert into t (v) values (3)")
                    try await db.update("insert into nowhere values (1)")
                    return true
                }
            }
            #expect(try await db.query("select v from t order by v", as: Int.self) == [1])
            let value = try await db.transaction { db -> Int in
                try await db.update("insert into t (v) values (4)")
                return try await db.queryInt("select count(*) from t") ?? -1
            }
            #expect(value == 2)
        }
    }

    @Test(arguments: Engine.available) func nestedAsyncTransactionIsASavepoint(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db)
            try await t.db.tx { db in
                try await db.update("insert into t (v) values (1)")
                let inner = try await db.tx { db in
                    try await db.update("insert into t (v) values (2)")
                    return false  // rolls back only the inner work
                }
                #expect(inner == false)
                try await db.tx { db in
                    try await db.update("insert into t (v) values (3)")
                    return true
                }
                try syncNestedInsert(db, 4)  // a synchronous nested tx joins too
                return true
            }
            #expect(try await t.db.query("select v from t order by v", as: Int.self) == [1, 3, 4])
        }
    }

    @Test(arguments: Engine.available) func callsInsideAnAsyncTransactionSeeItsWorkAndOthersDoNot(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db, rows: 3)
            let db = t.db
            try await db.tx { db in
                try await db.update("insert into t (v) values (10)")
                // Async read, sync read, a read in a child task, and a dao call: all join.
                #expect(try await db.queryInt("select count(*) from t") == 4)
                #expect(try syncCount(db) == 4)
                async let child = db.queryInt("select count(*) from t")
                #expect(try await child == 4)
                return true
            }
            #expect(try await db.queryInt("select count(*) from t") == 4)
        }
    }

    @Test(arguments: Engine.available) func detachedTaskSeesOnlyCommittedRows(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db, rows: 3)
            let name = t.context.configName
            try await t.db.tx { db in
                try await db.update("insert into t (v) values (10)")
                let registry = ContextRegistry.active
                let outside = try await Task.detached {
                    try await ContextRegistry.withScoped(registry) {
                        try await Db.use(name).queryInt("select count(*) from t")
                    }
                }.value
                #expect(outside == 3)
                return true
            }
        }
    }

    @Test(arguments: Engine.available) func daoTwinsAndModelsInsideAnAsyncTransaction(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            t.context.register(AsyncPupil.self)
            try await t.db.tx { _ in
                for (name, age) in [("ann", 9), ("bob", 12), ("cy", 15)] {
                    let pupil = AsyncPupil()
                    pupil.name = name
                    pupil.age = age
                    try syncSave(pupil)  // sync, from the async closure: joins
                }
                #expect(try await AsyncPupil.dao.count() == 3)
                return true
            }
            let older = try await AsyncPupil.dao.findByCondition("age > ?", 10)
            #expect(older.map(\.name) == ["bob", "cy"])
            #expect(try await AsyncPupil.dao.findById(1)?.name == "ann")
            #expect(try await AsyncPupil.dao.max("age", as: Int.self) == 15)
            #expect(try await AsyncPupil.dao.paginate(1, 2, "select *", "from \"AsyncPupil\" order by age").list.map(\.age) == [9, 12])
            await #expect(throws: DicRecordError.self) {
                try await t.db.tx { _ in
                    try await AsyncPupil.dao.deleteAll()
                    throw DicRecordError(.invalidArgument, "stop")
                }
            }
            #expect(try await AsyncPupil.dao.count() == 3)
            #expect(try await AsyncPupil.dao.deleteByCondition("age < ?", 10) == 1)
        }
    }

    @Test(arguments: Engine.available) func modelWritesHaveAsyncForms(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            t.context.register(AsyncPupil.self)
            let pupil = AsyncPupil()
            pupil.name = "dee"
            pupil.age = 7
            let saved = try await pupil.save()
            #expect(saved)
            let id: Int? = pupil.id
            #expect(id == 1)
            pupil.age = 8
            let updated = try await pupil.update()
            #expect(updated)
            #expect(try await AsyncPupil.dao.findById(1)?.age == 8)
            // Inside an async transaction that rolls back, the async save is undone too.
            let other = AsyncPupil()
            other.name = "eve"
            #expect(try await t.db.tx { _ in try await other.save() && false } == false)
            #expect(try await AsyncPupil.dao.count() == 1)
            let deleted = try await pupil.delete()
            #expect(deleted)
            #expect(try await AsyncPupil.dao.count() == 0)
        }
    }

    @Test(arguments: Engine.available) func concurrentChildrenOfATransactionTakeTurns(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db)
            try await t.db.tx { db in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<8 {
                        group.addTask {
                            // Nested transactions from concurrent children: each a savepoint, one at a time.
                            try await db.tx { db in
                                try await db.update("insert into t (v) values (?)", i)
                                return i % 2 == 0
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                return true
            }
            #expect(try await t.db.query("select v from t order by v", as: Int.self) == [0, 2, 4, 6])
        }
    }

    @Test(arguments: Engine.available) func cancellationStopsALongReadBetweenRows(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db, rows: 20_000)
            let db = t.db
            let started = Counter()
            let reached = DispatchSemaphore(value: 0), cancelled = DispatchSemaphore(value: 0)
            let task = Task {
                try await db.each("select * from t") { _ in
                    started.add(1)
                    if started.value == 100 {
                        // Row 100 waits (on a DicRecord thread) until the task has been cancelled.
                        // (Long enough for a loaded machine: beside four busy loops the test's own
                        // task once took over 30 s to get back to its thread and cancel.)
                        reached.signal()
                        _ = cancelled.wait(timeout: .now() + 300)
                    }
                    return true
                }
            }
            try await onThread { reached.wait() }
            task.cancel()
            cancelled.signal()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(started.value == 100)  // stopped at the next row
            // A task cancelled before it starts does nothing.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await db.update("delete from t")
            }
            await #expect(throws: CancellationError.self) { try await early.value }
            #expect(try await db.queryInt("select count(*) from t") == 20_000)
        }
    }

    /// An async call checks its own task's status between rows (no cancellation handler per call):
    /// cancelled from inside the call, it stops at the next row, and so does a read nested in it.
    @Test(arguments: Engine.available) func aCallCancelledFromInsideStopsAtTheNextRow(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db, rows: 1_000)
            let db = t.db
            let seen = Counter(), nestedStopped = Counter()
            let task = Task {
                try await db.each("select * from t order by id") { _ in
                    seen.add(1)
                    if seen.value == 10 {
                        withUnsafeCurrentTask { $0?.cancel() }  // the task whose job runs this callback
                        do {
                            _ = try db.find("select * from t")
                        } catch is CancellationError {
                            nestedStopped.add(1)
                        }
                    }
                    return true
                }
            }
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(seen.value == 10)
            #expect(nestedStopped.value == 1)
            // Outside any async call a read is not the task's to stop: a sync find in a cancelled
            // task reads every row.
            let sync = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try db.find("select * from t").count
            }
            #expect(try await sync.value == 1_000)
        }
    }

    /// A loop that does little per row (`find`, `query`) looks at its task's status at the first
    /// row and every `rowsBetweenChecks` rows after it; `each`, which runs the caller's code each
    /// row, looks at every row; outside a task nothing is ever cancelled.
    @Test func aFindLikeLoopLooksAtItsTaskEveryFewRows() async throws {
        let rowsRead = await Task {
            var check = TaskCancellationCheck()
            var rows = 0
            do {
                for _ in 0..<5 {
                    try check.check()
                    rows += 1
                }
                withUnsafeCurrentTask { $0?.cancel() }
                #expect(throws: CancellationError.self) { try TaskCancellationCheck().checkNow() }
                while rows < 1_000 {
                    try check.check()
                    rows += 1
                }
            } catch {}
            return rows
        }.value
        #expect(rowsRead == TaskCancellationCheck.rowsBetweenChecks)
        // On a thread that runs no task, every look finds it not cancelled.
        await #expect(throws: Never.self) {
            try await onThread {
                var check = TaskCancellationCheck()
                for _ in 0..<100 { try check.check() }
                try check.checkNow()
            }
        }
    }

    #if compiler(>=6.2)
    /// The check reads the task that runs the read: a task started immediately (run synchronously,
    /// on this thread) inside the callback of a cancelled call is a task of its own, not cancelled,
    /// and a read in it reads every row.
    @Test(arguments: Engine.available) func aReadInAnImmediateTaskInsideACallChecksItsOwnTask(engine: Engine) async throws {
        guard #available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *) else { return }  // Task.immediate
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db, rows: 100)
            let db = t.db
            let stopped = Counter(), failed = Counter(), rowsRead = Counter()
            let outer = Task {
                try await db.each("select * from t") { _ in
                    withUnsafeCurrentTask { $0?.cancel() }
                    _ = Task.immediate {
                        do {
                            rowsRead.add(try db.find("select * from t").count)
                        } catch is CancellationError {
                            stopped.add(1)
                        } catch {
                            failed.add(1)
                        }
                    }
                    return false
                }
            }
            _ = try? await outer.value
            #expect(rowsRead.value == 100)
            #expect(stopped.value == 0)
            #expect(failed.value == 0)
        }
    }
    #endif

    @Test(arguments: Engine.available) func cancelledTransactionRollsBackAndFreesTheWriter(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db)
            let db = t.db
            let task = Task {
                try await db.tx { db in
                    try await db.update("insert into t (v) values (1)")
                    try await Task.sleep(for: .seconds(10))
                    return true
                }
            }
            try await Task.sleep(for: .milliseconds(100))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(try await db.queryInt("select count(*) from t") == 0)
            #expect(try await db.update("insert into t (v) values (2)") == 1)  // the writer is free again
        }
    }

    @Test(arguments: Engine.available) func manyAsyncTransactionsOnTwoCoresNeverDeadlock(engine: Engine) async throws {
        // 64 writers queue for one writer: on a slow, loaded machine the last waits longer than the
        // default 5 s busy timeout without any deadlock. A deadlock still shows: the watchdog's 120 s.
        var options = DbContext.Options()
        options.busyTimeout = 60
        try await withDatabase(options: options, engine: engine) { t in
            try makeTable(t.db)
            let db = t.db
            try await withWatchdog(seconds: 120) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<32 {
                        group.addTask {
                            try await db.tx { db in
                                try await db.update("insert into t (v) values (?)", i)
                                try await Task.sleep(for: .milliseconds(2))  // hold the writer across a suspension
                                return true
                            }
                        }
                        group.addTask {
                            // Synchronous writes from plain threads wait for the async transactions, and vice versa.
                            try await onThread { try syncInsert(db, 100 + i) }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            #expect(try await db.queryInt("select count(*) from t") == 64)
        }
    }

    @Test(arguments: Engine.available) func aTaskThatOutlivesItsTransactionRunsOnItsOwn(engine: Engine) async throws {
        try await withDatabase(engine: engine) { t in
            try makeTable(t.db)
            let db = t.db
            let gate = AsyncGate()
            await gate.acquire()
            var late: Task<Int, any Error>?
            try await db.tx { db in
                try await db.update("insert into t (v) values (1)")
                late = Task {  // inherits the transaction's task-locals, but starts after it ended
                    await gate.acquire()
                    return try await db.update("insert into t (v) values (2)")
                }
                return false
            }
            gate.release()
            #expect(try await late?.value == 1)
            #expect(try await db.query("select v from t", as: Int.self) == [2])
        }
    }

    @Test func readonlyContextRefusesAnAsyncTransaction() async throws {
        try await withDatabase { t in
            try makeTable(t.db, rows: 1)
            var options = DbContext.Options()
            options.readonly = true
            let readonly = try DbContext(path: t.path, configName: "ro", options: options)
            try readonly.start()
            defer { readonly.stop() }
            #expect(try await Db.use("ro").queryInt("select count(*) from t") == 1)
            await #expect(throws: DicRecordError.self) {
                try await Db.use("ro").tx { db in try await db.update("insert into t (v) values (1)") > 0 }
            }
        }
    }
}

// Synchronous calls, made from async code: in an async context the compiler picks the async twin.
private func syncNestedInsert(_ db: Db, _ v: Int) throws {
    try db.tx { db in
        try db.update("insert into t (v) values (?)", v)
        return true
    }
}

private func syncCount(_ db: Db) throws -> Int? {
    try db.queryInt("select count(*) from t")
}

private func syncInsert(_ db: Db, _ v: Int) throws {
    try db.update("insert into t (v) values (?)", v)
}

/// Runs `work` on a thread of its own (not Swift's cooperative pool) and awaits it. The test's
/// isolated context registry goes along (task-locals do not reach a plain thread by themselves).
func onThread(_ work: @escaping @Sendable () throws -> Void) async throws {
    let registry = ContextRegistry.scoped
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread {
            continuation.resume(with: Result { try ContextRegistry.withScoped(registry) { try work() } })
        }.start()
    }
}

private func syncSave(_ model: Model) throws {
    try model.save()
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var total = 0
    func add(_ n: Int) { lock.lock(); total += n; lock.unlock() }
    var value: Int { lock.lock(); defer { lock.unlock() }; return total }
}
