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
    private var writerWaiters = 0           // guarded by writerGate: threads waiting in acquireWriter
    private var writerWakePending = false   // guarded by writerGate: one is signalled and has not run yet
    private let readerGate = NSCondition()
    private var idleReaders: [Connection] = []  // guarded by readerGate
    private var openReaders = 0                  // guarded by readerGate
    private var allReaders: [Connection] = []    // guarded by readerGate
    private let closed = Atomic<Bool>(false)
    private var isClosed: Bool { closed.load(ordering: .acquiring) }
    /// Where this pool's async transactions run, one after another (see `WriterLane`).
    let asyncLane = WriterLane()

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
        let leases = ThreadLeases.current
        // This thread holds the writer (a transaction's body): it is the pool's writer itself.
        if let held = leases.writer(of: id) { return try body(held) }
        let writer = try requireWriter()
        // An async call trying its caller's thread: writes always move to a pool thread (SQLite's
        // busy handler may sleep while another process holds the file, and a cooperative thread
        // must not).
        if leases.mustNotWait { throw WouldBlock() }
        if let lease = AsyncScope.lease(for: id), let result = try lease.join({ _ in try holding(writer, leases, body) }) { return result }
        try refuseInsideOnOpen(leases)
        try acquireWriter()
        return try runTaken(writer, leases, body)
    }

    /// Runs `body` on `writer`, which this thread has just taken: installed as the thread's while
    /// it runs, then given back (a transaction left open by raw SQL is rolled back, and throws).
    @inline(__always)
    private func runTaken<T>(_ writer: Connection, _ leases: ThreadLeases, _ body: (Connection) throws -> T) throws -> T {
        leases.install(writer: writer, of: id)
        defer {
            leases.removeWriter(of: id)
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
    /// nothing the caller sees). Else `WouldBlock`. The read runs no user code and never
    /// suspends: the writer is held for one call on this thread.
    private func readOnWriterIfFree<T>(_ leases: ThreadLeases, _ body: (Connection) throws -> T) throws -> T {
        guard let writer else { throw WouldBlock() }
        writerGate.lock()
        guard !writerBusy, !isClosed else {
            writerGate.unlock()
            throw WouldBlock()
        }
        writerBusy = true
        writerGate.unlock()
        leases.mustNotWait = false
        do {
            return try runTaken(writer, leases) { writer in try writer.withoutBusyWait { try body(writer) } }
        } catch let error as DicRecordError where error.kind == .busy {
            throw WouldBlock()
        }
    }

    /// Runs `body` with `writer` installed as this thread's (an async transaction's turn).
    private func holding<T>(_ writer: Connection, _ leases: ThreadLeases, _ body: (Connection) throws -> T) throws -> T {
        leases.install(writer: writer, of: id)
        defer { leases.removeWriter(of: id) }
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
        if let writer = leases.writer(of: id) { return try body(writer) }
        if leases.mustNotWait {
            // An async call on its caller's thread: an idle reader or (with no readers) the writer,
            // free now, or the call moves to a pool thread.
            guard writer == nil || AsyncScope.lease(for: id) == nil else { throw WouldBlock() }
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
        let writer = try requireWriter()
        try acquireWriter()
        return writer
    }

    /// The writer; a readonly pool has none, and refuses.
    private func requireWriter() throws -> Connection {
        guard let writer else {
            throw DicRecordError(.readonly, "config '\(configName)' is readonly: writes are refused", configName: configName)
        }
        return writer
    }

    /// The writer if it is free now (an async transaction on `asyncLane`, which must not wait);
    /// nil when another holds it, or when threads wait for it: the line, which takes the writer
    /// again as soon as one of its transactions lets it go, would otherwise leave a waiter to
    /// find it taken at every wake-up until its busy timeout ran out.
    func leaseWriterIfFree() throws -> Connection? {
        let writer = try requireWriter()
        writerGate.lock()
        defer { writerGate.unlock() }
        if isClosed { throw closedError() }
        if writerBusy || writerWaiters > 0 { return nil }
        writerBusy = true
        return writer
    }

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

    /// Runs `body` on the writer only if no one holds it now, or this thread does (nil otherwise,
    /// and for a readonly pool): for work that may as well wait for the next turn (the live
    /// queries' poll), or that a caller inside its own transaction asks for (a live query's start).
    func writeIfFree<T>(_ body: (Connection) throws -> T) throws -> T? {
        guard let writer else { return nil }
        if isWriterHeldByCurrentThread { return try body(writer) }
        writerGate.lock()
        guard !writerBusy, !isClosed else {
            writerGate.unlock()
            return nil
        }
        writerBusy = true
        writerGate.unlock()
        defer { releaseWriter() }
        return try body(writer)
    }

    /// True when the current thread holds this pool's writer.
    var isWriterHeldByCurrentThread: Bool { ThreadLeases.current.writer(of: id) != nil }

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
        while writerBusy || isClosed {
            if isClosed { throw closedError() }
            writerWaiters += 1
            let signalled = WriterLane.whileBlocked { writerGate.wait(until: deadline) }
            writerWaiters -= 1
            writerWakePending = false   // (also when the wait ran out: it may have taken the signal)
            if !signalled && writerBusy {
                throw DicRecordError(.busy, "database is locked: waited \(busyTimeout) s for the writer of config '\(configName)', held by another thread",
                                     configName: configName)
            }
        }
        writerBusy = true
    }

    /// Hands the writer back; once the context has stopped, closes it (never while in use).
    private func releaseWriter() {
        writerGate.lock()
        writerBusy = false
        if isClosed {
            writer?.close()
            writerGate.broadcast()
            writerGate.unlock()
            return
        }
        // One waiter is woken at a time: until a waiter has come back from its wait, the thread
        // that let go may well have taken the writer again, and a second waiter woken now would
        // only wait again. Signalled once the lock is let go: a waiter woken under it would only
        // block again on the lock.
        let wake = writerWaiters > 0 && !writerWakePending
        if wake { writerWakePending = true }
        writerGate.unlock()
        // Stopped meanwhile: every waiter is to learn it (one signal could go to `close()`'s own wait).
        if wake { isClosed ? writerGate.broadcast() : writerGate.signal() }
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
            if !WriterLane.whileBlocked({ readerGate.wait(until: deadline) }) && idleReaders.isEmpty {
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
            readerGate.unlock()
            return
        }
        idleReaders.append(reader)
        readerGate.unlock()
        // Once the lock is let go, as `releaseWriter`'s (and to every waiter once stopped).
        isClosed ? readerGate.broadcast() : readerGate.signal()
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
        let holdsWriter = leases.writer(of: id) != nil || AsyncScope.lease(for: id) != nil
        while writerBusy, !holdsWriter, writerGate.wait(until: deadline) {}
        if writerBusy {
            writer?.interrupt()  // closed by releaseWriter
        } else {
            writer?.close()
        }
        writerGate.broadcast()
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
