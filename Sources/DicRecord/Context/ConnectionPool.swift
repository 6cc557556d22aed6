import Foundation
import Synchronization

/// The connections of one started context: one writer, and reader connections that let reads
/// run beside a write (WAL files only).
///
/// The rule, per call:
/// - a thread that holds this pool's writer (inside `tx`, `transaction`, `batch`, a write, or a
///   callback nested in one) runs every call, read or write, on that writer: it joins;
/// - otherwise reads take an idle reader; one nested in an `each` callback that finds none
///   free reads on the reader the `each` holds, rather than wait for itself;
/// - a call from a task inside an async transaction on this pool (or from its child tasks) runs on
///   that transaction's connection, one call at a time;
/// - otherwise writes wait for the writer (up to the busy timeout, then a `.busy` error) and
///   reads take an idle reader, never waiting for a writer.
final class ConnectionPool: @unchecked Sendable {
    let configName: String
    private let writer: Connection?
    let busyTimeout: Double
    private let makeReader: (() throws -> Connection)?
    private let maxReaders: Int

    private let writerGate = NSCondition()
    private var writerBusy = false          // guarded by writerGate
    /// Async transactions waiting for the writer without a thread, first come first served.
    private var writerTasks: [WriterWaiter] = []   // guarded by writerGate
    /// Threads waiting for the writer, and whether the writer last went to a task: when both
    /// wait, they take turns.
    private var writerThreads = 0                  // guarded by writerGate
    private var lastWentToTask = false             // guarded by writerGate
    private var watchdogArmed = false              // guarded by writerGate
    /// Whether the writer is held by an async transaction on a cooperative thread.
    private var writerHeldByTask = false           // guarded by writerGate
    private let readerGate = NSCondition()
    private var idleReaders: [Connection] = []  // guarded by readerGate
    private var openReaders = 0                  // guarded by readerGate
    private var allReaders: [Connection] = []    // guarded by readerGate
    private let closed = Atomic<Bool>(false)
    private var isClosed: Bool { closed.load(ordering: .acquiring) }

    init(configName: String, writer: Connection?, busyTimeout: Double, maxReaders: Int,
         firstReader: Connection?, makeReader: (() throws -> Connection)?) {
        self.configName = configName
        self.writer = writer
        self.busyTimeout = busyTimeout
        self.maxReaders = makeReader == nil ? 0 : max(1, maxReaders)
        self.makeReader = makeReader
        if let firstReader {
            idleReaders = [firstReader]
            allReaders = [firstReader]
            openReaders = 1
        }
    }

    private var id: ObjectIdentifier { ObjectIdentifier(self) }

    /// Runs `body` on the writer, joining the writer this thread already holds.
    func write<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let writer else {
            throw DicRecordError(.readonly, "config '\(configName)' is readonly: writes are refused", configName: configName)
        }
        let leases = ThreadLeases.current
        if leases.writers[id] != nil { return try body(writer) }
        if leases.mustNotWait {
            // An async call trying its caller's thread: inside the task's async transaction it runs
            // on the transaction's connection when that is free at once. Other writes move to a
            // pool thread (SQLite's busy handler may sleep while another process holds the file,
            // and a cooperative thread must not).
            if let lease = AsyncScope.lease(for: id),
               let result = try lease.join(wait: false, { _ in try holdingNow(writer, leases, body) }) {
                return result
            }
            throw WouldBlock()
        }
        if let lease = AsyncScope.lease(for: id), let result = try lease.join({ _ in try holding(writer, leases, body) }) { return result }
        try refuseInsideOnOpen(leases)
        try acquireWriter()
        leases.writers[id] = writer
        defer {
            leases.writers[id] = nil
            releaseWriter()
        }
        let result: T
        do {
            result = try body(writer)
        } catch {
            _ = try? endStrayTransaction(writer)
            throw error
        }
        try endStrayTransaction(writer)
        return result
    }

    /// An async read on its caller's thread, in a pool with no readers (reads run on the writer):
    /// on the writer if it is free now, with SQLite's busy wait off (a lock another process holds
    /// makes the read move to a pool thread, where it waits: a read that got SQLITE_BUSY ran
    /// nothing the caller sees). Else `WouldBlock`.
    private func readOnWriterIfFree<T>(_ leases: ThreadLeases, _ body: (Connection) throws -> T) throws -> T {
        guard let writer else { throw WouldBlock() }
        writerGate.lock()
        guard !writerBusy, !isClosed else {
            writerGate.unlock()
            throw WouldBlock()
        }
        writerBusy = true
        writerHeldByTask = false  // held for this call only, with no suspension
        writerGate.unlock()
        leases.mustNotWait = false
        leases.writers[id] = writer
        defer {
            leases.writers[id] = nil
            releaseWriter()
        }
        let result: T
        do {
            result = try writer.withoutBusyWait { try body(writer) }
        } catch let error as DicRecordError where error.kind == .busy {
            _ = try? endStrayTransaction(writer)
            throw WouldBlock()
        } catch {
            _ = try? endStrayTransaction(writer)
            throw error
        }
        try endStrayTransaction(writer)
        return result
    }

    /// `holding`, for an async call that got its connection without waiting: what it calls next may wait.
    private func holdingNow<T>(_ writer: Connection, _ leases: ThreadLeases, _ body: (Connection) throws -> T) throws -> T {
        leases.mustNotWait = false
        return try holding(writer, leases, body)
    }

    /// Runs `body` with `writer` installed as this thread's (an async transaction's turn).
    private func holding<T>(_ writer: Connection, _ leases: ThreadLeases, _ body: (Connection) throws -> T) throws -> T {
        leases.writers[id] = writer
        defer { leases.writers[id] = nil }
        return try body(writer)
    }

    /// A transaction begun by raw SQL (`update("BEGIN")`) and left open would be joined by the
    /// next caller, from any thread: it is rolled back, and the call that left it throws.
    private func endStrayTransaction(_ writer: Connection) throws {
        guard writer.transactionDepth == 0, writer.isInTransaction else { return }
        try? writer.runRollback("ROLLBACK")
        throw DicRecordError(.misuse,
            "a transaction begun by raw SQL (BEGIN or SAVEPOINT) was left open on config '\(configName)' and has been rolled back; use tx or transaction",
            configName: configName)
    }

    /// `read`, with every read nested in `body` on the same connection: what `body` reads in one
    /// transaction is one snapshot (paginate's count and page).
    func readSnapshot<T>(_ body: (Connection) throws -> T) throws -> T {
        try read { connection in
            let leases = ThreadLeases.current
            guard leases.readers[id] === connection, leases.snapshotReaders.insert(id).inserted else { return try body(connection) }
            defer { leases.snapshotReaders.remove(id) }
            return try body(connection)
        }
    }

    /// Runs `body` on a connection fit for reading (see the type's rule).
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let leases = ThreadLeases.current
        if let writer = leases.writers[id] { return try body(writer) }
        if leases.mustNotWait {
            // An async call on its caller's thread: its async transaction's connection or an idle
            // reader, free now, or the call moves to a pool thread.
            if let writer, let lease = AsyncScope.lease(for: id) {
                if let result = try lease.join(wait: false, { _ in try holdingNow(writer, leases, body) }) { return result }
                throw WouldBlock()
            }
            guard maxReaders > 0 else { return try readOnWriterIfFree(leases, body) }
            guard let reader = try acquireIdleReader(for: leases) else { throw WouldBlock() }
            leases.mustNotWait = false
            leases.readers[id] = reader
            defer {
                leases.readers[id] = nil
                releaseReader(reader)
            }
            return try body(reader)
        }
        // A lease on this pool holds its writer (a readonly pool has none, and so no lease).
        if let writer, let lease = AsyncScope.lease(for: id), let result = try lease.join({ _ in try holding(writer, leases, body) }) {
            return result
        }
        try refuseInsideOnOpen(leases)
        guard maxReaders > 0 else { return try write(body) }
        let held = leases.readers[id]
        if let held, leases.snapshotReaders.contains(id) { return try body(held) }
        // Nested in an `each` callback: a free reader gives a fresh snapshot that sees what the
        // callback committed; when none is free, the held one serves rather than waiting on itself.
        guard let reader = try acquireReader(wait: held == nil, for: leases) else {
            return try body(held!)
        }
        leases.readers[id] = reader
        defer {
            leases.readers[id] = held
            releaseReader(reader)
        }
        return try body(reader)
    }

    /// For an async transaction: waits for the writer (as `write` does) and hands it over, bound to
    /// no thread. `returnWriter()` gives it back.
    func leaseWriter() throws -> Connection {
        guard let writer else {
            throw DicRecordError(.readonly, "config '\(configName)' is readonly: writes are refused", configName: configName)
        }
        try acquireWriter()
        return writer
    }

    /// For an async transaction on a cooperative thread, which must not wait: the writer when it
    /// is free at once, else nil (and nothing changed).
    func tryLeaseWriterForTask() throws -> Connection? {
        guard let writer else {
            throw DicRecordError(.readonly, "config '\(configName)' is readonly: writes are refused", configName: configName)
        }
        writerGate.lock()
        defer { writerGate.unlock() }
        if isClosed { throw closedError() }
        guard !writerBusy else { return nil }
        writerBusy = true
        writerHeldByTask = true
        return writer
    }

    /// For an async transaction on pool threads: the writer, waited for (as `leaseWriter` waits,
    /// up to the busy timeout) with the task suspended rather than a thread blocked.
    /// `returnWriter()` gives it back.
    func leaseWriterSuspending() async throws -> Connection {
        guard let writer else {
            throw DicRecordError(.readonly, "config '\(configName)' is readonly: writes are refused", configName: configName)
        }
        let waiter = WriterWaiter()
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                writerGate.lock()
                if isClosed {
                    writerGate.unlock()
                    continuation.resume(throwing: closedError())
                } else if !writerBusy {
                    writerBusy = true
                    writerHeldByTask = false
                    writerGate.unlock()
                    continuation.resume()
                } else if waiter.isCancelled {
                    writerGate.unlock()
                    continuation.resume(throwing: CancellationError())
                } else {
                    // It gives up after the busy timeout, as a thread waiting for the writer does.
                    waiter.continuation = continuation
                    waiter.deadline = .now() + busyTimeout
                    writerTasks.append(waiter)
                    let arm = !watchdogArmed
                    watchdogArmed = true
                    writerGate.unlock()
                    if arm { armWatchdog(at: waiter.deadline) }
                }
            }
        } onCancel: {
            dropWaiter(waiter, with: CancellationError())
        }
        // Every resume runs under `writerGate`: taking it once here orders what the resuming
        // thread did in `resume` before what this task does next, for ThreadSanitizer too (a
        // resume can land before the task has suspended, and the runtime's handshake is invisible to it).
        orderAfterResume()
        return writer
    }

    private func orderAfterResume() {
        writerGate.lock()
        writerGate.unlock()
    }

    /// How many async transactions wait for the writer now (for tests).
    var tasksWaitingForWriter: Int {
        writerGate.lock()
        defer { writerGate.unlock() }
        return writerTasks.count
    }

    /// Whether async transactions may hold the writer on cooperative threads: not once a
    /// synchronous write, on a thread that runs a task (a cooperative one), has had to wait for a
    /// transaction of a task: enough such waits could block every cooperative thread while that
    /// transaction needs one to go on. From then on async transactions run on pool threads.
    var lendsWriterToTasks: Bool { !blockingWritesInTasks.load(ordering: .relaxed) }

    private let blockingWritesInTasks = Atomic<Bool>(false)

    /// A cancelled task: takes `waiter` out of the queue, when it is still there, and resumes it
    /// with `CancellationError`.
    private func dropWaiter(_ waiter: WriterWaiter, with error: CancellationError) {
        writerGate.lock()
        guard let index = writerTasks.firstIndex(where: { $0 === waiter }) else {
            // Not queued yet (the wait has not begun: it will not) or already given the writer.
            waiter.isCancelled = true
            writerGate.unlock()
            return
        }
        writerTasks.remove(at: index)
        waiter.resume(throwing: error)
        writerGate.unlock()
    }

    /// One timer for all the tasks waiting for the writer, at the earliest deadline among them
    /// (a timer per wait would cost more than the wait).
    private func armWatchdog(at deadline: DispatchTime) {
        DispatchQueue.global().asyncAfter(deadline: deadline) { [weak self] in self?.dropOverdueWaiters() }
    }

    private func dropOverdueWaiters() {
        writerGate.lock()
        let now = DispatchTime.now()
        let overdue = writerTasks.filter { $0.deadline <= now }
        writerTasks.removeAll { $0.deadline <= now }
        let next = writerTasks.map(\.deadline).min()
        watchdogArmed = next != nil
        for waiter in overdue {
            waiter.resume(throwing: DicRecordError(.busy,
                "database is locked: waited \(busyTimeout) s for the writer of config '\(configName)', held by another task or thread",
                configName: configName))
        }
        writerGate.unlock()
        if let next { armWatchdog(at: next) }
    }

    /// Whether reads run beside the writer (a WAL file): then a COMMIT never waits for a reader,
    /// of this process or another.
    var readsBesideWriter: Bool { maxReaders > 0 }

    func returnWriter() {
        releaseWriter()
    }

    /// Runs `open` (which calls the context's onOpen hook) marked as opening a connection of this
    /// pool, so that a call the hook makes on this config throws instead of waiting for itself.
    private func opening(_ open: () throws -> Connection) throws -> Connection {
        let leases = ThreadLeases.current
        leases.opening.insert(id)
        defer { leases.opening.remove(id) }
        return try open()
    }

    private func refuseInsideOnOpen(_ leases: ThreadLeases) throws {
        guard !leases.opening.isEmpty, leases.opening.contains(id) else { return }
        throw DicRecordError(.misuse, "a call on config '\(configName)' inside its onOpen hook: use the connection the hook is given",
                             configName: configName)
    }

    /// Runs `body` on the writer only if no one holds it now (nil otherwise, and for a readonly
    /// pool): for work that may as well wait for the next turn (the live queries' poll).
    func writeIfFree<T>(_ body: (Connection) throws -> T) throws -> T? {
        guard let writer else { return nil }
        writerGate.lock()
        guard !writerBusy, !isClosed else {
            writerGate.unlock()
            return nil
        }
        writerBusy = true
        writerHeldByTask = false
        writerGate.unlock()
        defer { releaseWriter() }
        return try body(writer)
    }

    /// True when the current thread holds this pool's writer.
    var isWriterHeldByCurrentThread: Bool { ThreadLeases.current.writers[id] != nil }

    /// An idle reader, if one is there now (none is opened: that runs the onOpen hook).
    private func acquireIdleReader(for leases: ThreadLeases) throws -> Connection? {
        readerGate.lock()
        defer { readerGate.unlock() }
        if isClosed { throw closedError() }
        guard let reader = idleReaders.popLast() else { return nil }
        reader.heldBy = ObjectIdentifier(leases)
        return reader
    }

    private func acquireWriter() throws {
        writerGate.lock()
        defer { writerGate.unlock() }
        let deadline = Date(timeIntervalSinceNow: busyTimeout)
        writerThreads += 1
        defer { writerThreads -= 1 }
        if writerBusy, writerHeldByTask, !blockingWritesInTasks.load(ordering: .relaxed),
           !ThreadLeases.current.isPoolThread, withUnsafeCurrentTask(body: { $0 != nil }) {
            blockingWritesInTasks.store(true, ordering: .relaxed)
        }
        while writerBusy || isClosed {
            if isClosed { throw closedError() }
            if !writerGate.wait(until: deadline) && writerBusy {
                throw DicRecordError(.busy, "database is locked: waited \(busyTimeout) s for the writer of config '\(configName)', held by another thread",
                                     configName: configName)
            }
        }
        writerBusy = true
        writerHeldByTask = false
        lastWentToTask = false
    }

    /// Hands the writer back; once the context has stopped, closes it (never while in use). A
    /// task waiting for it gets it directly (a waiting thread, every other turn).
    private func releaseWriter() {
        writerGate.lock()
        if isClosed {
            writerBusy = false
            writer?.close()
            writerGate.broadcast()
            for waiter in writerTasks { waiter.resume(throwing: closedError()) }
            writerTasks = []
            writerGate.unlock()
            return
        }
        if !writerTasks.isEmpty, writerThreads == 0 || !lastWentToTask {
            let next = writerTasks.removeFirst()
            lastWentToTask = true
            writerHeldByTask = false
            // The writer stays busy: it is the task's now.
            next.continuation?.resume()
            writerGate.unlock()
            return
        }
        writerBusy = false
        writerGate.signal()
        writerGate.unlock()
    }

    private func acquireReader(wait: Bool, for leases: ThreadLeases) throws -> Connection? {
        readerGate.lock()
        defer { readerGate.unlock() }
        let deadline = Date(timeIntervalSinceNow: busyTimeout)
        while true {
            if isClosed { throw closedError() }
            if let reader = idleReaders.popLast() {
                reader.heldBy = ObjectIdentifier(leases)
                return reader
            }
            if openReaders < maxReaders, let makeReader {
                // The slot is taken under the lock; the opening (and the user's onOpen hook) runs
                // outside it.
                openReaders += 1
                readerGate.unlock()
                let opened = Result { try opening(makeReader) }
                readerGate.lock()
                switch opened {
                case .success(let reader):
                    if isClosed {  // stopped while it opened: never handed out, never leaked
                        reader.close()
                        throw closedError()
                    }
                    allReaders.append(reader)
                    reader.heldBy = ObjectIdentifier(leases)
                    return reader
                case .failure(let error):
                    openReaders -= 1
                    readerGate.signal()
                    throw error
                }
            }
            if !wait { return nil }
            if !readerGate.wait(until: deadline) && idleReaders.isEmpty {
                throw DicRecordError(.busy, "all \(maxReaders) readers of config '\(configName)' stayed busy for \(busyTimeout) s",
                                     configName: configName)
            }
        }
    }

    /// Hands a reader back; once the context has stopped, closes it (never while in use).
    private func releaseReader(_ reader: Connection) {
        readerGate.lock()
        if isClosed {
            reader.close()
            allReaders.removeAll { $0 === reader }
            readerGate.broadcast()
        } else {
            idleReaders.append(reader)
            readerGate.signal()
        }
        readerGate.unlock()
    }

    /// Stops the pool: new calls throw `.notStarted` at once. Waits, at most the busy timeout in
    /// all, for the calls in flight on other threads to hand their connections back, and closes
    /// every idle connection. A connection still in use after that is interrupted (its running
    /// statement fails, and its later ones but a rollback throw the stopped error) and closed by
    /// the call that holds it, when it hands it back: a connection is never closed under a call.
    /// The connections the calling thread holds itself (it stops from inside `tx`, an async
    /// transaction or an `each` callback) are not waited for.
    func close() {
        let leases = ThreadLeases.current
        let deadline = Date(timeIntervalSinceNow: busyTimeout)
        closed.store(true, ordering: .releasing)

        writerGate.lock()
        let holdsWriter = leases.writers[id] != nil || AsyncScope.lease(for: id) != nil
        while writerBusy, !holdsWriter, writerGate.wait(until: deadline) {}
        if writerBusy {
            writer?.interrupt()  // closed by releaseWriter
        } else {
            writer?.close()
        }
        writerGate.broadcast()
        for waiter in writerTasks { waiter.resume(throwing: closedError()) }
        writerTasks = []
        writerGate.unlock()

        readerGate.lock()
        let me = ObjectIdentifier(leases)
        func inUseElsewhere() -> Bool {
            allReaders.contains { reader in reader.heldBy != me && !idleReaders.contains { $0 === reader } }
        }
        while inUseElsewhere(), readerGate.wait(until: deadline) {}
        for reader in idleReaders { reader.close() }
        allReaders.removeAll { reader in idleReaders.contains { $0 === reader } }
        idleReaders = []
        for reader in allReaders { reader.interrupt() }  // in use: closed by releaseReader
        openReaders = maxReaders  // no new reader opens
        readerGate.broadcast()
        readerGate.unlock()
    }

    private func closedError() -> DicRecordError {
        DicRecordError(.notStarted, "config '\(configName)' was stopped", configName: configName)
    }
}

/// An async transaction waiting for a pool's writer. Its fields are guarded by the pool's
/// `writerGate` until it leaves the queue; then only the code that took it out uses them.
private final class WriterWaiter: @unchecked Sendable {
    var continuation: UnsafeContinuation<Void, any Error>?
    var deadline = DispatchTime.now()
    /// Cancelled before its wait began: it does not queue.
    var isCancelled = false

    func resume(throwing error: any Error) {
        continuation?.resume(throwing: error)
    }
}
