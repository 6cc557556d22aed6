import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// Issue 13, point 0: `stop()` never frees a connection that a call is using. The calls in flight
/// end with the stopped error (`.notStarted`) and hand their connection back; whoever hands it
/// back closes it. Each test checks, through `Connection.isOpen`, that the connection its call
/// holds is still open after `stop()` returned. (The address sanitizer cannot see the use of a
/// freed handle: the reads happen inside the system's uninstrumented libsqlite3.)
@Suite struct StopWhileInUseTests {
    static func options() -> DbContext.Options {
        var options = DbContext.Options()
        options.busyTimeout = 0.3
        return options
    }

    /// Success is `nil`; a failure is described unless it is the stopped error naming the config.
    static func unexpected(_ outcome: Result<some Any, any Error>) -> String? {
        guard case .failure(let error) = outcome else { return nil }
        if let error = error as? DicRecordError, error.kind == .notStarted, error.configName == "main" { return nil }
        return "\(type(of: error)): \(error)"
    }

    /// The kind of the `DicRecordError` `outcome` failed with (nil on success or another error).
    static func kind(_ outcome: Result<some Any, any Error>) -> DicRecordError.Kind? {
        guard case .failure(let error) = outcome else { return nil }
        return (error as? DicRecordError)?.kind
    }

    static func makeTables(_ db: Db, rows: Int) throws {
        try db.update("create table t(x integer)")
        try db.update("create table big(n integer)")
        try db.batch("insert into big(n) values (?)", (0..<rows).map { [$0] })
    }

    /// The reader connection this thread holds for pool `poolID` (inside an `each` callback).
    static func heldReader(_ poolID: ObjectIdentifier) -> Connection? {
        ThreadLeases.current.readers[poolID]
    }

    /// Opens the file again under another name and checks it: intact, `t` holds `expectedT` rows.
    static func checkFile(_ path: String, expectedT: Int?, bigRows: Int) throws {
        try DbContext.withIsolatedRegistry {
            let again = try DbContext(path: path, configName: "check")
            try again.start()
            defer { again.stop() }
            let db = Db.use("check")
            #expect(try db.queryString("pragma integrity_check") == "ok")
            if let expectedT { #expect(try db.queryInt("select count(*) from t") == expectedT) }
            #expect(try db.queryInt("select count(*) from big") == bigRows)
        }
    }

    /// Thread A is inside a long `tx` (statements on its connection with pauses between), thread B inside a slow
    /// `each`; thread C stops the context. stop() returns after the busy timeout, but neither
    /// connection is closed while A or B still uses it: A's next call and B's next row end with
    /// the stopped error, the transaction rolls back whole, and the file is intact.
    @Test func stopWhileATransactionAndAnEachRunClosesNoConnectionInUse() throws {
        let bigRows = 100
        try withDatabase(options: Self.options()) { t in
            let db = t.db
            try Self.makeTables(db, rows: bigRows)
            let poolID = ObjectIdentifier(try t.context.pool())
            let aInside = DispatchSemaphore(value: 0), bInside = DispatchSemaphore(value: 0)
            let aDone = DispatchSemaphore(value: 0), bDone = DispatchSemaphore(value: 0)
            let stopReturned = Atomic<Bool>(false)
            let aOutcome = DbSuiteKit.Locked<Result<Bool, any Error>?>(nil)
            let bOutcome = DbSuiteKit.Locked<Result<Int, any Error>?>(nil)
            // Whether the connection was open each time its user looked after stop() returned.
            let aSawOpen = DbSuiteKit.Locked<[Bool]>([]), bSawOpen = DbSuiteKit.Locked<[Bool]>([])

            Thread {
                let outcome = Result {
                    try db.tx { db in
                        // Statements on the transaction's own connection (the escape hatch joins it).
                        try db.execute { writer in
                            var i = 0
                            // Runs until it has seen stop() return (about 1 s, or more on a loaded machine).
                            while true {
                                let stopped = stopReturned.load(ordering: .acquiring)
                                if stopped { aSawOpen.update { $0.append(writer.isOpen) } }
                                try writer.execute("insert into t values (\(i))")
                                if i == 0 { aInside.signal() }
                                if stopped || i == 200 { return true }
                                i += 1
                                Thread.sleep(forTimeInterval: 0.1)
                            }
                        }
                    }
                }
                aOutcome.update { $0 = outcome }
                aDone.signal()
            }.start()

            Thread {
                var rows = 0
                let outcome = Result {
                    try db.each("select n from big") { _ in
                        rows += 1
                        if rows == 1 { bInside.signal() }
                        if stopReturned.load(ordering: .acquiring), let reader = Self.heldReader(poolID) {
                            bSawOpen.update { $0.append(reader.isOpen) }
                        }
                        Thread.sleep(forTimeInterval: 0.05)
                        return true
                    }
                    return rows
                }
                bOutcome.update { $0 = outcome }
                bDone.signal()
            }.start()

            aInside.wait()
            bInside.wait()
            let stopper = DispatchSemaphore(value: 0)
            Thread {
                t.context.stop()
                stopReturned.store(true, ordering: .releasing)
                stopper.signal()
            }.start()
            stopper.wait()
            aDone.wait()
            bDone.wait()

            let a = try #require(aOutcome.value), b = try #require(bOutcome.value)
            #expect(Self.unexpected(a) == nil, "thread A's transaction ended with \(Self.unexpected(a) ?? "")")
            #expect(Self.unexpected(b) == nil, "thread B's each ended with \(Self.unexpected(b) ?? "")")
            // A looked at its writer after stop() returned, or (on a loaded machine) its next statement
            // was stopped with `.notStarted` before it could look; either way it never saw it closed.
            #expect(aSawOpen.value.allSatisfy { $0 }, "A's writer was closed while A's transaction used it")
            #expect(!aSawOpen.value.isEmpty || Self.kind(a) == .notStarted, "A neither looked at its writer nor was stopped")
            #expect(bSawOpen.value.allSatisfy { $0 }, "B's reader was closed while B's each used it")
            // After stop, every call throws.
            let bound = db.bound(to: t.context)
            let later = #expect(throws: DicRecordError.self) { try bound.queryInt("select count(*) from t") }
            #expect(later?.kind == .notStarted)
            #expect(throws: DicRecordError.self) { try db.update("insert into t values (-1)") }
            // A's transaction committed or rolled back whole.
            let committed = (try? a.get()) == true
            try Self.checkFile(t.path, expectedT: committed ? nil : 0, bigRows: bigRows)
            #expect(!committed, "A's transaction cannot commit after stop()")
        }
    }

    /// Threads waiting for the writer when the context stops learn of it as soon as the writer is
    /// let go, all of them, not at their 60 s deadline: the release after a stop wakes every waiter.
    @Test(.timeLimit(.minutes(2 * sanitizerSlowdown)))
    func threadsWaitingForTheWriterLearnOfAStopWhenItIsLetGo() throws {
        var options = DbContext.Options()
        options.busyTimeout = 60
        try withDatabase(options: options) { t in
            let db = t.db
            try db.update("create table t(x integer)")
            let inside = DispatchSemaphore(value: 0), letGo = DispatchSemaphore(value: 0), holderDone = DispatchSemaphore(value: 0)
            Thread {
                _ = try? db.tx { db in
                    try db.update("insert into t values (0)")
                    inside.signal()
                    _ = letGo.wait(timeout: .now() + 30)
                    return true
                }
                holderDone.signal()
            }.start()
            inside.wait()
            let waiters = 4
            let outcomes = DbSuiteKit.Locked<[String]>([])
            let done = DispatchGroup()
            for i in 0..<waiters {
                done.enter()
                Thread {
                    defer { done.leave() }
                    let outcome = Result { try db.update("insert into t values (?)", i + 1) }
                    let seen = Self.unexpected(outcome) ?? (Self.kind(outcome) == .notStarted ? "stopped" : "wrote")
                    outcomes.update { $0.append(seen) }
                }.start()
            }
            Thread.sleep(forTimeInterval: 0.3)   // time to start waiting (one that has not yet meets the stop at once)
            let stopped = DispatchSemaphore(value: 0)
            Thread {
                t.context.stop()   // waits for the holder
                stopped.signal()
            }.start()
            // The stop has begun once a read is refused.
            let bound = db.bound(to: t.context)
            var refused = false
            for _ in 0..<3_000 where !refused {
                if case .failure = Result(catching: { try bound.queryInt("select 1") }) { refused = true } else { Thread.sleep(forTimeInterval: 0.01) }
            }
            #expect(refused)
            letGo.signal()
            #expect(done.wait(timeout: .now() + 20) == .success, "a waiter still waited 20 s after the writer was let go")
            #expect(stopped.wait(timeout: .now() + 20) == .success)
            holderDone.wait()
            #expect(outcomes.value == Array(repeating: "stopped", count: waiters))
        }
    }

    /// stop() called inside a `tx` on the same thread neither waits for the writer that thread
    /// holds nor closes it under the transaction: the joined calls after it throw the stopped
    /// error, the commit too, the transaction rolls back, and the writer closes when it ends.
    @Test func stopInsideATransactionClosesTheWriterWhenTheTransactionEnds() throws {
        try withDatabase(options: Self.options()) { t in
            let db = t.db
            try Self.makeTables(db, rows: 3)
            let writer = DbSuiteKit.Locked<Connection?>(nil)
            let outcome = Result {
                try db.tx { db in
                    try db.update("insert into t values (1)")
                    let connection = try db.execute { $0 }
                    writer.update { $0 = connection }
                    t.context.stop()
                    #expect(connection.isOpen)
                    let joined = Result { try db.update("insert into t values (2)") }
                    #expect(Self.kind(joined) == .notStarted)
                    #expect(connection.isOpen)
                    return true
                }
            }
            #expect(Self.kind(outcome) == .notStarted)
            #expect(writer.value?.isOpen == false)
            try Self.checkFile(t.path, expectedT: 0, bigRows: 3)
        }
    }

    /// stop() called inside an `each` callback neither waits for the reader the `each` holds nor
    /// closes it under the `each`: the next row ends the `each` with the stopped error, and the
    /// reader closes when the `each` hands it back.
    @Test func stopInsideAnEachCallbackClosesTheReaderWhenTheEachEnds() throws {
        try withDatabase(options: Self.options()) { t in
            let db = t.db
            try Self.makeTables(db, rows: 10)
            let poolID = ObjectIdentifier(try t.context.pool())
            var rows = 0
            var reader: Connection?
            let outcome = Result {
                try db.each("select n from big") { _ in
                    rows += 1
                    if rows == 2 {
                        reader = Self.heldReader(poolID)
                        t.context.stop()
                        #expect(reader?.isOpen == true)
                    }
                    return true
                }
            }
            #expect(Self.kind(outcome) == .notStarted)
            #expect(rows == 2)
            #expect(reader != nil && reader?.isOpen == false)
            try Self.checkFile(t.path, expectedT: 0, bigRows: 10)
        }
    }

    /// stop() called from inside an async transaction does not wait for the writer the
    /// transaction leased, nor close it under it: the commit throws the stopped error, the
    /// transaction rolls back, and the writer closes when the transaction returns it.
    @Test func stopInsideAnAsyncTransactionClosesTheWriterWhenItEnds() async throws {
        try await withDatabase(options: Self.options()) { t in
            let db = t.db
            try Self.makeTables(db, rows: 3)
            let writer = DbSuiteKit.Locked<Connection?>(nil)
            let error = await #expect(throws: DicRecordError.self) {
                try await db.tx { db in
                    try await db.update("insert into t values (1)")
                    let connection = try await db.execute { $0 }
                    writer.update { $0 = connection }
                    t.context.stop()
                    #expect(connection.isOpen)
                    return true
                }
            }
            #expect(error?.kind == .notStarted)
            #expect(writer.value?.isOpen == false)
            try Self.checkFile(t.path, expectedT: 0, bigRows: 3)
        }
    }
}
