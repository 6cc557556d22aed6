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
}
