import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The connections the current thread holds, per pool. This is how a call made inside a
/// `tx` closure, an `each` callback or any nested library call finds the connection its caller
/// already holds and joins it instead of waiting for it (which would deadlock).
final class ThreadLeases {
    // One thread's own object: no other thread ever touches it, so the runtime's exclusivity
    // checks (which cost as much as the accesses) are off.
    @exclusivity(unchecked) var writers: [ObjectIdentifier: Connection] = [:]
    @exclusivity(unchecked) var readers: [ObjectIdentifier: Connection] = [:]
    /// While this thread runs a call of the async API: the flag the task's cancellation sets.
    @exclusivity(unchecked) var cancellation: CancellationFlag?
    /// True on the threads of `BlockingPool`, where the async API runs its calls inline.
    @exclusivity(unchecked) var isPoolThread = false
    /// The pools this thread is opening a connection for (running the onOpen hook).
    @exclusivity(unchecked) var opening: Set<ObjectIdentifier> = []

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        #if canImport(Darwin)
        pthread_key_create(&key) { Unmanaged<ThreadLeases>.fromOpaque($0).release() }
        #else
        pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<ThreadLeases>.fromOpaque(pointer).release() }
        }
        #endif
        return key
    }()

    /// This thread's leases, created on first use and released when the thread ends.
    static var current: ThreadLeases {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadLeases>.fromOpaque(pointer).takeUnretainedValue()
        }
        let leases = ThreadLeases()
        pthread_setspecific(key, Unmanaged.passRetained(leases).toOpaque())
        return leases
    }
}
