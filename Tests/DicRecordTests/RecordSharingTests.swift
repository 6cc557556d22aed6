import Foundation
import Testing
@testable import DicRecord

/// One record written and read by more threads than there are cores (its lock, `RecordLock`,
/// never hands over and never loses a write): run under ThreadSanitizer by `.ci/run`.
@Suite struct RecordSharingTests {
    /// Runs `body(thread)` on `count` threads started together; returns when all have ended.
    static func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for t in 0..<count {
            done.enter()
            Thread {
                start.wait()
                body(t)
                done.leave()
            }.start()
        }
        for _ in 0..<count { start.signal() }
        done.wait()
    }

    @Test func eightThreadsWriteAndReadOneRecordAndNothingIsLost() throws {
        let record = Record()
        let rounds = 2_000
        Self.onThreads(8) { t in
            for i in 0..<rounds {
                record.set("c\(t)", i)                       // a column of its own
                record.shared = t * rounds + i               // and one they all write
                let mine: Int? = record["c\(t)"]
                precondition(mine == i, "thread \(t) read \(String(describing: mine)) after writing \(i)")
                _ = record.shared
            }
        }
        for t in 0..<8 { #expect(try record.get("c\(t)", as: Int.self) == rounds - 1) }
        #expect(record.columnCount == 9)
        let last = try record.get("shared", as: Int.self)
        #expect((0..<8).contains { last == $0 * rounds + rounds - 1 }, "the shared column holds one thread's last write: \(last)")
        #expect(Set(record.modifiedColumns).count == 9)
    }

    @Test func aFetchedRecordReadByEightThreadsWhileOneWritesIt() throws {
        try withDatabase { t in
            try t.db.update("create table item(id integer primary key, n integer, label text)")
            try t.db.update("insert into item(n, label) values (1, 'one')")
            let record = try #require(try t.db.findFirst("select * from item"))
            Self.onThreads(8) { thread in
                for i in 0..<1_000 {
                    if thread == 0 {
                        record.n = i
                    } else {
                        let n: Int? = record["n"]
                        precondition(n != nil && n! >= 0 && n! < 1_000, "read \(String(describing: n))")
                        precondition((record["label"] as String?) == "one")
                    }
                }
            }
            #expect(try record.get("n", as: Int.self) == 999)
        }
    }
}
