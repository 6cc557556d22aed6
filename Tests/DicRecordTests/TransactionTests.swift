import Foundation
import Testing
@testable import DicRecord

// `tx` and `transaction`: commit, rollback, nesting as savepoints, joining, and what other
// threads see and do meanwhile.

@Suite("Transactions")
struct TransactionTests {
    struct Boom: Error, Equatable { let id: Int }

    private func names(_ db: Db) throws -> [String] {
        try db.query("select name from student order by id", as: String.self).map { $0 ?? "NULL" }
    }

    private func insert(_ db: Db, _ name: String) throws {
        try db.update("insert into student(name, age) values (?, ?)", name, 1)
    }

    // MARK: Commit and rollback

    @Test(arguments: Engine.available) func txReturningTrueCommits(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let result = try t.db.tx { db in
                try insert(db, "a")
                try insert(db, "b")
                return true
            }
            #expect(result == true)
            #expect(try names(t.db) == ["a", "b"])
            #expect(try !t.db.onWriter { $0.isInTransaction })
        }
    }

    @Test(arguments: Engine.available) func txReturningFalseRollsBack(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            let result = try t.db.tx { db in
                try insert(db, "a")
                try db.update("delete from student where name = 's1'")
                #expect(try names(db) == ["a"])
                return false
            }
            #expect(result == false)
            #expect(try names(t.db) == ["s1"])
            #expect(try !t.db.onWriter { $0.isInTransaction })
        }
    }

    @Test(arguments: Engine.available) func txThatThrowsRollsBackAndRethrowsTheSameError(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            #expect(throws: Boom(id: 7)) {
                try t.db.tx { db in
                    try insert(db, "a")
                    throw Boom(id: 7)
                }
            }
            #expect(try names(t.db) == ["s1"])
            // A database error thrown inside rolls back too, and comes out unchanged.
            let error = #expect(throws: DatabaseError.self) {
                try t.db.tx { db in
                    try insert(db, "b")
                    try db.update("insert into no_such_table values (1)")
                    return true
                }
            }
            #expect(error?.message.contains("no_such_table") == true)
            #expect(try names(t.db) == ["s1"])
            // Still usable afterwards.
            #expect(try t.db.tx { db in try insert(db, "c"); return true })
            #expect(try names(t.db) == ["s1", "c"])
        }
    }

    @Test(arguments: Engine.available) func transactionReturnsItsValueAndRollsBackOnThrow(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let value: String = try t.db.transaction { db in
                try insert(db, "kept")
                return "done:\(try db.queryInt("select count(*) from student") ?? -1)"
            }
            #expect(value == "done:1")
            let count = try Db.transaction { db in try db.queryInt("select count(*) from student") }
            #expect(count == 1)
            #expect(throws: Boom(id: 1)) {
                let _: Int = try t.db.transaction { db in
                    try insert(db, "dropped")
                    throw Boom(id: 1)
                }
            }
            #expect(try names(t.db) == ["kept"])
        }
    }

    @Test(arguments: Engine.available) func aCommitThatFailsRollsBackAndThrows(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table parent(id integer primary key)"))
            try t.db.update(t.db.ddl("create table child(id integer primary key, parent_id integer references parent(id) deferrable initially deferred)"))
            // The deferred foreign key is checked at COMMIT, which fails.
            let error = #expect(throws: DatabaseError.self) {
                try t.db.tx { db in
                    try db.update("insert into child values (1, 42)")
                    return true
                }
            }
            #expect(error?.extendedResultCode == 787)   // SQLITE_CONSTRAINT_FOREIGNKEY
            #expect(try t.db.queryInt("select count(*) from child") == 0)
            #expect(try !t.db.onWriter { $0.isInTransaction })
            // The next transaction starts cleanly.
            #expect(try t.db.tx { db in
                try db.update("insert into parent values (42)")
                try db.update("insert into child values (1, 42)")
                return true
            })
            #expect(try t.db.queryInt("select count(*) from child") == 1)
        }
    }

    // MARK: Nesting

    @Test(arguments: Engine.available) func nestedTxReturningFalseRollsBackOnlyItsOwnWork(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let outer = try t.db.tx { db in
                try insert(db, "outer-before")
                let inner = try db.tx { db in
                    try insert(db, "inner")
                    #expect(try names(db) == ["outer-before", "inner"])
                    return false
                }
                #expect(inner == false)
                #expect(try names(db) == ["outer-before"])
                try insert(db, "outer-after")
                return true
            }
            #expect(outer)
            #expect(try names(t.db) == ["outer-before", "outer-after"])
        }
    }

    @Test(arguments: Engine.available) func nestedTxThatThrowsRollsBackOnlyItsOwnWork(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            try t.db.tx { db in
                try insert(db, "a")
                #expect(throws: Boom(id: 2)) {
                    try db.tx { db in
                        try insert(db, "b")
                        throw Boom(id: 2)
                    }
                }
                // A nested tx that commits keeps its work in the outer one.
                #expect(try db.tx { db in try insert(db, "c"); return true })
                return true
            }
            #expect(try names(t.db) == ["a", "c"])
        }
    }

    @Test(arguments: Engine.available) func outerRollbackUndoesCommittedNestedWork(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            try t.db.tx { db in
                try db.tx { db in
                    try db.tx { db in try insert(db, "deep"); return true }
                    try insert(db, "middle")
                    return true
                }
                #expect(try names(db) == ["deep", "middle"])
                return false
            }
            #expect(try names(t.db).isEmpty)
        }
    }

    // MARK: Joining

    @Test(arguments: Engine.available) func staticAndHandleCallsAndBatchesJoinTheTransaction(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            t.clearLog()
            let result = try t.db.tx { db in
                try Db.update("insert into student(name, age) values ('static', 1)")
                try t.db.update("insert into student(name, age) values ('handle', 2)")
                try Db.main.save("student", try Record(["name": "saved", "age": 3]))
                let counts = try db.batch("insert into student(name, age) values (?, ?)", [["batch1", 4], ["batch2", 5]])
                #expect(counts == [1, 1])
                try Db.batch([Sql("update student set age = 100 where name = ?", "s1")])
                // Every form sees the uncommitted work.
                #expect(try Db.queryInt("select count(*) from student") == 6)
                #expect(try t.db.find("select * from student").count == 6)
                #expect(try Db.use("main").findFirst("select * from student where name = 'batch2'") != nil)
                #expect(try db.queryInt("select age from student where name = 's1'") == 100)
                #expect(try db.onWriter { $0.isInTransaction })
                return false
            }
            #expect(result == false)
            #expect(try names(t.db) == ["s1"])
            #expect(try t.db.queryInt("select age from student where name = 's1'") == 1)
            // One transaction: the batches joined it as savepoints.
            #expect(t.statements.filter { $0.hasPrefix("BEGIN") }.count == 1)
            #expect(t.statements.filter { $0 == "ROLLBACK" }.count == 1)
            #expect(!t.statements.contains("COMMIT"))
        }
    }

    @Test(arguments: Engine.available) func aFailedBatchInsideTxRollsBackOnlyTheBatch(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table u(id integer primary key, name text unique)"))
            try t.db.tx { db in
                try db.update("insert into u(name) values ('before')")
                #expect(throws: DatabaseError.self) {
                    try db.batch("insert into u(name) values (?)", [["x"], ["y"], ["x"]])
                }
                #expect(try db.query("select name from u order by id", as: String.self) == ["before"])
                try db.update("insert into u(name) values ('after')")
                return true
            }
            #expect(try t.db.query("select name from u order by id", as: String.self) == ["before", "after"])
        }
    }

    @Test(arguments: Engine.available) func callsToAnotherConfigAreNotPartOfTheTransaction(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let other = try DbContext.inMemory(configName: "other")
            try other.start()
            defer { other.stop() }
            try DbSuiteKit.makeStudents(Db.use("other"), count: 0)
            try t.db.tx { db in
                try insert(db, "main-row")
                try insert(Db.use("other"), "other-row")
                return false
            }
            #expect(try names(t.db).isEmpty)
            #expect(try names(Db.use("other")) == ["other-row"])
        }
    }

    // MARK: Other threads

    @Test(arguments: Engine.available) func anotherThreadReadsTheCommittedStateDuringATransaction(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            let db = t.db
            var seenDuring: Result<[String?], any Error>?
            try t.db.tx { inner in
                try insert(inner, "uncommitted")
                try inner.update("delete from student where name = 's1'")
                #expect(try inner.queryInt("select count(*) from student") == 3)
                seenDuring = DbSuiteKit.onThread(timeout: 20) {
                    try db.query("select name from student order by id", as: String.self)
                }
                return true
            }
            switch seenDuring {
            case nil: Issue.record("a read on another thread during the transaction did not finish in 20 s (deadlock)")
            case .failure(let error)?: Issue.record("a read on another thread during the transaction threw: \(error)")
            case .success(let rows)?: #expect(rows == ["s1", "s2", "s3"])
            }
            // After the commit the same read sees the new state.
            let after = DbSuiteKit.onThread(timeout: 20) {
                try db.query("select name from student order by id", as: String.self)
            }
            #expect((try? after?.get()) == ["s2", "s3", "uncommitted"])
        }
    }

    @Test func anotherThreadsWriteWaitsForTheCommitThenSucceeds() throws {
        try withDatabase { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let db = t.db
            var writer: DbSuiteKit.Spawned<Int>?
            try t.db.tx { inner in
                try insert(inner, "inside")
                writer = DbSuiteKit.spawn {
                    try db.update("insert into student(name, age) values (?, ?)", "outside", 2)
                }
                // While this transaction holds the writer, the other write cannot complete.
                #expect(writer?.wait(timeout: 0.3) == nil)
                try insert(inner, "inside-2")
                return true
            }
            switch writer?.wait(timeout: 20) {
            case nil: Issue.record("the other thread's write did not finish within 20 s of the commit")
            case .failure(let error)?: Issue.record("the other thread's write failed: \(error)")
            case .success(let changed)?: #expect(changed == 1)
            }
            // It ran after the commit.
            #expect(try names(t.db) == ["inside", "inside-2", "outside"])
        }
    }

    @Test func anotherThreadsWriteFailsWithBusyAfterTheBusyTimeout() throws {
        var options = DbContext.Options()
        options.busyTimeout = 0.5
        try withDatabase(options: options) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let db = t.db
            var outcome: Result<Int, any Error>?
            try t.db.transaction { inner in
                try insert(inner, "inside")
                // This transaction stays open until the other thread has given up.
                outcome = DbSuiteKit.onThread(timeout: 20) {
                    try db.update("insert into student(name, age) values ('blocked', 1)")
                }
            }
            switch outcome {
            case nil:
                Issue.record("the other thread's write neither failed nor succeeded within 20 s")
            case .success?:
                Issue.record("the other thread's write succeeded during the transaction")
            case .failure(let error)?:
                let error = error as? DicRecordError
                #expect(error?.kind == .busy)
                #expect(error?.configName == "main")
                #expect(error?.message.contains("main") == true)
            }
            #expect(try names(t.db) == ["inside"])
        }
    }

    @Test(arguments: Engine.available) func transactionsOnTwoThreadsSerialize(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table counter(n integer)"))
            try t.db.update("insert into counter values (0)")
            let db = t.db
            let workers = (0..<4).map { _ in
                DbSuiteKit.spawn { () -> Int in
                    for _ in 0..<25 {
                        // PostgreSQL's serializable transactions may conflict (SQLite's never do): rerun.
                        try db.tx(retryOnConflict: 1000) { db in
                            let n = try db.queryInt("select n from counter") ?? -1000
                            try db.update("update counter set n = ?", n + 1)
                            return true
                        }
                    }
                    return 25
                }
            }
            for worker in workers {
                switch worker.wait(timeout: 60) {
                case nil: Issue.record("a worker did not finish in 60 s")
                case .failure(let error)?: Issue.record("a worker failed: \(error)")
                case .success?: break
                }
            }
            // Read-modify-write in each transaction: no lost update.
            #expect(try t.db.queryInt("select n from counter") == 100)
        }
    }

    // MARK: Statements

    @Test(arguments: Engine.available) func transactionStatementsAppearInTheLog(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            t.clearLog()
            try t.db.tx { db in
                try insert(db, "a")
                try db.tx { db in try insert(db, "b"); return true }
                try db.tx { db in try insert(db, "c"); return false }
                return true
            }
            let log = t.statements
            let insertSql = "insert into student(name, age) values (?, ?)"
            #expect(log.first == engine.begin)
            #expect(log.last == "COMMIT")
            let savepoints = log.filter { $0.hasPrefix("SAVEPOINT ") }
            #expect(savepoints.count == 2)
            guard savepoints.count == 2 else { return }
            let first = String(savepoints[0].dropFirst("SAVEPOINT ".count))
            let second = String(savepoints[1].dropFirst("SAVEPOINT ".count))
            // The committed nested tx releases its savepoint; the other rolls back to it.
            let expectedPrefix = [engine.begin, insertSql, "SAVEPOINT \(first)", insertSql, "RELEASE \(first)",
                                  "SAVEPOINT \(second)", insertSql, "ROLLBACK TO \(second)"]
            #expect(Array(log.prefix(expectedPrefix.count)) == expectedPrefix)
            // After ROLLBACK TO, the savepoint may be released (or left to the COMMIT), never released before.
            #expect(log.lastIndex(of: "RELEASE \(second)").map { $0 > expectedPrefix.count - 1 } ?? true)
            #expect(!log.contains("ROLLBACK"))
            #expect(try names(t.db) == ["a", "b"])

            t.clearLog()
            try t.db.tx { db in try insert(db, "d"); return false }
            #expect(t.statements == [engine.begin, insertSql, "ROLLBACK"])
            #expect(try names(t.db) == ["a", "b"])
        }
    }
}
