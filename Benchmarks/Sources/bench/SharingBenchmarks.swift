import BenchHarness
import DicRecord
import Foundation
import Synchronization

/// record_sharing: threads that write a column of a record and read it back (`r.n = i`, then
/// `r.n`), 200,000 operations in all (a write and a read each), spread over the threads.
/// - raw: the floor for a value shared by threads, a `Mutex`-guarded array of 10 integers
///   written and read by 8 threads the same way.
/// - dicrecord: one `Record` shared by 1, 4 and 8 threads (on this machine's 2 cores), and a
///   record per thread for 8 threads.
struct SharingBenchmarks {
    let bench: Bench
    let config: BenchConfig

    func run() throws {
        let operations = config.quick ? 20_000 : 200_000
        try bench.workload("record_sharing") { w in
            let shared = Mutex<[Int]>(Array(repeating: 0, count: 10))
            w.measure("raw") {
                Self.onThreads(8, operations) { i in
                    shared.withLock { $0[3] = i }
                    _ = shared.withLock { $0[3] }
                }
            }
            for threads in [1, 4, 8] {
                let record = DicRecord.Record()
                w.measure("dicrecord one Record, \(threads) threads") {
                    Self.onThreads(threads, operations) { i in
                        record.n = i
                        _ = record.n
                    }
                }
            }
            let records = (0..<8).map { _ in DicRecord.Record() }
            w.measure("dicrecord a Record per thread, 8 threads") {
                Self.onThreads(8, operations) { i in
                    let record = records[i % 8]
                    record.n = i
                    _ = record.n
                }
            }
        }
    }

    /// Runs `operations` calls of `body` (with the operation's number) spread over `threads`
    /// threads that start together; returns when all have ended.
    static func onThreads(_ threads: Int, _ operations: Int, _ body: @escaping @Sendable (Int) -> Void) -> Int {
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let each = operations / threads
        for t in 0..<threads {
            done.enter()
            let thread = Thread {
                start.wait()
                for k in 0..<each { body(t + k * threads) }
                done.leave()
            }
            thread.start()
        }
        for _ in 0..<threads { start.signal() }
        done.wait()
        return 1
    }
}
