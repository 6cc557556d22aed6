import CSQLite
import Foundation
import Testing
@testable import DicRecord

// Locks held by another connection (here a raw SQLite connection, as another process would
// hold them): a write waits up to the busy timeout, then fails with `.busy` naming the config
// and the wait. (The pool's own wait for the writer between threads: TransactionTests.)

/// A plain SQLite connection on a context's file, outside DicRecord.
private final class OtherConnection: @unchecked Sendable {
    private let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, nil)
        guard code == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw OtherConnectionError(message: "cannot open \(path): code \(code)")
        }
        handle = db
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { sqlite3_close_v2(handle) }

    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard code == SQLITE_OK else {
            throw OtherConnectionError(message: "\(sql): \(message.map { String(cString: $0) } ?? "code \(code)")")
        }
    }
}

private struct OtherConnectionError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

@Suite("Busy: locks held by another connection")
struct BusyTests {
    private static func options(busyTimeout: Double, journalMode: DbContext.JournalMode = .wal) -> DbContext.Options {
        var options = DbContext.Options()
        options.busyTimeout = busyTimeout
        options.journalMode = journalMode
        return options
    }

    private static func names(_ db: Db) throws -> [String] {
        try db.query("select name from item order by id", as: String.self).map { $0 ?? "NULL" }
    }

    /// Commits `other`'s open transaction on another thread after `delay` seconds.
    private static func commitLater(_ other: OtherConnection, after delay: Double) -> DbSuiteKit.Spawned<Void> {
        DbSuiteKit.spawn {
            Thread.sleep(forTimeInterval: delay)
            try other.execute("COMMIT")
        }
    }

    private static func expectFinished(_ spawned: DbSuiteKit.Spawned<Void>, sourceLocation: SourceLocation = #_sourceLocation) {
        switch spawned.wait(timeout: 30) {
        case nil: Issue.record("the other connection's COMMIT did not finish within 30 s", sourceLocation: sourceLocation)
        case .failure(let error)?: Issue.record("the other connection's COMMIT failed: \(error)", sourceLocation: sourceLocation)
        case .success?: break
        }
    }

    @Test func aWriteWaitsForAnotherConnectionsShortLockThenSucceeds() throws {
        try withDatabase(options: Self.options(busyTimeout: 5)) { t throws in
            try t.db.update("create table item(id integer primary key, name text not null)")
            let other = try OtherConnection(path: t.path)

            // A plain statement waits for the lock...
            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other-1')")
            var committer = Self.commitLater(other, after: 0.3)
            #expect(try t.db.update("insert into item(name) values ('context-1')") == 1)
            Self.expectFinished(committer)

            // ...and so does a transaction's BEGIN IMMEDIATE.
            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other-2')")
            committer = Self.commitLater(other, after: 0.3)
            #expect(try t.db.tx { db in
                try db.update("insert into item(name) values ('context-2')")
                return true
            })
            Self.expectFinished(committer)

            // The context's rows come after the other's: each waited for the commit.
            #expect(try Self.names(t.db) == ["other-1", "context-1", "other-2", "context-2"])
        }
    }

    @Test func aWriteBlockedLongerThanTheBusyTimeoutThrowsBusyNamingConfigAndWait() throws {
        try withDatabase(configName: "inventory", options: Self.options(busyTimeout: 0.2)) { t throws in
            try t.db.update("create table item(id integer primary key, name text not null)")
            try t.db.update("insert into item(name) values ('kept')")
            let other = try OtherConnection(path: t.path)
            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other')")

            // The lock is held until every attempt below has given up: no timing involved.
            let sql = "insert into item(name) values (?)"
            let error = try #require(throws: DicRecordError.self) { try t.db.update(sql, "blocked") }
            #expect(error.kind == .busy)
            #expect(error.configName == "inventory")
            #expect(error.sql == sql)
            // How long it waited is measured, not asserted: only that it says so, with the timeout.
            #expect(error.message.hasPrefix("database is locked: config 'inventory' waited "))
            #expect(error.message.contains("(busy timeout 0.2 s) for a lock held by another connection or process"))
            #expect(error.description.contains(sql))
            // SQLite's own error is kept.
            #expect(error.databaseError?.resultCode == SQLITE_BUSY)
            #expect(error.databaseError?.message == "database is locked")
            #expect(error.databaseError?.arguments == [.text("blocked")])
            #expect(error.message.contains("database is locked)"))

            // A transaction fails at its BEGIN, and leaves no transaction open.
            let tx = try #require(throws: DicRecordError.self) {
                try t.db.tx { db in try db.update(sql, "in-tx"); return true }
            }
            #expect(tx.kind == .busy)
            #expect(tx.sql == "BEGIN IMMEDIATE")
            #expect(tx.message.contains("config 'inventory' waited "))
            #expect(tx.message.contains("busy timeout 0.2 s"))
            try t.db.execute { connection in #expect(!connection.isInTransaction) }

            // A batch too.
            let batch = try #require(throws: DicRecordError.self) { try t.db.batch(sql, [["b1"], ["b2"]]) }
            #expect(batch.kind == .busy)

            // Reads are not blocked in WAL: they see the committed state.
            #expect(try Self.names(t.db) == ["kept"])

            try other.execute("COMMIT")
            // Once the lock is gone the context writes again.
            #expect(try t.db.update(sql, "after") == 1)
            #expect(try Self.names(t.db) == ["kept", "other", "after"])
        }
    }

    @Test func aReadBlockedByAnExclusiveLockThrowsBusyInRollbackJournalMode() throws {
        try withDatabase(configName: "journal", options: Self.options(busyTimeout: 0.2, journalMode: .delete)) { t throws in
            try t.db.update("create table item(id integer primary key, name text not null)")
            try t.db.update("insert into item(name) values ('kept')")
            #expect(try t.db.queryString("PRAGMA journal_mode") == "delete")
            let other = try OtherConnection(path: t.path)
            // EXCLUSIVE keeps readers out too when there is no WAL.
            try other.execute("BEGIN EXCLUSIVE; insert into item(name) values ('other')")

            let read = try #require(throws: DicRecordError.self) { try t.db.find("select * from item where name = ?", "kept") }
            #expect(read.kind == .busy)
            #expect(read.configName == "journal")
            #expect(read.message.contains("config 'journal' waited "))
            #expect(read.message.contains("busy timeout 0.2 s"))
            #expect(read.databaseError?.resultCode == SQLITE_BUSY)

            try other.execute("ROLLBACK")
            #expect(try Self.names(t.db) == ["kept"])
        }
    }

    @Test func otherSQLiteErrorsStayDatabaseErrors() throws {
        try withDatabase(options: Self.options(busyTimeout: 0.2)) { t throws in
            try t.db.update("create table item(id integer primary key, name text not null)")
            let error = try #require(throws: DatabaseError.self) { try t.db.update("insert into item(name) values (null)") }
            #expect(error.extendedResultCode == 1299)       // SQLITE_CONSTRAINT_NOTNULL
        }
    }

    /// The synchronous calls, from an async test.
    private static func syncUpdate(_ db: Db, _ sql: String) throws -> Int { try db.update(sql) }
    private static func isInTransaction(_ db: Db) throws -> Bool { try db.execute { $0.isInTransaction } }

    // An async transaction waits for another connection's lock as a sync one does (on DicRecord's
    // threads), and leaves SQLite's busy wait as it was.

    @Test func anAsyncTransactionWaitsForAnotherConnectionsLockThenSucceeds() async throws {
        try await withDatabase(options: Self.options(busyTimeout: 5)) { t in
            try await t.db.update("create table item(id integer primary key, name text not null)")
            let other = try OtherConnection(path: t.path)

            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other-1')")
            var committer = Self.commitLater(other, after: 0.3)
            #expect(try await t.db.tx { db in
                try await db.update("insert into item(name) values ('context-1')")
                return true
            })
            Self.expectFinished(committer)

            // The busy wait is back on after the attempt: a sync write waits for the lock again.
            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other-2')")
            committer = Self.commitLater(other, after: 0.3)
            #expect(try Self.syncUpdate(t.db, "insert into item(name) values ('context-2')") == 1)
            Self.expectFinished(committer)

            // And after another async transaction.
            #expect(try await t.db.tx { db in try await db.update("insert into item(name) values ('context-3')") == 1 })
            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other-3')")
            committer = Self.commitLater(other, after: 0.3)
            #expect(try Self.syncUpdate(t.db, "insert into item(name) values ('context-4')") == 1)
            Self.expectFinished(committer)

            #expect(try Self.names(t.db) == ["other-1", "context-1", "other-2", "context-2", "context-3", "other-3", "context-4"])
        }
    }

    @Test func anAsyncTransactionBlockedLongerThanTheBusyTimeoutThrowsBusyAfterWaiting() async throws {
        try await withDatabase(configName: "inventory", options: Self.options(busyTimeout: 0.2)) { t in
            try await t.db.update("create table item(id integer primary key, name text not null)")
            let other = try OtherConnection(path: t.path)
            try other.execute("BEGIN IMMEDIATE; insert into item(name) values ('other')")

            let error = try await #require(throws: DicRecordError.self) {
                try await t.db.tx { db in try await db.update("insert into item(name) values ('blocked')"); return true }
            }
            #expect(error.kind == .busy)
            #expect(error.sql == "BEGIN IMMEDIATE")
            // It waited out the busy timeout, rather than failing at once.
            #expect(error.message.hasPrefix("database is locked: config 'inventory' waited "))
            #expect(error.message.contains("(busy timeout 0.2 s)"))
            #expect(try !Self.isInTransaction(t.db))

            try other.execute("COMMIT")
            #expect(try await t.db.tx { db in try await db.update("insert into item(name) values ('after')") == 1 })
            #expect(try Self.names(t.db) == ["other", "after"])
        }
    }

    /// Without readers (rollback journal), an awaited read tries the writer on the task's thread
    /// with the busy wait off; a lock held elsewhere moves it to a pool thread, where it waits.
    @Test func anAwaitedReadInRollbackJournalModeWaitsForAnotherConnectionsLock() async throws {
        try await withDatabase(options: Self.options(busyTimeout: 5, journalMode: .delete)) { t in
            try await t.db.update("create table item(id integer primary key, name text not null)")
            try await t.db.update("insert into item(name) values ('kept')")
            #expect(try await t.db.query("select name from item order by id", as: String.self) == ["kept"])
            let other = try OtherConnection(path: t.path)

            try other.execute("BEGIN EXCLUSIVE; insert into item(name) values ('other-1')")
            var committer = Self.commitLater(other, after: 0.3)
            #expect(try await t.db.query("select name from item order by id", as: String.self) == ["kept", "other-1"])
            Self.expectFinished(committer)

            // The busy wait is back on for the synchronous API.
            try other.execute("BEGIN EXCLUSIVE; insert into item(name) values ('other-2')")
            committer = Self.commitLater(other, after: 0.3)
            #expect(try Self.names(t.db) == ["kept", "other-1", "other-2"])
            Self.expectFinished(committer)
        }
    }
}
