import Foundation

/// The task executor of one SQLite pool's async transactions: their jobs run one after another,
/// in the order they came, on one `BlockingPool` thread at a time.
///
/// Why: SQLite has one writer. Spread over many threads, transactions from many tasks would each
/// wake a thread of their own and then take turns at the writer, a sleep and a wake-up per
/// turn (two more thread switches per transaction). Run in a line on one thread, each begins
/// where the last ended, with the writer free, and the thread stays busy while the line is full
/// (`concurrency` in the benchmarks: the async API from 8 tasks 2.2× raw C → 1.7×).
///
/// A transaction that finds the writer taken (by a synchronous call, or by an async transaction
/// waiting on something) does not wait here: it moves to `PoolExecutor`, where waiting is safe
/// (`Db.runAsyncTransaction`). But a job in the line may still block (SQLite waiting for another
/// process's lock, a call that waits for a sibling task of its own transaction, user code that
/// blocks), and the job that would let it go may be queued behind it. So `LaneWatch` looks at
/// every busy lane every `LaneWatch.period`: a lane that has started no job since the last look
/// while jobs wait gets one more thread, which runs the line until another thread is free to (no
/// job of the others has run a whole period). A line held up by a blocked job moves again within
/// two periods, and no job is ever left waiting for one that waits for it: as in `BlockingPool`,
/// a wait can slow a job down, never deadlock it.
final class WriterLane: TaskExecutor, @unchecked Sendable {   // every field is guarded by `lock`
    private let lock = NSLock()
    private var jobs: [UnownedJob] = []
    private var head = 0                // jobs[..<head] have been taken
    private var drainers = 0            // threads running the line now
    private var started: UInt64 = 0     // jobs started so far; a job's number is `started` just after it started
    private var seen: UInt64 = 0        // `started` at the watch's last look
    private var seenBefore: UInt64 = 0  // `started` at the look before: jobs numbered up to it have run a whole period
    private var running: [UInt64] = []  // the numbers of the jobs running now (one per drainer, at most)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        jobs.append(job)
        let starts = drainers == 0
        if starts { drainers = 1 }
        lock.unlock()
        if starts {
            BlockingPool.shared.run { self.drain() }
            LaneWatch.shared.watch(self)
        }
    }

    /// Runs the jobs in line until there are none.
    private func drain() {
        lock.lock()
        while true {
            guard head < jobs.count else {
                // The largest burst's room is kept only while it is small.
                jobs.removeAll(keepingCapacity: jobs.capacity <= 64)
                head = 0
                drainers -= 1
                lock.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            started &+= 1
            let number = started
            running.append(number)
            // A line that never empties is compacted now and then, not left to grow.
            if head >= 256, head * 2 >= jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            lock.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
            lock.lock()
            if let index = running.firstIndex(of: number) { running.remove(at: index) }
            // A thread the watch added leaves once another is free to run the line: not while
            // the jobs of the others have all run for a whole period (blocked, or long).
            let blocked = running.count { $0 <= seenBefore }
            if drainers - blocked > 1 {
                drainers -= 1
                lock.unlock()
                return
            }
        }
    }

    /// The watch's look: when jobs wait and none has started since the last look, the jobs that
    /// run are blocked (or long): one more thread takes up the line. Returns whether the lane
    /// still runs jobs.
    func look() -> Bool {
        lock.lock()
        guard drainers > 0 else {
            lock.unlock()
            return false
        }
        let stuck = head < jobs.count && started == seen
        seenBefore = seen
        seen = started
        if stuck { drainers += 1 }
        lock.unlock()
        if stuck { BlockingPool.shared.run { self.drain() } }
        return true
    }

    /// Jobs waiting, threads running them, and jobs started so far, for tests.
    var state: (waiting: Int, drainers: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (jobs.count - head, drainers)
    }

    var jobsStarted: UInt64 {
        lock.lock()
        defer { lock.unlock() }
        return started
    }
}

/// One thread that looks at busy `WriterLane`s every `period` (see there). A lane stays watched
/// for `linger` looks after it went idle, so that a lane busy in bursts does not wake the watch
/// at each one; with no lane to watch, the thread sleeps until one starts.
final class LaneWatch: @unchecked Sendable {   // every field is guarded by `condition`
    static let shared = LaneWatch()
    static let period: useconds_t = 5_000
    private static let linger = 10

    private let condition = NSCondition()
    private var lanes: [(lane: WriterLane, idleLooks: Int)] = []
    private var started = false
    private var sleeping = false

    func watch(_ lane: WriterLane) {
        condition.lock()
        if let index = lanes.firstIndex(where: { $0.lane === lane }) {
            lanes[index].idleLooks = 0
        } else {
            lanes.append((lane, 0))
        }
        let wake = sleeping
        if !started {
            started = true
            let thread = Thread { [self] in run() }
            thread.name = "DicRecord.laneWatch"
            thread.start()
        }
        condition.unlock()
        if wake { condition.signal() }
    }

    private func run() {
        while true {
            condition.lock()
            while lanes.isEmpty {
                sleeping = true
                condition.wait()
                sleeping = false
            }
            condition.unlock()
            usleep(Self.period)
            condition.lock()
            // Looked at under the watch's lock: a lane that starts again meanwhile calls `watch`
            // after its look, and is kept or added back.
            for index in lanes.indices {
                lanes[index].idleLooks = lanes[index].lane.look() ? 0 : lanes[index].idleLooks + 1
            }
            lanes.removeAll { $0.idleLooks > Self.linger }
            condition.unlock()
        }
    }
}
