import Foundation
import Synchronization

/// The writer connection of one async transaction, shared by every call its task (and the
/// task's children) makes on that config while the transaction is open.
///
/// - Calls take the connection one at a time; a call waits for another task's call at most the
///   busy timeout, then throws `.busy` (two tasks that wait for each other across two configs
///   get an error, not a hang).
/// - While a nested async transaction has a savepoint open, only calls from inside it (its task
///   and that task's children) use the connection; the others wait for it to end, so their work
///   is never rolled back with someone else's savepoint.
/// - Nested async transactions at one depth take turns on `nestingGate(depth:)`.
/// - It serves any engine: the pool installs the connection as its thread's while a call runs.
final class TransactionLease: @unchecked Sendable {
    let poolID: ObjectIdentifier
    let connection: any EngineConnection
    let configName: String
    private let busyTimeout: Double
    private let condition = NSCondition()
    private var ended = false                    // guarded by condition
    private var inUse = false                    // guarded by condition
    private var openNested: [NestingToken] = []  // guarded by condition; innermost last
    private var gates: [Int: AsyncGate] = [:]    // guarded by condition
    private var nestedFailure: (any Error)?      // guarded by condition

    /// Where the transaction's jobs run: its pool's `WriterLane`, or `PoolExecutor`. Nested
    /// transactions run there too (no hop to another).
    let executor: any TaskExecutor

    init(poolID: ObjectIdentifier, connection: any EngineConnection, configName: String, busyTimeout: Double,
         executor: any TaskExecutor) {
        self.poolID = poolID
        self.connection = connection
        self.configName = configName
        self.busyTimeout = busyTimeout
        self.executor = executor
    }

    /// Runs `body` with the connection once it is this call's turn (the pool installs it as its
    /// thread's connection inside `body`), or returns nil when the transaction has already ended
    /// (a task that outlived it is no part of it).
    func join<T>(_ body: (any EngineConnection) throws -> T) throws -> T? {
        var chain: [NestingToken]?  // the task's nesting, read only while a nested transaction is open
        condition.lock()
        if !ended && (inUse || !admits(&chain)) {
            let deadline = Date(timeIntervalSinceNow: busyTimeout)
            while !ended && (inUse || !admits(&chain)) {
                if !WriterLane.whileBlocked({ condition.wait(until: deadline) }) && !ended && (inUse || !admits(&chain)) {
                    let nested = !openNested.isEmpty && !admits(&chain)
                    condition.unlock()
                    throw DicRecordError(.busy,
                        "waited \(busyTimeout) s for the transaction's connection on config '\(configName)': "
                            + (nested ? "a concurrent task of the same transaction kept a nested transaction open"
                                      : "a concurrent task of the same transaction kept using it"),
                        configName: configName)
                }
            }
        }
        if ended {
            condition.unlock()
            return nil
        }
        inUse = true
        condition.unlock()
        defer {
            condition.lock()
            inUse = false
            condition.broadcast()
            condition.unlock()
        }
        return try body(connection)
    }

    /// Whether a call from the current task may use the connection now: always while no nested
    /// transaction is open; else only from inside the innermost one (the task's nesting, `chain`,
    /// is read from its task-local on first need).
    private func admits(_ chain: inout [NestingToken]?) -> Bool {
        guard let innermost = openNested.last else { return true }
        let nesting = chain ?? AsyncScope.nesting
        chain = nesting
        return nesting.contains { $0 === innermost }
    }

    /// A nested async transaction opened its savepoint: from now on only its own calls get in.
    func beginNested(_ token: NestingToken) {
        condition.lock()
        openNested.append(token)
        condition.unlock()
    }

    /// The nested transaction `token` ended (released or rolled back): the others may go on.
    func endNested(_ token: NestingToken) {
        condition.lock()
        openNested.removeAll { $0 === token }
        condition.broadcast()
        condition.unlock()
    }

    /// A nested transaction whose RELEASE or ROLLBACK TO could not run (its connection kept past
    /// the busy timeout): its savepoint is still open, so the transaction must not commit.
    func nestedCouldNotEnd(_ error: any Error) {
        condition.lock()
        if nestedFailure == nil { nestedFailure = error }
        condition.unlock()
    }

    /// The first error of a nested transaction that could not end, if any.
    var failureOfNested: (any Error)? {
        condition.lock()
        defer { condition.unlock() }
        return nestedFailure
    }

    var isOpen: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !ended
    }

    /// Marks the transaction over: later calls through this lease run on their own. Returns once
    /// no call is using the connection (a task that outlived the transaction may be in one), so
    /// that the connection goes back to its pool unused.
    func end() {
        condition.lock()
        ended = true
        condition.broadcast()
        while inUse { WriterLane.whileBlocked { condition.wait() } }
        condition.unlock()
    }

    func nestingGate(depth: Int) -> AsyncGate {
        condition.lock()
        defer { condition.unlock() }
        if let gate = gates[depth] { return gate }
        let gate = AsyncGate()
        gates[depth] = gate
        return gate
    }
}

/// The identity of one nested async transaction, for `TransactionLease`'s admission rule.
final class NestingToken: Sendable {}

/// A mutex for tasks: waiting suspends the task instead of blocking its thread.
final class AsyncGate: Sendable {
    private struct State {
        var held = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Guarded(State())

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
package enum AsyncScope {
    @TaskLocal static var transactions: [TransactionLease] = []

    /// The nested async transactions the current task is inside, outermost first.
    @TaskLocal static var nesting: [NestingToken] = []

    /// How many async transactions are open, in any task: while none is, synchronous calls skip
    /// the task-local lookup entirely.
    static let openCount = Atomic<Int>(0)

    /// The lease of the async transaction on pool `poolID` that the current task is inside.
    @inline(__always)
    static func lease(for poolID: ObjectIdentifier) -> TransactionLease? {
        guard openCount.load(ordering: .relaxed) > 0 else { return nil }
        return transactions.last { $0.poolID == poolID }
    }

    /// Whether the current task is inside an async transaction on pool `poolID`.
    package static func isInTransaction(poolID: ObjectIdentifier) -> Bool {
        lease(for: poolID) != nil
    }

    /// For another engine's pool (`EnginePool.write`): runs `body` on the connection of the async
    /// transaction on pool `poolID` the current task is inside, when it is; nil otherwise.
    package static func join<T>(poolID: ObjectIdentifier, _ body: (any EngineConnection) throws -> T) throws -> T? {
        guard let lease = lease(for: poolID) else { return nil }
        return try lease.join(body)
    }
}

/// What a long read checks between rows while it runs a call of the async API: whether the task
/// running the read has been cancelled. The call runs synchronously inside the job of the task
/// that made it (see `BlockingPool.performForTask`), so that task's status is read directly: no
/// cancellation handler to install per call. A task the call's own code starts and runs right
/// there (`Task.immediate` in an `each` callback) is another task: a read in it checks that task.
///
/// (Keeping the calling task's `UnsafeCurrentTask` instead was tried: the type's layout is
/// resilient, so every row's check went through generic value witnesses.)
struct TaskCancellationCheck {
    /// Rows read between two looks at the task's status in a loop that does little per row (a
    /// look costs about 80 instructions; a row of `find`, a few hundred).
    static let rowsBetweenChecks = 32

    private var rowsUntilCheck = 0

    /// For a loop over rows that does little per row (`find`, `query`, a dao's `find`): looks at
    /// the task's status at the first row and every `rowsBetweenChecks` rows after it, and throws
    /// `CancellationError` once the task has been cancelled.
    @inline(__always)
    mutating func check() throws {
        if rowsUntilCheck == 0 {
            rowsUntilCheck = Self.rowsBetweenChecks
            try checkNow()
        }
        rowsUntilCheck &-= 1
    }

    /// Throws `CancellationError` once the task running on this thread has been cancelled (for a
    /// loop that runs the caller's code each row: `each`).
    @inline(__always)
    func checkNow() throws {
        if Task.isCancelled { throw CancellationError() }
    }
}
