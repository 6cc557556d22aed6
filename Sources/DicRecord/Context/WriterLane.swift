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
    private var blocked: [UInt64: Int] = [:]  // running jobs that said they wait (`whileBlocked`): how many waits deep

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        lock.lock()
        jobs.append(job)
        // No thread free to run the line: none, or each on a job that said it waits.
        let starts = drainers <= blocked.count
        if starts { drainers += 1 }
        lock.unlock()
        if starts {
            BlockingPool.shared.run { self.drain() }
            LaneWatch.shared.watch(self)
        }
    }

    /// Runs `wait`, a wait that may block this thread (for a connection, for a sibling task's
    /// savepoint). On a thread running a lane's job, the line first gets another thread if none
    /// other is free to run it: the job this one waits for may be queued behind it, and the
    /// watch would take two periods per blocked job to find that out (many child tasks of one
    /// transaction, all waiting for one savepoint, would each pay them).
    static func whileBlocked<T, E: Error>(_ wait: () throws(E) -> T) throws(E) -> T {
        guard let (lane, number) = ThreadLeases.current.laneJob else { return try wait() }
        lane.willBlock(number)
        defer { lane.didUnblock(number) }
        return try wait()
    }

    private func willBlock(_ number: UInt64) {
        lock.lock()
        blocked[number, default: 0] += 1
        let adds = head < jobs.count && drainers - heldUp() == 0
        if adds { drainers += 1 }
        lock.unlock()
        if adds { BlockingPool.shared.run { self.drain() } }
    }

    private func didUnblock(_ number: UInt64) {
        lock.lock()
        if let depth = blocked[number] { blocked[number] = depth > 1 ? depth - 1 : nil }
        lock.unlock()
    }

    /// The running jobs that hold up their threads: they said they wait, or have run a whole
    /// period (blocked, or long). Under `lock`.
    private func heldUp() -> Int {
        running.count { $0 <= seenBefore || blocked[$0] != nil }
    }

    /// Runs the jobs in line until there are none.
    private func drain() {
        let leases = ThreadLeases.current
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
            leases.laneJob = (self, number)
            job.runSynchronously(on: asUnownedTaskExecutor())
            leases.laneJob = nil
            lock.lock()
            if let index = running.firstIndex(of: number) { running.remove(at: index) }
            // A thread added to the line leaves once another is free to run it: not while the
            // jobs of the others all hold up their threads.
            if drainers - heldUp() > 1 {
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

    /// Jobs waiting and threads running them, for tests.
    var state: (waiting: Int, drainers: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (jobs.count - head, drainers)
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
