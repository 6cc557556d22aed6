import Foundation

/// The threads the async API runs its SQLite work on.
///
/// A job may block: it waits for the writer (up to the busy timeout), for SQLite's own busy
/// handler, or for a long statement. Swift's cooperative pool has as many threads as cores, so
/// blocking there could starve the very task that would release the writer. Here a job that finds
/// no idle thread gets a new one: a wait can slow a job down but never deadlock it. Threads that
/// stay idle for a few seconds end.
final class BlockingPool: @unchecked Sendable {
    static let shared = BlockingPool()

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []   // guarded by condition
    private var idleThreads = 0                     // guarded by condition
    private let idleLifetime: TimeInterval = 5

    func run(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        // Each idle thread takes one queued job when it wakes; a job beyond them gets a thread.
        let spawn = idleThreads < jobs.count
        condition.unlock()
        // Signalled once the lock is let go: the thread woken takes it at once.
        if !spawn { condition.signal() }
        if spawn {
            let thread = Thread { [self] in work() }
            thread.name = "DicRecord.async"
            thread.start()
        }
    }

    private func work() {
        ThreadLeases.current.isPoolThread = true
        condition.lock()
        while true {
            if !jobs.isEmpty {
                let job = jobs.removeFirst()
                condition.unlock()
                job()
                condition.lock()
                continue
            }
            idleThreads += 1
            let signalled = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
            idleThreads -= 1
            if !signalled && jobs.isEmpty { break }
        }
        condition.unlock()
    }
}
