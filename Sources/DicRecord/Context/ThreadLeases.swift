import Foundation

/// The connections the current thread holds, per pool. This is how a call made inside a
/// `tx` closure, an `each` callback or any nested library call finds the connection its caller
/// already holds and joins it instead of waiting for it (which would deadlock).
final class ThreadLeases {
    // One thread's own object: no other thread ever touches it, so the runtime's exclusivity
    // checks (which cost as much as the accesses) are off.
    @exclusivity(unchecked) private(set) var writers: [ObjectIdentifier: Connection] = [:]
    /// The writer installed last and its pool's id, while it is installed: a save asks for its
    /// writer on every call, and this answers without hashing or copying the table.
    @exclusivity(unchecked) private var lastWriterPool: ObjectIdentifier?
    @exclusivity(unchecked) private var lastWriter: Connection?
    @exclusivity(unchecked) var readers: [ObjectIdentifier: Connection] = [:]
    /// While this thread runs a call of the async API: the check of its task's cancellation.
    @exclusivity(unchecked) var cancellation: TaskCancellationCheck?
    /// True on the threads of `BlockingPool`, where the async API runs its calls inline.
    @exclusivity(unchecked) var isPoolThread = false
    /// While an async call runs on the caller's own thread (`BlockingPool.performForTask`): its
    /// first connection must be free at once (else `WouldBlock`, and the call moves to a pool
    /// thread); once it has one, the flag is cleared and nested calls behave as anywhere.
    @exclusivity(unchecked) var mustNotWait = false
    /// The pools whose reader this thread holds for one snapshot (`ConnectionPool.readSnapshot`):
    /// reads nested in it use that reader, never a fresh one.
    @exclusivity(unchecked) var snapshotReaders: Set<ObjectIdentifier> = []
    /// The pools this thread is opening a connection for (running the onOpen hook).
    @exclusivity(unchecked) var opening: Set<ObjectIdentifier> = []
    /// While this thread runs a job of a `WriterLane`: the lane and the job's number (see
    /// `WriterLane.whileBlocked`).
    @exclusivity(unchecked) var laneJob: (lane: WriterLane, number: UInt64)?

    /// The writer this thread holds of pool `id`, if any. A thread holds none or one writer
    /// nearly always: those cases are answered without hashing (a save asks on every call).
    @inline(__always)
    func writer(of id: ObjectIdentifier) -> Connection? {
        if lastWriterPool == id { return lastWriter }
        return writers.isEmpty ? nil : writers[id]
    }

    /// Installs `writer` as the one this thread holds of pool `id`.
    func install(writer: Connection, of id: ObjectIdentifier) {
        writers[id] = writer
        lastWriterPool = id
        lastWriter = writer
    }

    /// Removes the writer this thread holds of pool `id`.
    func removeWriter(of id: ObjectIdentifier) {
        writers[id] = nil
        if lastWriterPool == id {
            lastWriterPool = nil
            lastWriter = nil
        }
    }

    private static let slot = ThreadSlot<ThreadLeases>()

    /// This thread's leases, created on first use and released when the thread ends.
    static var current: ThreadLeases {
        let box = slot.current
        if let leases = box.value { return leases }
        let leases = ThreadLeases()
        box.value = leases
        return leases
    }
}
