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

    /// Jobs that each wait for all the others: every one must get a thread of its own (an idle
    /// thread when there is one, else a new one), or none would finish.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func poolJobsThatWaitForEachOtherAllGetAThread() {
        let pool = BlockingPool()
        let count = 12
        let arrived = Guarded(0)
        let failures = ErrorLog()
        let allThere = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        for round in 0..<3 {   // later rounds are handed to the threads the earlier ones left idle
            arrived.withLock { $0 = 0 }
            for _ in 0..<count {
                pool.run {
                    let last = arrived.withLock { arrived -> Bool in
                        arrived += 1
                        return arrived == count
                    }
                    if last { for _ in 0..<count { allThere.signal() } }
                    if allThere.wait(timeout: .now() + 30) == .timedOut { failures.add("round \(round): a job waited 30 s for the others") }
                    if !ThreadLeases.current.isPoolThread { failures.add("round \(round): a job ran off the pool's threads") }
                    done.signal()
                }
            }
            let deadline = DispatchTime.now() + 60
            for _ in 0..<count where done.wait(timeout: deadline) == .timedOut { failures.add("round \(round): a job never ended") }
        }
        #expect(failures.items.isEmpty)
    }

    /// Jobs handed one after another, from many threads at once, each run exactly once; with
    /// threads that end after 100 µs idle, many are handed over just as a thread's wait runs out.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)), arguments: [5.0, 0.0001])
    func poolJobsRunExactlyOnce(idleLifetime: Double) {
        let pool = BlockingPool(idleLifetime: idleLifetime)
        let jobs = 20_000
        let runs = Guarded([Int](repeating: 0, count: jobs))
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.concurrentPerform(iterations: 4) { part in
            for i in stride(from: part, to: jobs, by: 4) {
                pool.run {
                    runs.withLock { $0[i] += 1 }
                    done.signal()
                }
                if i % 64 == 0 { usleep(150) }   // let threads go idle, and some run out their wait
            }
        }
        let deadline = DispatchTime.now() + 60
        var ended = 0
        while ended < jobs, done.wait(timeout: deadline) == .success { ended += 1 }
        #expect(ended == jobs)
        #expect(runs.withLock { $0 }.allSatisfy { $0 == 1 })
    }
}
