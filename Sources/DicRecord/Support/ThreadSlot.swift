// Support: small tools every layer may use; they know nothing of SQL, records or connections.
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value each thread keeps for itself (one pthread key per slot). Each layer that needs
/// per-thread state declares its own slot next to the code that uses it, so no shared object
/// holds every layer's state.
package final class ThreadSlot<Value>: @unchecked Sendable {   // the key is set once; each box is one thread's
    /// One thread's value. Only its own thread ever touches a box (it is reached through the
    /// thread's pthread key), so the runtime's exclusivity checks, which cost as much as the
    /// accesses, are off. `ThreadSlotTests` pins that two threads never see each other's box.
    package final class Box {
        @exclusivity(unchecked) package var value: Value?
    }

    private let key: pthread_key_t

    package init() {
        var key = pthread_key_t()
        #if canImport(Darwin)
        let created = pthread_key_create(&key) { Unmanaged<AnyObject>.fromOpaque($0).release() }
        #else
        let created = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        #endif
        // Slots are a handful of statics; running out of keys (PTHREAD_KEYS_MAX ≥ 128) is a library bug.
        precondition(created == 0, "pthread_key_create failed: \(created)")
        self.key = key
    }

    /// This thread's box, created on first use and released when the thread ends.
    package var current: Box {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<Box>.fromOpaque(pointer).takeUnretainedValue()
        }
        let box = Box()
        pthread_setspecific(key, Unmanaged.passRetained(box).toOpaque())
        return box
    }
}
