import Foundation

// How a task gets its SQLite work onto `BlockingPool` threads: the task executor of the async API
// (`PoolExecutor`), the hop for one call (`BlockingPool.performForTask`) and `Handover`, which
// carries a result that is not `Sendable` back to the task that asked for it.

/// The task executor of the async API: the jobs of tasks that prefer it run on `BlockingPool`
/// threads, where a call may block (waiting for the writer, in SQLite's busy handler, on a long
/// statement) without holding up Swift's cooperative pool.
final class PoolExecutor: TaskExecutor {
    static let shared = PoolExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        BlockingPool.shared.run { job.runSynchronously(on: PoolExecutor.shared.asUnownedTaskExecutor()) }
    }
}

extension BlockingPool {
    /// Runs `work` for the calling task on a pool thread (a hop only when the task is not on one
    /// already), inside the task's async transactions; long reads stop between rows once the task
    /// is cancelled.
    ///
    /// `tryHere`: first try on the task's own thread, without a hop (two thread switches, about
    /// 20 µs): a read whose reader is free at once runs right there; anything that would wait (a
    /// write, every reader busy, an async transaction to join, a server to reach) throws
    /// `WouldBlock` before running anything, and hops. Only for work whose first connection is
    /// taken before anything of it runs and that makes no call that waits after it (no user
    /// closure, no hook), so that moving it runs nothing twice and nothing waits here. Not when
    /// the task prefers an executor of its own (a NIO event loop): its threads are not ours to use.
    static func performForTask<T>(tryHere: Bool = false, _ work: () throws -> T) async throws -> sending T {
        try Task.checkCancellation()
        let leases = ThreadLeases.current
        if leases.isPoolThread { return try inline(work).value }
        if tryHere, withUnsafeCurrentTask(body: { $0?.unownedTaskExecutor == nil }) {
            do {
                return try inline {
                    // Set and cleared with no suspension between: the flag never leaks to another task.
                    let leases = ThreadLeases.current
                    leases.mustNotWait = true
                    defer { leases.mustNotWait = false }
                    return try work()
                }.value
            } catch is WouldBlock {}
        }
        let result = try await withTaskExecutorPreference(PoolExecutor.shared) { try inline(work) }
        return result.value
    }

    /// Runs `work` right here, inside the job of the task that asked for it (on the thread that
    /// runs it): long reads check that task's cancellation between rows. Synchronous: an async
    /// helper here cost every call a cancellation handler and executor checks on entry and return.
    private static func inline<T>(_ work: () throws -> T) throws -> Handover<T> {
        let leases = ThreadLeases.current
        let outer = leases.cancellation
        leases.cancellation = TaskCancellationCheck()
        defer { leases.cancellation = outer }
        return Handover(value: try work())
    }
}

/// Thrown by a pool asked for a connection it cannot give at once while `ThreadLeases.mustNotWait`
/// is set: the async call moves to a pool thread (nothing of it has run).
struct WouldBlock: Error {}

/// A value handed from the code that made it to the task that awaits it, which alone uses it
/// afterwards (models are not `Sendable`, but one fetched for a task belongs to that task).
struct Handover<T>: @unchecked Sendable {
    let value: T
}
