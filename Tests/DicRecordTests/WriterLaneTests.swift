import Foundation
import Testing
@testable import DicRecord

/// SQLite's async transactions run in the line of their pool's `WriterLane`, one after another on
/// one thread. A job in the line that blocks must never leave the jobs behind it (one of which may
/// be what it waits for) waiting: the lane's watch gives the line another thread. A transaction
/// that finds the writer taken waits off the line.
@Suite struct WriterLaneTests {
    /// Polls `condition` every millisecond for up to `seconds`; whether it came true.
    private static func eventually(within seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    /// A job that blocks until a job queued behind it has run: with one thread and no watch, it
    /// would wait for ever (here: 20 s, then fail).
    ///
    /// Both tasks start on the lane itself, and both are made at once, in line order: a task that
    /// began on the cooperative pool and moved to the lane could not start while other suites'
    /// sync calls from tasks held the pool's threads (a CI run waited more than 10 s for the first
    /// one to start), and a test task that waited for the first before making the second could
    /// not resume to make it for as long (a full run left the first waiting its 20 s).
    @Test(.timeLimit(.minutes(1 * sanitizerSlowdown)))
    func aJobWaitingForAJobBehindItInTheLineIsNotLeftWaiting() async throws {
        let lane = WriterLane()
        let firstRuns = Flag()
        let secondRan = DispatchSemaphore(value: 0)
        let first = Task(executorPreference: lane) {
            firstRuns.set()
            return secondRan.wait(timeout: .now() + 20)
        }
        let second = Task(executorPreference: lane) { _ = secondRan.signal() }
        #expect(await Self.eventually(within: 10 * Double(sanitizerSlowdown)) { firstRuns.isSet })
        #expect(await first.value == .success)
        await second.value
        // The thread the watch added leaves once the blocked job has ended; the line then empties.
        #expect(await Self.eventually(within: 10 * Double(sanitizerSlowdown)) { lane.state == (waiting: 0, drainers: 0) })
    }

    /// In one transaction, a child task opens a savepoint, writes, then runs `whileOpen` (which
    /// suspends, so the rest of the savepoint is queued in the line); its sibling writes once the
    /// savepoint is open, and so waits (blocking its thread) until it has ended. Both rows land.
    private static func savepointBesideAWaitingSibling(_ db: Db, whileOpen: @escaping @Sendable () async throws -> Void) async throws {
        try await db.update("create table n(id integer primary key, who text)")
        try await db.tx { db in
            let savepointOpen = Flag()
            async let first: Void = {
                try await db.tx { db in
                    try await db.update("insert into n(who) values ('savepoint')")
                    savepointOpen.set()
                    try await whileOpen()
                    return true
                }
            }()
            async let second: Void = {
                while !savepointOpen.isSet { try await Task.sleep(for: .milliseconds(1)) }
                try await db.update("insert into n(who) values ('sibling')")
            }()
            _ = try await (first, second)
            return true
        }
        #expect(try await db.query("select who from n order by id", as: String.self) == ["savepoint", "sibling"])
    }

    /// The sibling's call blocks its thread, and the savepoint's next step is queued behind it in
    /// the line. The busy timeout is a minute: if the line were left waiting, the transaction would
    /// fail with `.busy` after it, or the watchdog would fire first.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func aCallWaitingForASiblingsSavepointDoesNotStallTheLine() async throws {
        var options = DbContext.Options()
        options.busyTimeout = 60
        try await withDatabase(options: options) { t in
            let db = t.db
            try await withWatchdog(seconds: 30 * Double(sanitizerSlowdown)) {
                try await Self.savepointBesideAWaitingSibling(db) { try await Task.sleep(for: .milliseconds(50)) }
            }
        }
    }

    /// The same, with the savepoint's task suspending 300 times while its sibling stays blocked:
    /// each of its steps is queued behind the blocked call, so the line must keep a free thread
    /// for as long as the call blocks, not give it up after one job (which made each step wait two
    /// of the watch's periods: 300 steps took over 5 s, past the busy timeout of 3 s).
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func aSavepointThatSuspendsOftenWhileASiblingWaitsFinishesInTime() async throws {
        var options = DbContext.Options()
        options.busyTimeout = 3 * Double(sanitizerSlowdown)
        try await withDatabase(options: options) { t in
            let hops = Hops()
            try await Self.savepointBesideAWaitingSibling(t.db) {
                try await Task.sleep(for: .milliseconds(20))
                for _ in 0..<300 { await hops.hop() }
            }
            #expect(await hops.count == 300)
        }
    }

    /// Two hundred child tasks of one transaction all wait for a sibling's savepoint: each blocks
    /// its thread in the line, and each says so (`WriterLane.whileBlocked`), so the line gets its
    /// next thread at once. Left to the watch, each would wait two of its periods before the next
    /// could even ask: over 2 s in all, past the busy timeout of 1.5 s.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func manyCallsWaitingForOneSavepointAllGetTheirTurn() async throws {
        var options = DbContext.Options()
        options.busyTimeout = 1.5 * Double(sanitizerSlowdown)
        try await withDatabase(options: options) { t in
            let db = t.db
            try await db.update("create table n(id integer primary key, who integer)")
            try await db.tx { db in
                let savepointOpen = Flag()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await db.tx { db in
                            try await db.update("insert into n(who) values (-1)")
                            savepointOpen.set()
                            try await Task.sleep(for: .milliseconds(20))
                            return true
                        }
                    }
                    for who in 0..<200 {
                        group.addTask {
                            while !savepointOpen.isSet { try await Task.sleep(for: .milliseconds(1)) }
                            try await db.update("insert into n(who) values (?)", who)
                        }
                    }
                    try await group.waitForAll()
                }
                return true
            }
            #expect(try await db.queryInt("select count(*) from n") == 201)
            #expect(try await db.queryInt("select sum(who) from n") == 199 * 200 / 2 - 1)
        }
    }

    /// Async transactions on SQLite do run in their pool's line.
    @Test func asyncTransactionsRunInTheirPoolsLine() async throws {
        try await withDatabase { t in
            let db = t.db
            try await db.update("create table n(id integer primary key, v integer)")
            let lane = try t.context.pool().asyncLane
            for i in 0..<20 {
                let onTheLine = try await db.transaction { db in
                    try await db.update("insert into n(v) values (?)", i)
                    return ThreadLeases.current.laneJob?.lane === lane
                }
                #expect(onTheLine)
            }
            #expect(try await db.queryInt("select count(*) from n") == 20)
        }
    }

    /// Stopped while one transaction holds the writer and fifty wait for it (or are about to ask):
    /// `stop()` gives calls in flight up to the busy timeout, so each of the fifty either commits
    /// or fails with `.notStarted` naming the config; none hangs, the table holds exactly the rows
    /// of those that committed, and the line ends empty.
    @Test(.timeLimit(.minutes(1 * sanitizerSlowdown)))
    func stoppedWhileTransactionsWaitEveryOneEnds() async throws {
        try await withDatabase { t in
            let db = t.db
            try await db.update("create table n(id integer primary key, v integer)")
            let lane = try t.context.pool().asyncLane
            let holding = Flag()
            let holder = Task {
                try await db.tx { db in
                    try await db.update("insert into n(v) values (0)")
                    holding.set()
                    try await Task.sleep(for: .milliseconds(300))
                    return true
                }
            }
            #expect(await Self.eventually(within: 10 * Double(sanitizerSlowdown)) { holding.isSet })
            let waiting = (1...50).map { v in
                Task { () -> Result<Int, DicRecordError> in
                    do {
                        try await db.tx { db in
                            try await db.update("insert into n(v) values (?)", v)
                            return true
                        }
                        return .success(v)
                    } catch let error as DicRecordError {
                        return .failure(error)
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(50))
            t.context.stop()
            let holderCommitted = (try? await holder.value) != nil
            var committed: [Int] = holderCommitted ? [0] : []
            for task in waiting {
                switch try await task.value {
                case .success(let v): committed.append(v)
                case .failure(let error):
                    #expect(error.kind == .notStarted, "\(error)")
                    #expect(error.configName == "main")
                }
            }
            #expect(await Self.eventually(within: 10 * Double(sanitizerSlowdown)) { lane.state == (waiting: 0, drainers: 0) })
            try t.context.start()
            let stored = try await db.query("select v from n order by v", as: Int.self)
            #expect(stored == committed.sorted().map { Optional($0) })
        }
    }

    /// While another thread holds the writer, an async transaction waits for it off the line: the
    /// lane runs nothing meanwhile, and the transaction commits once the writer is let go.
    @Test(.timeLimit(.minutes(1 * sanitizerSlowdown)))
    func aTransactionFindingTheWriterTakenWaitsOffTheLine() async throws {
        try await withDatabase { t in
            let db = t.db
            try await db.update("create table n(id integer primary key, v integer)")
            let lane = try t.context.pool().asyncLane
            let held = DispatchSemaphore(value: 0)
            let release = Flag()
            let holder = Thread {
                _ = try? db.tx { db in
                    try db.update("insert into n(v) values (1)")
                    held.signal()
                    let start = Date()
                    while !release.isSet, Date().timeIntervalSince(start) < 30 { Thread.sleep(forTimeInterval: 0.002) }
                    return true
                }
            }
            holder.start()
            #expect(held.wait(timeout: .now() + 10) == .success)
            let committed = Flag()
            let waiting = Task {
                try await db.tx { db in
                    try await db.update("insert into n(v) values (2)")
                    return true
                }
                committed.set()
            }
            // It has come and gone from the line (to wait elsewhere): the lane is empty and idle.
            try await Task.sleep(for: .milliseconds(100))
            #expect(!committed.isSet)
            #expect(await Self.eventually(within: 10 * Double(sanitizerSlowdown)) { lane.state == (waiting: 0, drainers: 0) })
            release.set()
            try await waiting.value
            #expect(try await db.query("select v from n order by id", as: Int.self) == [1, 2])
        }
    }

    /// A synchronous writer keeps sending async transactions off the line to wait for the writer
    /// while the line keeps taking it: a waiter must still get its turn within the busy timeout
    /// (1 s here) however busy the line is.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func transactionsWaitingOffTheLineAreNotStarved() async throws {
        var options = DbContext.Options()
        options.busyTimeout = 1 * Double(sanitizerSlowdown)
        try await withDatabase(options: options) { t in
            let db = t.db
            try await db.update("create table n(id integer primary key, v integer)")
            let stop = Flag()
            let syncFailures = ErrorLog()
            let syncDone = DispatchSemaphore(value: 0)
            Thread {
                while !stop.isSet {
                    do {
                        _ = try db.tx { db in
                            try db.update("insert into n(v) values (-1)")
                            Thread.sleep(forTimeInterval: 0.0005)   // holds the writer a little
                            return true
                        }
                    } catch { syncFailures.add("\(error)") }
                }
                syncDone.signal()
            }.start()
            let end = Date(timeIntervalSinceNow: 2)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        // At least one each: on a loaded machine a task may first run after `end`
                        // (the test then saw no async transaction at all, and failed on a count of 0).
                        repeat {
                            try await db.tx { db in
                                try await db.update("insert into n(v) values (?)", task)
                                return true
                            }
                        } while Date() < end
                    }
                }
                try await group.waitForAll()
            }
            stop.set()
            syncDone.wait()
            #expect(syncFailures.items.isEmpty, "\(syncFailures.items)")
            #expect(try await db.queryInt("select count(distinct v) from n where v >= 0") == 8)
        }
    }

    /// Async transactions from many tasks, some nested, all commit (or roll back) as asked,
    /// whichever thread the line runs on.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func transactionsFromManyTasksAllLand() async throws {
        try await withDatabase { t in
            let db = t.db
            try await db.update("create table n(id integer primary key, task integer, v integer)")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<8 {
                    group.addTask {
                        for i in 0..<100 {
                            try await db.tx { db in
                                try await db.update("insert into n(task, v) values (?, ?)", task, i)
                                if i % 10 == 0 {
                                    try await db.tx { db in
                                        try await db.update("insert into n(task, v) values (?, -1)", task)
                                        return false   // rolled back: never counted
                                    }
                                }
                                return true
                            }
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await db.queryInt("select count(*) from n") == 800)
            #expect(try await db.queryInt("select count(*) from n where v < 0") == 0)
            #expect(try await db.queryInt("select sum(v) from n") == 8 * (99 * 100 / 2))
        }
    }
}


/// Suspension points: each `hop` goes to the actor and back.
private actor Hops {
    private(set) var count = 0
    func hop() { count += 1 }
}
