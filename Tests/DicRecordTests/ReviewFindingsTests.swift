import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// Bugs found in review (branch review-g). Each test states what should happen; the ones that
/// fail on the current library are disabled with the failure output in a comment.
@Suite struct ReviewFindingsTests {

    // MARK: Async transactions

    /// A write that the parent task of an async transaction makes while a child task is inside a
    /// nested `tx` (a SAVEPOINT) lands inside that savepoint: when the child's `tx` rolls back,
    /// the parent's write, which returned successfully and belongs to the outer transaction, is
    /// silently rolled back with it. Only nested *transactions* take turns (AsyncGate); plain
    /// calls (and sync `tx`) from the parent or siblings join whatever savepoint is open.
    // Failure (Db+Async.swift:146-180 nestedAsyncTransaction gates only nested tx; AsyncScope.swift:26 join lets any call in):
    //   Expectation failed: (rows → []) == ([2] → [Optional(2)])
    @Test(.disabled("BUG: a parent write made while a child tx savepoint is open is rolled back with that savepoint")) func parentWriteDuringAChildSavepointSurvivesTheChildRollback() async throws {
        try await withDatabase { t in
            try syncUpdate(t.db, "create table t (id integer primary key, v integer)")
            let db = t.db
            try await withWatchdog(seconds: 30) {
                let (childWrote, childWroteC) = AsyncStream.makeStream(of: Void.self)
                let (parentWrote, parentWroteC) = AsyncStream.makeStream(of: Void.self)
                try await db.transaction { db in
                    async let child: Bool = db.tx { db in
                        try await db.update("insert into t (v) values (1)")
                        childWroteC.yield()
                        var wait = parentWrote.makeAsyncIterator()
                        _ = await wait.next()
                        return false  // the child's own work is rolled back
                    }
                    var wait = childWrote.makeAsyncIterator()
                    _ = await wait.next()
                    // The parent's own write, in the outer transaction, not in the child's savepoint.
                    let inserted = try await db.update("insert into t (v) values (2)")
                    #expect(inserted == 1)
                    parentWroteC.yield()
                    let childCommitted = try await child
                    #expect(childCommitted == false)
                }
            }
            let rows = try await db.query("select v from t order by v", as: Int.self)
            #expect(rows == [2])
        }
    }

    /// Same, from a sibling child task (plain write), and with a sibling's synchronous `tx`.
    // Failure: Expectation failed: (rows → []) == ([2, 3] → [Optional(2), Optional(3)])
    @Test(.disabled("BUG: a sibling write / committed sync tx made during a child tx savepoint is rolled back with it")) func siblingWriteDuringAChildSavepointSurvivesTheChildRollback() async throws {
        try await withDatabase { t in
            try syncUpdate(t.db, "create table t (id integer primary key, v integer)")
            let db = t.db
            try await withWatchdog(seconds: 30) {
                let (childWrote, childWroteC) = AsyncStream.makeStream(of: Void.self)
                let (siblingWrote, siblingWroteC) = AsyncStream.makeStream(of: Void.self)
                try await db.transaction { db in
                    async let child: Bool = db.tx { db in
                        try await db.update("insert into t (v) values (1)")
                        childWroteC.yield()
                        var wait = siblingWrote.makeAsyncIterator()
                        _ = await wait.next()
                        return false
                    }
                    async let sibling: Void = {
                        var wait = childWrote.makeAsyncIterator()
                        _ = await wait.next()
                        try await db.update("insert into t (v) values (2)")
                        try await db.runAsync { try reviewSyncInsert($0, 3) }   // a committed sync tx
                        siblingWroteC.yield()
                    }()
                    _ = try await (child, sibling)
                }
            }
            let rows = try await db.query("select v from t order by v", as: Int.self)
            #expect(rows == [2, 3])
        }
    }

    /// Two child tasks of one task that is inside async transactions on two configs: each runs
    /// an `each` on one config (holding that lease's lock for the whole call) and, from its
    /// callback, a call on the other config (which waits for the other lease's lock). The two
    /// NSLocks are taken in opposite orders: the task hangs forever (no busy timeout applies).
    // Failure (AsyncScope.swift:26-33 holds lease.lock for the whole call; nested call on the other config takes the other lease's lock):
    //   watchdog: the work did not finish within 20.0 s (deadlock or hang)
    //   (the two pool threads stay blocked in NSLock.lock forever)
    @Test(.disabled("BUG: ABBA deadlock between two TransactionLease locks (each callback on config a calls config b and vice versa)")) func crossConfigCallsFromConcurrentChildrenDoNotDeadlock() async throws {
        try await withDatabase { t in
            try syncUpdate(t.db, "create table t (v integer)")
            try syncUpdate(t.db, "insert into t (v) values (1)")
            let other = try DbContext(path: t.folder.appendingPathComponent("db/other.sqlite").path, configName: "other")
            try other.start()
            defer { other.stop() }
            let a = t.db, b = Db.use("other")
            try syncUpdate(b, "create table t (v integer)")
            try syncUpdate(b, "insert into t (v) values (1)")
            try await withWatchdog(seconds: 20) {
                try await a.transaction { a in
                    try await b.transaction { b in
                        let inA = ReviewFlag(), inB = ReviewFlag()
                        async let x: Void = a.each("select v from t") { _ in
                            inA.set()
                            inB.wait(seconds: 5)
                            try b.update("insert into t (v) values (2)")   // copy a → b
                            return false
                        }
                        async let y: Void = b.each("select v from t") { _ in
                            inB.set()
                            inA.wait(seconds: 5)
                            try a.update("insert into t (v) values (3)")   // copy b → a
                            return false
                        }
                        _ = try await (x, y)
                    }
                }
            }
        }
    }

    // MARK: SQL builder

    /// A string-literal (or `.raw`) condition gets `.comparison` precedence whatever it contains,
    /// so a second `where` (documented: "adds AND condition") does not parenthesize an OR in it.
    // Failure (SqlClause.swift:62-64 and :119-121 give raw SQL .comparison precedence):
    //   (query.sql → "SELECT id FROM p WHERE a = 1 OR a = 2 AND b = ? ORDER BY id") == "SELECT id FROM p WHERE (a = 1 OR a = 2) AND b = ? ORDER BY id"
    //   (ids → [Optional(1), Optional(2), Optional(3)]) == ([2, 3] → [Optional(2), Optional(3)])
    @Test func secondWhereKeepsARawOrConditionTogether() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, a integer, b integer)")
            try t.db.batch("insert into p (a, b) values (?, ?)", [[1, 0], [2, 3], [1, 3]])
            let query = Select("id").from("p").where("a = 1 OR a = 2").where("b".eq(3)).orderBy("id")
            #expect(query.sql == "SELECT id FROM p WHERE (a = 1 OR a = 2) AND b = ? ORDER BY id")
            let ids = try t.db.query(query, as: Int.self)
            #expect(ids == [2, 3])
        }
    }

    /// `.not` of a raw condition with OR: `NOT a = 1 OR a = 2`, i.e. `(NOT a = 1) OR a = 2`.
    // Failure (SqlClause.swift:262-264 with raw precedence .comparison):
    //   (query.sql → "SELECT id FROM p WHERE NOT a = ? OR a = ? ORDER BY id") == "SELECT id FROM p WHERE NOT (a = ? OR a = ?) ORDER BY id"
    //   (ids → [Optional(2), Optional(3)]) == ([3] → [Optional(3)])
    @Test func notOfARawOrConditionNegatesAllOfIt() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, a integer)")
            try t.db.batch("insert into p (a) values (?)", [[1], [2], [4]])
            let query = Select("id").from("p").where(SqlClause.raw("a = ? OR a = ?", 1, 2).not).orderBy("id")
            #expect(query.sql == "SELECT id FROM p WHERE NOT (a = ? OR a = ?) ORDER BY id")
            let ids = try t.db.query(query, as: Int.self)
            #expect(ids == [3])
        }
    }

    /// A comparison on the right of a comparison is not parenthesized: `flag = v IS NULL` is
    /// `(flag = v) IS NULL` to SQLite (same precedence, left to right), not `flag = (v IS NULL)`;
    /// likewise `x = a = ?` is `(x = a) = ?`.
    // Failure (SqlClause.swift:284-288 compare: right operand of equal precedence is not parenthesized):
    //   (isNullIds → [Optional(1)]) == ([1, 2] → [Optional(1), Optional(2)])      SQL: flag = v IS NULL
    //   (equalsIds → []) == ([2, 3] → [Optional(2), Optional(3)])                SQL: flag = v = ?
    @Test func comparisonWithACompoundRightOperandKeepsItTogether() throws {
        try withDatabase { t in
            try t.db.update("create table q (id integer primary key, flag integer, v integer)")
            try t.db.batch("insert into q (flag, v) values (?, ?)", [[1, nil], [0, 5], [1, 5]])
            let isNull = Select("id").from("q").where("flag".eq("v".isNull)).orderBy("id")
            let isNullIds = try t.db.query(isNull, as: Int.self)
            #expect(isNullIds == [1, 2])   // flag = (v IS NULL)
            let equals = Select("id").from("q").where("flag".eq("v".eq(5))).orderBy("id")
            let equalsIds = try t.db.query(equals, as: Int.self)
            #expect(equals.sql.contains("flag = (v = ?)"))
            #expect(equalsIds == [3])      // flag = (v = 5): row 1 has v NULL, row 2 flag 0 ≠ 1
        }
    }

    /// The documented join example (`Select.join` doc comment): `"student s"` is rendered as the
    /// single quoted identifier `"student s"`, so the query fails with "no such table".
    // Failure (Statements.swift:112/132-136 render "student s" via SqlIdentifier.render → quoted as one name):
    //   (query.sql → "SELECT s.name, t.name FROM \"student s\" JOIN \"teacher t\" ON s.teacher_id = t.id") == "… FROM student s JOIN teacher t …"
    //   Caught error: SQLite error 1 (SQL logic error): no such table: student s
    @Test func documentedJoinWithTableAliasesRuns() throws {
        try withDatabase { t in
            try t.db.update("create table teacher (id integer primary key, name text)")
            try t.db.update("create table student (id integer primary key, name text, teacher_id integer)")
            try t.db.update("insert into teacher (id, name) values (1, 'Ms T')")
            try t.db.update("insert into student (name, teacher_id) values ('Jack', 1)")
            let query = Select("s.name", "t.name").from("student s").join("teacher t", on: "s.teacher_id = t.id")
            #expect(query.sql == "SELECT s.name, t.name FROM student s JOIN teacher t ON s.teacher_id = t.id")
            #expect(try t.db.find(query).count == 1)
        }
    }
}

private func reviewSyncInsert(_ db: Db, _ v: Int) throws {
    try db.tx { db in
        try db.update("insert into t (v) values (?)", v)
        return true
    }
}

private func syncUpdate(_ db: Db, _ sql: String) throws {
    try db.update(sql)
}

final class ReviewFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    func set() { flag.store(true, ordering: .releasing) }
    func wait(seconds: Double) {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !flag.load(ordering: .acquiring) && Date() < deadline { usleep(1000) }
    }
}
