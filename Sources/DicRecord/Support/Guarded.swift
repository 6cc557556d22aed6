import Synchronization
#if DICRECORD_TSAN
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#endif

#if DICRECORD_TSAN
/// The ThreadSanitizer build's lock (`swift test --sanitize=thread -Xswiftc -DDICRECORD_TSAN`):
/// a pthread mutex, which TSan sees. On Linux `Synchronization.Mutex` is a futex in the prebuilt
/// standard library, invisible to TSan: every value it guards would be reported as a race.
package struct Guarded<Value>: ~Copyable, @unchecked Sendable {   // the value is only touched under `box.mutex`
    private final class Box: @unchecked Sendable {   // the same
        let mutex: UnsafeMutablePointer<pthread_mutex_t>
        var value: Value

        init(_ value: Value) {
            self.value = value
            mutex = .allocate(capacity: 1)
            mutex.initialize(to: pthread_mutex_t())
            // Error-checking: a thread taking it again fails loudly (below), as Mutex traps.
            var attributes = pthread_mutexattr_t()
            pthread_mutexattr_init(&attributes)
            pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
            pthread_mutex_init(mutex, &attributes)
            pthread_mutexattr_destroy(&attributes)
        }

        deinit {
            pthread_mutex_destroy(mutex)
            mutex.deallocate()
        }
    }

    private let box: Box

    package init(_ value: sending Value) {
        box = Box(value)
    }

    package borrowing func withLock<Result, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        precondition(pthread_mutex_lock(box.mutex) == 0, "Guarded: a lock taken again by the thread that holds it")
        defer { pthread_mutex_unlock(box.mutex) }
        return try body(&box.value)
    }
}
#else
/// A value guarded by a lock: `Synchronization.Mutex` (see the `DICRECORD_TSAN` form for the
/// ThreadSanitizer build).
package typealias Guarded<Value> = Mutex<Value>
#endif
