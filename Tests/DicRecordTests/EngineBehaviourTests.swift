import Foundation
import Testing
@testable import DicRecord
import DicRecordPostgres

/// The raw-SQL API's behaviours, pinned on every engine (`Engine.available`): the same calls,
/// the same results, on SQLite and on PostgreSQL.
@Suite struct EngineBehaviourTests {
    private func makeStudents(_ db: Db, _ engine: Engine) throws {
        try db.update("create table student (\(engine.idColumn), name text not null unique, age bigint, score double precision, photo \(engine.blobType))")
        try db.batch("insert into student (name, age, score) values (?, ?, ?)", [["Ann", 12, 90.5], ["Bob", 14, 71.0], ["Cid", 13, nil]])
    }

    @Test(arguments: Engine.available) func findFindFirstAndTypedQueries(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let older = try db.find("select name, age from student where age > ? order by age", 12)
            #expect(older.map { ($0["name"] as String?) } == ["Cid", "Bob"])
            #expect((older.first?["age"] as Int?) == 13)
            #expect(try db.findFirst("select * from student where name = ?", "Bob")?.get("score", as: Double.self) == 71.0)
            #expect(try db.findFirst("select * from student where name = ?", "Nobody") == nil)
            #expect(try db.queryInt("select count(*) from student") == 3)
            #expect(try db.queryFirst("select name from student where age = :age", arguments: ["age": 14], as: String.self) == "Bob")
            #expect(try db.queryDouble("select score from student where name = ?", "Cid") == nil)
            #expect(try db.query("select name from student order by name", as: String.self) == ["Ann", "Bob", "Cid"])
            #expect(throws: DicRecordError.self) { try db.query("select name, age from student", as: String.self) }
        }
    }

    @Test(arguments: Engine.available) func eachStreamsAndStops(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            var seen: [String] = []
            try db.each("select name from student order by name") { (record: Record) -> Bool in
                seen.append((record["name"] as String?) ?? "?")
                return seen.count < 2
            }
            #expect(seen == ["Ann", "Bob"])
        }
    }

    @Test(arguments: Engine.available) func recordsSaveUpdateDeleteAndFindById(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let dan = try Record(["name": "Dan", "age": 15, "photo": Data([0, 1, 2])])
            #expect(try db.save("student", dan))
            let id = try #require((dan["id"] as Int?))
            #expect(dan.modifiedColumns.isEmpty)
            let found = try #require(try db.findById("student", id))
            #expect((found["name"] as String?) == "Dan")
            #expect((found["photo"] as Data?) == Data([0, 1, 2]))
            found.age = 16
            #expect(try db.update("student", found))
            #expect(try db.queryInt("select age from student where id = ?", id) == 16)
            #expect(try db.deleteById("student", id))
            #expect(try db.findById("student", id) == nil)
        }
    }

    @Test(arguments: Engine.available) func nestedTransactionsRollBackOnlyTheirOwnWork(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let committed = try db.tx { db in
                try db.update("update student set age = age + 1 where name = ?", "Ann")
                let inner = try db.tx { db in
                    try db.update("update student set age = 99 where name = ?", "Bob")
                    return false
                }
                #expect(!inner)
                return true
            }
            #expect(committed)
            #expect(try db.queryInt("select age from student where name = ?", "Ann") == 13)
            #expect(try db.queryInt("select age from student where name = ?", "Bob") == 14)
            struct Boom: Error {}
            #expect(throws: Boom.self) {
                try db.transaction { db in
                    try db.update("update student set age = 0")
                    throw Boom()
                }
            }
            #expect(try db.queryInt("select sum(age) from student") == 40)
        }
    }

    @Test(arguments: Engine.available) func aSaveRolledBackGetsItsKeyAndFlagsBack(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let eve = try Record(["name": "Eve"])
            _ = try db.tx { db throws -> Bool in
                let saved = try db.save("student", eve)
                #expect(saved)
                #expect((eve["id"] as Int?) != nil)
                return false
            }
            #expect((eve["id"] as Int?) == nil)
            #expect(eve.modifiedColumns.map { $0.lowercased() }.contains("name"))
            #expect(try db.save("student", eve))
            #expect(try db.queryInt("select count(*) from student where name = ?", "Eve") == 1)
        }
    }

    @Test(arguments: Engine.available) func aBatchIsAllOrNothingAndNamesTheFailingItem(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let error = try #require(throws: DatabaseError.self) {
                try db.batch("insert into student (name) values (?)", [["Fay"], ["Ann"], ["Gus"]])
            }
            #expect(error.resultCode == 19)
            #expect(error.batchPosition?.index == 1)
            #expect(try db.queryInt("select count(*) from student") == 3)
            let records = [try Record(["name": "Hal"]), try Record(["name": "Bob"])]
            let saveError = try #require(throws: DatabaseError.self) { try db.batchSave("student", records) }
            #expect(saveError.batchPosition?.index == 1)
            #expect(try db.queryInt("select count(*) from student where name = 'Hal'") == 0)
            #expect(try db.batch([Sql("update student set age = 1 where name = ?", "Ann"), Sql("delete from student where name = ?", "Cid")]) == [1, 1])
        }
    }

    @Test(arguments: Engine.available) func paginateCountsAndPages(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let page = try db.paginate(2, 2, "select name", "from student where age > ? order by name", 0)
            #expect(page.totalRow == 3 && page.totalPage == 2)
            #expect(page.list.map { ($0["name"] as String?) } == ["Cid"])
            let beyond = try db.paginate(5, 2, "select name", "from student order by name")
            #expect(beyond.list.isEmpty && beyond.totalRow == 3)
            let grouped = try db.paginate(1, 10, "select age, count(*) as n", "from student group by age order by age")
            #expect(grouped.totalRow == 3)
            let first = try db.paginate(after: nil, 2, "select id, name", "from student", key: "id")
            #expect(first.list.map { ($0["name"] as String?) } == ["Ann", "Bob"])
            let second = try db.paginate(after: first.nextKey, 2, "select id, name", "from student", key: "id")
            #expect(second.list.map { ($0["name"] as String?) } == ["Cid"])
            #expect(second.nextKey == nil)
        }
    }

    @Test(arguments: Engine.available) func wrongArgumentCountIsAThrownError(engine: Engine) throws {
        try engine.run { db in
            try makeStudents(db, engine)
            let error = try #require(throws: DicRecordError.self) { try db.find("select * from student where age > ? and name = ?", 1) }
            #expect(error.kind == .argumentCount)
        }
    }

    @Test(arguments: Engine.available) func asyncCallsOutsideTransactionsRunOnBothEngines(engine: Engine) async throws {
        let db = try engine.startDetached()
        defer { db.stop() }
        try await db.db.update("create table t (n bigint)")
        try await db.db.batch("insert into t values (?)", [[1], [2], [3]])
        #expect(try await db.db.queryInt("select sum(n) from t") == 6)
        #expect(try await db.db.find("select n from t order by n").count == 3)
    }

    @Test(arguments: Engine.available) func onSqlSeesTheStatementsThatRan(engine: Engine) throws {
        let seen = SqlLog()
        var options = DbContext.Options()
        options.onSql = { seen.append($0.sql) }
        try engine.run(options: options) { db in
            try db.update("create table t (n bigint)")
            try db.update("insert into t values (?)", 1)
            _ = try db.find("select n from t where n = ?", 1)
        }
        #expect(seen.statements.contains("insert into t values (?)"))
        #expect(seen.statements.contains("select n from t where n = ?"))
    }
}

/// `each` on both engines: rows stream (PostgreSQL: through a cursor, a batch at a time), the
/// callback may write on the same config between rows, and stopping early or throwing ends the read.
@Suite struct EngineEachTests {
    @Test(arguments: Engine.available) func eachStreamsLargeResultsAndTheCallbackMayWrite(engine: Engine) throws {
        // One PostgreSQL connection: every call, and the cursor check at the end, use the same session.
        var options = DbContext.Options()
        options.poolSize = 1
        try engine.run(options: options) { db in
            try db.update(engine.ddl("create table n (i integer primary key, note text)"))
            try db.batch("insert into n (i) values (?)", (1...2_500).map { [$0] })
            try db.update(engine.ddl("create table log (i integer)"))
            var seen = 0, sum = 0
            try db.each("select i from n where i > ? order by i", 0) { (record: Record) -> Bool in
                seen += 1
                sum += (record["i"] as Int?) ?? 0
                // A write from the callback, outside a transaction: committed at once, as on SQLite.
                if seen % 1_000 == 0 { try db.update("insert into log (i) values (?)", seen) }
                return true
            }
            #expect(seen == 2_500)
            #expect(sum == 2_500 * 2_501 / 2)
            #expect(try db.query("select i from log order by i", as: Int.self) == [1_000, 2_000])
            // Stopping early, then the connection is free for the next call.
            var first: [Int] = []
            try db.each("select i from n order by i") { (record: Record) -> Bool in
                first.append((record["i"] as Int?) ?? 0)
                return first.count < 3
            }
            #expect(first == [1, 2, 3])
            // A throw from the callback ends the read and comes through.
            struct Stop: Error {}
            #expect(throws: Stop.self) {
                try db.each("select i from n") { (_: Record) -> Bool in throw Stop() }
            }
            // Inside a transaction: the callback's writes belong to it and roll back with it.
            _ = try db.tx { db in
                try db.each("select i from n where i <= 1500 order by i") { (record: Record) -> Bool in
                    if (record["i"] as Int?) == 1_200 { try db.update("insert into log (i) values (?)", 1_200) }
                    return true
                }
                #expect(try db.queryInt("select count(*) from log") == 3)
                return false
            }
            #expect(try db.queryInt("select count(*) from log") == 2)
            if engine == .postgres {
                // Every cursor was closed.
                #expect(try db.query("select name from pg_cursors where name like 'dicrecord%'", as: String.self) == [])
            }
        }
    }
}

/// `batch(sql, rows)` on both engines (PostgreSQL: pipelined, 256 statements per sync).
@Suite struct EngineBatchTests {
    @Test(arguments: Engine.available) func aLongBatchIsAtomicAndNamesTheItemThatFailed(engine: Engine) throws {
        try engine.run { db in
            try db.update(engine.ddl("create table b (i integer primary key, t text not null)"))
            let rows = (1...1_000).map { (n: Int) -> [DatabaseArgument] in [n, "row \(n)"] }
            #expect(try db.batch("insert into b (i, t) values (?, ?)", rows) == Array(repeating: 1, count: 1_000))
            #expect(try db.queryInt("select sum(i) from b") == 500_500)
            // Item 701 of 1,000 (in the third pipeline chunk) breaks the key: nothing of the batch stays.
            var clashing = (1_001...2_000).map { (n: Int) -> [DatabaseArgument] in [n, "row \(n)"] }
            clashing[700] = [5, "clash"]
            let error = try #require(throws: DatabaseError.self) { try db.batch("insert into b (i, t) values (?, ?)", clashing) }
            #expect(error.batchPosition?.index == 700)
            #expect(error.resultCode == 19)
            #expect(try db.queryInt("select count(*) from b") == 1_000)
            // A value the statement cannot take is refused, naming its item too; nothing of the batch stays.
            var bad = clashing
            bad[700] = [3_000, nil]
            let refused = try #require(throws: DatabaseError.self) { try db.batch("insert into b (i, t) values (?, ?)", bad) }
            #expect(refused.batchPosition?.index == 700)
            #expect(try db.queryInt("select count(*) from b") == 1_000)
            // Inside a transaction, a caught batch failure leaves the transaction usable.
            let committed = try db.tx { db in
                #expect(throws: DatabaseError.self) { try db.batch("insert into b (i, t) values (?, ?)", clashing) }
                try db.update("insert into b (i, t) values (?, ?)", 5_000, "after")
                return true
            }
            #expect(committed)
            #expect(try db.queryInt("select count(*) from b") == 1_001)
        }
    }
}
