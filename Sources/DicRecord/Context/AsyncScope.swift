import Foundation
import Synchronization

/// The writer connection of one async transaction, shared by every call its task (and the
/// task's children) makes on that config while the transaction is open.
///
/// Calls from the task take `lock` for their duration, so child tasks of one transaction use
/// the connection one at a time. Nested async transactions at one depth wait for each other on
/// `nestingGate(depth:)`, so their savepoints never interleave.
final class TransactionLease: @unchecked Sendable {
    let poolID: ObjectIdentifier
    let connection: Connection
    let configName: String
    private let lock = NSLock()
    private var ended = false                 // guarded by lock
    private var gates: [Int: AsyncGate] = [:] // guarded by lock

    init(poolID: ObjectIdentifier, connection: Connection, configName: String) {
        self.poolID = poolID
        self.connection = connection
        self.configName = configName
    }

    /// Runs `body` with the connection installed as this thread's writer for the pool, or returns
    /// nil when the transaction has already ended (a task that outlived it is no part of it).
    func join<T>(_ leases: ThreadLeases, _ body: (Connection) throws -> T) rethrows -> T? {
        lock.lock()
        defer { lock.unlock() }
        guard !ended else { return nil }
        leases.writers[poolID] = connection
        defer { leases.writers[poolID] = nil }
        return try body(connection)
    }

    var isOpen: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !ended
    }

    /// Marks the transaction over: later calls through this lease run on their own.
    func end() {
        lock.lock()
        ended = true
        lock.unlock()
    }

    func nestingGate(depth: Int) -> AsyncGate {
        lock.lock()
        defer { lock.unlock() }
        if let gate = gates[depth] { return gate }
        let gate = AsyncGate()
        gates[depth] = gate
        return gate
    }
}

/// A mutex for tasks: waiting suspends the task instead of blocking its thread.
final class AsyncGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let acquired = state.withLock { state -> Bool in
                if state.held {
                    state.waiters.append(continuation)
                    return false
                }
                state.held = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.held = false
                return nil
            }
            return state.waiters.removeFirst()  // stays held: ownership passes to the next waiter
        }
        next?.resume()
    }
}

/// Which async transactions the current task is inside.
///
/// The task-local list is inherited by child tasks (and by unstructured `Task {}`s, whose calls
/// join only while the transaction is open).
enum AsyncScope {
    @TaskLocal static var transactions: [TransactionLease] = []

    /// How many async transactions are open, in any task: while none is, synchronous calls skip
    /// the task-local lookup entirely.
    static let openCount = Atomic<Int>(0)

    /// The lease of the async transaction on pool `poolID` that the current thread or task is inside.
    static func lease(for poolID: ObjectIdentifier, _ leases: ThreadLeases) -> TransactionLease? {
        guard openCount.load(ordering: .relaxed) > 0 else { return nil }
        return transactions.last { $0.poolID == poolID }
    }
}

/// Set by a cancelled task for the job it is waiting on; long reads check it between rows.
final class CancellationFlag: Sendable {
    private let cancelled = Atomic<Bool>(false)
    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }
    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Throws `CancellationError` once the task has been cancelled.
    @inline(__always)
    func check() throws {
        if cancelled.load(ordering: .relaxed) { throw CancellationError() }
    }
}
