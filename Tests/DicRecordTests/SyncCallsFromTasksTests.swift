import Foundation
import Testing
@testable import DicRecord

/// Synchronous calls made from tasks (on Swift's cooperative threads) while an async transaction
/// holds the writer across a suspension: they wait, and the transaction still finishes, because
/// it never needs a cooperative thread to resume. A design that ran async transactions on
/// cooperative threads stalled here for the busy timeout and the calls threw `.busy` (found in
/// review, 2026-11-25); these keep any later design honest. No timing is asserted: a stall shows
/// as `.busy` errors after the 10 s busy timeout.
@Suite struct SyncCallsFromTasksTests {
    private static func syncUpdate(_ db: Db, _ sql: String) throws -> Int { try db.update(sql) }

    private static var options: DbContext.Options {
        var options = DbContext.Options()
        options.busyTimeout = 10
        return options
    }

    /// As many callers as there are cooperative threads (at least 2).
    private static var callers: Int { max(2, ProcessInfo.processInfo.activeProcessorCount) }

    @Test func syncWritesFromTasksWaitForATransactionSuspendedWhileHoldingTheWriter() async throws {
        try await withDatabase(options: Self.options) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let db = t.db
            let inTransaction = Flag()
            let holder = Task {
                try await db.tx { db in
                    try await db.update("insert into n(v) values (1)")
                    inTransaction.set()
                    try await Task.sleep(for: .milliseconds(300))
                    try await db.update("insert into n(v) values (2)")
                    return true
                }
            }
            while !inTransaction.isSet { try await Task.sleep(for: .milliseconds(1)) }
            let writers = (0..<Self.callers).map { i in Task { try Self.syncUpdate(db, "insert into n(v) values (\(10 + i))") } }
            var errors: [String] = []
            for writer in writers {
                do { #expect(try await writer.value == 1) } catch { errors.append("\(error)") }
            }
            #expect(try await holder.value)
            #expect(errors.isEmpty)
            #expect(try await db.queryInt("select count(*) from n") == 2 + Self.callers)
        }
    }

    @Test func syncCallsFromChildTasksWaitForASiblingsSavepoint() async throws {
        try await withDatabase(options: Self.options) { t in
            try await t.db.update("create table n(id integer primary key, v integer)")
            let db = t.db
            let errors = ErrorLog()
            let callers = Self.callers
            #expect(try await db.tx { db in
                try await withThrowingTaskGroup(of: Void.self) { group in
                    let inNested = Flag()
                    group.addTask {
                        _ = try await db.tx { db in
                            try await db.update("insert into n(v) values (1)")
                            inNested.set()
                            try await Task.sleep(for: .milliseconds(300))
                            try await db.update("insert into n(v) values (2)")
                            return true
                        }
                    }
                    while !inNested.isSet { try await Task.sleep(for: .milliseconds(1)) }
                    for i in 0..<callers {
                        group.addTask {
                            // Synchronous calls from the transaction's child tasks join it.
                            do { _ = try Self.syncUpdate(db, "insert into n(v) values (\(10 + i))") } catch { errors.add("\(error)") }
                        }
                    }
                    try await group.waitForAll()
                }
                return true
            })
            #expect(errors.items.isEmpty)
            #expect(try await db.queryInt("select count(*) from n") == 2 + callers)
        }
    }
}

final class ErrorLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ item: String) { lock.lock(); list.append(item); lock.unlock() }
    var items: [String] { lock.lock(); defer { lock.unlock() }; return list }
}
