import Foundation

/// The threads the async API runs its SQLite work on.
///
/// A job may block: it waits for the writer (up to the busy timeout), for SQLite's own busy
/// handler, or for a long statement. Swift's cooperative pool has as many threads as cores, so
/// blocking there could starve the very task that would release the writer. Here a job that finds
/// no idle thread gets a new one: a wait can slow a job down but never deadlock it. Threads that
/// stay idle for `idleLifetime` (5 s by default) end.
///
/// A job is handed straight to the thread that went idle last (its caches are the warmest), which
/// waits on a semaphore of its own: a hand-over wakes exactly that thread, with no shared
/// condition whose waiters contend for its lock.
final class BlockingPool: @unchecked Sendable {
    static let shared = BlockingPool()

    /// An idle thread, waiting for the job handed to it.
    private final class Worker: @unchecked Sendable {
        let wake = DispatchSemaphore(value: 0)
        var job: (@Sendable () -> Void)?   // set under the pool's lock, read by the worker after `wake`
    }

    private let lock = NSLock()
    private var idle: [Worker] = []   // guarded by lock; the last went idle last
    private let idleLifetime: TimeInterval

    /// `idleLifetime`: how long a thread waits for a job before it ends (short in tests, which
    /// then hand jobs over as waits run out).
    init(idleLifetime: TimeInterval = 5) {
        self.idleLifetime = idleLifetime
    }

    func run(_ job: @escaping @Sendable () -> Void) {
        lock.lock()
        if let worker = idle.popLast() {
            worker.job = job
            lock.unlock()
            worker.wake.signal()
            return
        }
        lock.unlock()
        // The first job goes through the worker too: the thread keeps its start closure (and
        // what that captures) until it ends.
        let worker = Worker()
        worker.job = job
        let thread = Thread { [self] in work(worker) }
        thread.name = "DicRecord.async"
        thread.start()
    }

    private func work(_ me: Worker) {
        ThreadLeases.current.isPoolThread = true
        while true {
            // (The job, a temporary, and what it captured are let go as soon as it has run.)
            takeJob(me)()
            lock.lock()
            idle.append(me)
            lock.unlock()
            if me.wake.wait(timeout: .now() + idleLifetime) == .timedOut {
                lock.lock()
                if let index = idle.firstIndex(where: { $0 === me }) {
                    idle.remove(at: index)
                    lock.unlock()
                    return
                }
                lock.unlock()
                // A job was handed over as the wait ran out: its signal is on the way.
                me.wake.wait()
            }
        }
    }

    /// The job handed to `me` (before its thread started, or with its wake-up).
    private func takeJob(_ me: Worker) -> @Sendable () -> Void {
        lock.lock()
        defer { lock.unlock() }
        guard let job = me.job else { preconditionFailure("BlockingPool: a worker has no job handed to it") }
        me.job = nil
        return job
    }
}
