import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The lock of one record: its critical sections are a few loads and stores (values are
/// converted outside it), and a record may be shared by more threads than there are cores.
///
/// On Linux, `Synchronization.Mutex` is a priority-inheritance futex: once a thread has slept on
/// it, each unlock hands the lock to a sleeping thread, and nobody can take it until that thread
/// has been scheduled. With 8 threads writing one record on 2 cores every operation waited for
/// such a wake-up (93 µs an operation; 0.87 µs with 4 threads). This lock never hands over: a
/// waiting thread spins briefly, then yields its core, and the first thread to find it free
/// takes it (`record_sharing` in the benchmarks). Being plain atomics compiled into DicRecord, it
/// is also seen by ThreadSanitizer. Elsewhere (Apple platforms) `Mutex` is an unfair lock already.
@usableFromInline
struct RecordLock: ~Copyable, Sendable {
    #if os(Linux)
    @usableFromInline let held = Atomic<Bool>(false)

    @inlinable init() {}

    @inlinable
    func withLock<R, E: Error>(_ body: (inout Void) throws(E) -> R) throws(E) -> R {
        if !held.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged { lockContended() }
        defer { held.store(false, ordering: .releasing) }
        var nothing: Void = ()
        return try body(&nothing)
    }

    @usableFromInline
    func lockContended() {
        var attempts = 0
        while true {
            // Test before test-and-set: waiting threads read a shared line, they do not bounce it.
            if !held.load(ordering: .relaxed),
               held.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged {
                return
            }
            attempts += 1
            // A short spin for a holder on another core; then the holder may be off its core: give
            // it ours; past that (a CPU quota, a real-time thread), sleep a little between looks.
            if attempts > 10_000 {
                usleep(50)
            } else if attempts > 100 {
                sched_yield()
            }
        }
    }
    #else
    @usableFromInline let mutex = Mutex<Void>(())

    @inlinable init() {}

    @inlinable
    func withLock<R, E: Error>(_ body: (inout Void) throws(E) -> R) throws(E) -> R {
        try mutex.withLock(body)
    }
    #endif
}
