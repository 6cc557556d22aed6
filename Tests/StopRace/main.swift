import DicRecord
import Foundation
import Synchronization

// A child process for StopRaceValgrindTests (issue 13, point 0), meant to run under valgrind's
// memcheck, which (unlike the address sanitizer) sees reads inside the system libsqlite3.
//
//   stop-race FOLDER
//
// On a context with a busy timeout of 0.3 s, in FOLDER: thread A is inside a `Db.tx` running a
// statement on its connection every 0.1 s, thread B inside an `each` whose first row's callback
// holds until stop() returned; thread C calls `stop()` once both are inside. stop() gives up
// waiting after the busy timeout; A's and B's next statements must end with the stopped error, on
// connections still open (memcheck reports any read of a freed handle). A and B go on until C
// raises "stop returned", not for a fixed time, so a slow machine or valgrind's slowdown cannot
// end them before stop() did (each has a 60 s safety cap, reported as a failure). Plain
// Foundation threads, no Dispatch or Swift concurrency: valgrind 3.19 crashed in Dispatch's
// signal thread under the test runner.
//
// Prints one line per thread; exits 0 when both calls ended with the stopped error and the file
// is intact, 1 otherwise (the reason on stderr).

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("stop-race: \(message)\n".utf8))
    exit(1)
}

/// A one-shot flag another thread waits for (a condition variable, no Dispatch).
final class Signal: Sendable {
    private let flag = Mutex(false)
    private let wakeUp = NSCondition()

    func raise() {
        flag.withLock { $0 = true }
        wakeUp.lock()
        wakeUp.broadcast()
        wakeUp.unlock()
    }

    var isRaised: Bool { flag.withLock { $0 } }

    func wait() {
        wakeUp.lock()
        while !isRaised { wakeUp.wait() }
        wakeUp.unlock()
    }
}

/// Nil when `outcome` is the stopped error naming the config, else what it was.
func unexpected(_ outcome: Result<some Any, any Error>) -> String? {
    switch outcome {
    case .success(let value):
        return "succeeded (\(value)) after stop()"
    case .failure(let error as DicRecordError) where error.kind == .notStarted && error.configName == "main":
        return nil
    case .failure(let error):
        return "\(type(of: error)): \(error)"
    }
}

guard CommandLine.arguments.count == 2 else { fail("usage: stop-race FOLDER") }
let path = URL(fileURLWithPath: CommandLine.arguments[1]).appendingPathComponent("stop-race.sqlite").path
var options = DbContext.Options()
options.busyTimeout = 0.3
let bigRows = 100
let context: DbContext
do {
    context = try DbContext(path: path, options: options)
    try context.start()
    try Db.update("create table t(x integer)")
    try Db.update("create table big(n integer)")
    try Db.tx { db in
        for n in 0..<bigRows { try db.update("insert into big(n) values (?)", n) }
        return true
    }
} catch {
    fail("setup: \(error)")
}

let aInside = Signal(), bInside = Signal(), stopReturned = Signal(), aDone = Signal(), bDone = Signal()
let aOutcome = Mutex<Result<Bool, any Error>?>(nil)
let bOutcome = Mutex<Result<Int, any Error>?>(nil)

/// What ends A's or B's wait when stop() never returned: the scenario fails with it.
struct StopDidNotReturn: Error, CustomStringConvertible {
    let description: String
}

/// The safety cap of A's statements and of B's wait: 600 × 0.1 s, 60 s (the test kills the run after 120 s).
let cap = 600

// A: statements on the transaction's own connection (the escape hatch joins it), with pauses
// between, until one after stop() returned. Calls through `db` would throw the stopped error as
// soon as stop() begins, before touching the connection: holding the Connection is what keeps
// using it while stop() waits and then closes.
Thread {
    let outcome = Result {
        try Db.tx { db in
            try db.execute { writer in
                for i in 0..<cap {
                    let stopped = stopReturned.isRaised
                    try writer.execute("insert into t values (\(i))")
                    if i == 0 { aInside.raise() }
                    if stopped { return true }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                throw StopDidNotReturn(description: "stop() had not returned after \(cap) statements 0.1 s apart")
            }
        }
    }
    aOutcome.withLock { $0 = outcome }
    aDone.raise()
}.start()

// B: an `each` on a reader whose first row's callback returns only once stop() returned: the
// step to the next row must end with the stopped error.
Thread {
    var rows = 0
    let outcome = Result {
        try Db.each("select n from big") { _ in
            rows += 1
            guard rows == 1 else { return true }
            bInside.raise()
            var waits = 0
            while !stopReturned.isRaised {
                guard waits < cap else {
                    throw StopDidNotReturn(description: "stop() had not returned after \(cap) waits of 0.1 s")
                }
                Thread.sleep(forTimeInterval: 0.1)
                waits += 1
            }
            return true
        }
        return rows
    }
    bOutcome.withLock { $0 = outcome }
    bDone.raise()
}.start()

aInside.wait()
bInside.wait()
// C: stops the context while A and B are inside their calls.
Thread {
    context.stop()
    stopReturned.raise()
}.start()
stopReturned.wait()
aDone.wait()
bDone.wait()

let a = aOutcome.withLock { $0 }!, b = bOutcome.withLock { $0 }!
print("A (tx): \(unexpected(a) ?? "stopped error")")
print("B (each): \(unexpected(b) ?? "stopped error")")
if let problem = unexpected(a) { fail("thread A's transaction \(problem)") }
if let problem = unexpected(b) { fail("thread B's each \(problem)") }

// The transaction rolled back whole; the file is intact.
do {
    let again = try DbContext(path: path, configName: "check")
    try again.start()
    defer { again.stop() }
    let db = Db.use("check")
    guard try db.queryString("pragma integrity_check") == "ok" else { fail("integrity_check failed") }
    guard try db.queryInt("select count(*) from t") == 0 else { fail("A's rows are in the file after stop()") }
    guard try db.queryInt("select count(*) from big") == bigRows else { fail("big lost rows") }
} catch {
    fail("check: \(error)")
}
print("ok")
exit(0)
