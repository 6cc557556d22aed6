import DicRecord
import Foundation
import Synchronization

// A child process for StopRaceValgrindTests (issue 13, point 0), meant to run under valgrind's
// memcheck, which (unlike the address sanitizer) sees reads inside the system libsqlite3.
//
//   stop-race FOLDER
//
// On a context with a busy timeout of 0.3 s, in FOLDER: thread A is inside a `Db.tx` running a
// statement on its connection every 0.1 s, thread B inside a slow `each`; thread C calls `stop()`
// once both are inside. stop() gives up waiting after the busy timeout; A's and B's next
// statements must end with the stopped error, on connections still open (memcheck reports any
// read of a freed handle). Plain Foundation threads, no Dispatch or Swift concurrency: valgrind
// 3.19 crashed in Dispatch's signal thread under the test runner. The work is tiny; the sleeps
// (about 1 s in all) dominate, not valgrind's slowdown.
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

// A: statements on the transaction's own connection (the escape hatch joins it), with pauses
// between, until one after stop() returned (at most 30, 3 s). Calls through `db` would throw the
// stopped error as soon as stop() begins, before touching the connection: holding the Connection
// is what keeps using it while stop() waits and then closes.
Thread {
    let outcome = Result {
        try Db.tx { db in
            try db.execute { writer in
                for i in 0..<30 {
                    let stopped = stopReturned.isRaised
                    try writer.execute("insert into t values (\(i))")
                    if i == 0 { aInside.raise() }
                    if stopped { break }
                    Thread.sleep(forTimeInterval: 0.1)
                }
                return true
            }
        }
    }
    aOutcome.withLock { $0 = outcome }
    aDone.raise()
}.start()

// B: a slow `each` on a reader, until the row after stop() returned (at most 100 rows, 5 s).
Thread {
    var rows = 0
    let outcome = Result {
        try Db.each("select n from big") { _ in
            rows += 1
            if rows == 1 { bInside.raise() }
            Thread.sleep(forTimeInterval: 0.05)
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
