import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// `ThreadSlot` turns the runtime's exclusivity checks off on the assumption that a box is only
/// ever touched by its own thread: these tests fail if two threads could reach one box.
@Suite struct ThreadSlotTests {
    final class Token {}

    /// Synchronous (a test thread that never suspends): the test's own value must survive too.
    @Test func eachThreadSeesOnlyItsOwnValue() throws {
        let slot = ThreadSlot<Int>()
        slot.current.value = -1
        let seen = Mutex<[Int: [Int?]]>([:])
        let done = DispatchSemaphore(value: 0)
        let threads = (0..<8).map { n in
            Thread {
                var mine: [Int?] = [slot.current.value]   // a new thread starts empty
                for i in 0..<10_000 {
                    slot.current.value = n * 100_000 + i
                    if slot.current.value != n * 100_000 + i { mine.append(slot.current.value) }
                }
                mine.append(slot.current.value)
                seen.withLock { $0[n] = mine }
                done.signal()
            }
        }
        threads.forEach { $0.start() }
        for _ in 0..<8 { done.wait() }
        for n in 0..<8 {
            #expect(seen.withLock { $0[n] } == [nil, n * 100_000 + 9_999])
        }
        #expect(slot.current.value == -1)
    }

    @Test func aThreadsBoxIsReleasedWhenTheThreadEnds() async throws {
        let slot = ThreadSlot<Token>()
        let watcher = Mutex<(weak: WeakToken?, done: Bool)>((nil, false))
        let thread = Thread {
            let token = Token()
            slot.current.value = token
            watcher.withLock { $0 = (WeakToken(token), true) }
        }
        thread.start()
        while !watcher.withLock({ $0.done }) { try await Task.sleep(for: .milliseconds(5)) }
        // The thread's destructor runs after its body returns, whenever the loaded machine
        // schedules the thread's exit: wait for it (up to 30 s; a box never released fails).
        let deadline = ContinuousClock.now + .seconds(30)
        while watcher.withLock({ $0.weak?.token }) != nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(watcher.withLock { $0.weak?.token } == nil, "the thread's box still held its token 30 s after the thread's body returned")
    }

    final class WeakToken: @unchecked Sendable {
        weak var token: Token?
        init(_ token: Token) { self.token = token }
    }
}
