import Foundation
import Testing
@testable import DicRecord

// Writing through `Db`: update(sql), save, update(table, record), delete, deleteById and the
// atomic batches.

@Suite("Db write")
struct DbWriteTests {
    // MARK: update(sql)

    @Test(arguments: Engine.available) func updateSqlReturnsRowsChanged(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 20)
            #expect(try t.db.update("update student set born = 1 where age <= ?", 5) == 5)
            #expect(try t.db.update("update student set born = 2 where age > 100") == 0)
            #expect(try t.db.update("delete from student where age > ?", 15) == 5)
            #expect(try t.db.update("insert into student(name, age) values (?, ?), (?, ?)", "a", 1, "b", 2) == 2)
            #expect(try t.db.queryInt("select count(*) from student") == 17)
            // The static shortcut writes to main.
            #expect(try Db.update("update student set born = 3 where name = ?", "a") == 1)
        }
    }

    @Test(arguments: Engine.available) func updateSqlThatChangesNoRowReturnsZero(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            #expect(try t.db.update("insert into student(name, age) values ('a', 1), ('b', 2)") == 2)
            // DDL, PRAGMA and SAVEPOINT statements change no row: 0, not the previous INSERT's count.
            #expect(try t.db.update(t.db.ddl("create index student_age on student(age)")) == 0)
            #expect(try t.db.update("drop index student_age") == 0)
            #expect(try t.db.update(t.db.ddl("create table other(x integer)")) == 0)
            #expect(try t.db.update(engine == .sqlite ? "pragma user_version = 3" : "set application_name = 'DicRecord tests'") == 0)
            // The same inside a batch.
            #expect(try t.db.batch([Sql("insert into other values (1)"), Sql(t.db.ddl("create table third(y integer)"))]) == [1, 0])
        }
    }

    @Test(arguments: Engine.available) func failingStatementThrowsADatabaseErrorNamingTheSql(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table u(id integer primary key, name text unique not null)"))
            try t.db.update("insert into u(name) values ('a')")
            let error = #expect(throws: DatabaseError.self) {
                try t.db.update("insert into u(name) values (?)", "a")
            }
            #expect(error?.resultCode == 19)          // SQLITE_CONSTRAINT
            #expect(error?.extendedResultCode == 2067) // SQLITE_CONSTRAINT_UNIQUE
            #expect(error?.sql == "insert into u(name) values (?)")
            #expect(error?.arguments == [.text("a")])
            #expect(error?.configName == "main")
            #expect(error?.description.contains("insert into u(name) values (?)") == true)
        }
    }

    // MARK: save

    @Test(arguments: Engine.available) func saveWritesTheGeneratedIdBackAndClearsModifiedFlags(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let record = try Record(["name": "张三", "age": 14])
            #expect(record.modifiedColumns == ["name", "age"])
            t.clearLog()
            #expect(try t.db.save("student", record))
            // PostgreSQL: the generated key comes back by RETURNING.
            #expect(t.statements == [#"INSERT INTO "student" ("name", "age") VALUES (?, ?)"# + (engine == .sqlite ? "" : " RETURNING *")])
            #expect(DbSuiteKit.int(record, "id") == 1)
            #expect(record.modifiedColumns.isEmpty)

            let second = try Record(["name": "李四", "age": 15])
            try t.db.save("student", second)
            #expect(DbSuiteKit.int(second, "id") == 2)

            let stored = try #require(try t.db.findById("student", 1))
            #expect(DbSuiteKit.string(stored, "name") == "张三")
            #expect(DbSuiteKit.int(stored, "age") == 14)

            // A record that carries its own key keeps it.
            let explicit = try Record(["id": 10, "name": "王五"])
            try t.db.save("student", explicit)
            #expect(DbSuiteKit.int(explicit, "id") == 10)
            #expect(try t.db.queryString("select name from student where id = 10") == "王五")

            // A NULL key is left out so that the database generates it, after the largest key
            // (PostgreSQL: DicRecord moved the identity sequence past the explicit 10).
            let nullKey = try Record(["id": nil, "name": "赵六"])
            try t.db.save("student", nullKey)
            #expect(DbSuiteKit.int(nullKey, "id") == 11)

            // A record with no column inserts default values.
            let empty = Record()
            try t.db.save("student", empty)
            #expect(DbSuiteKit.int(empty, "id") == 12)
            #expect(try t.db.queryInt("select count(*) from student") == 5)
        }
    }

    @Test(arguments: Engine.available) func saveWithAnotherKeyName(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table item(item_id integer primary key autoincrement, label text)"))
            let record = try Record(["label": "pen"])
            try t.db.save("item", record, primaryKey: "item_id")
            #expect(DbSuiteKit.int(record, "item_id") == 1)
            #expect(!record.hasColumn("id"))
        }
    }

    @Test(arguments: Engine.available) func saveFailureThrowsAndLeavesNoRow(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table u(id integer primary key, name text not null)"))
            let record = try Record(["name": nil])
            #expect(throws: DatabaseError.self) { try t.db.save("u", record) }
            #expect(try t.db.queryInt("select count(*) from u") == 0)
        }
    }

    // MARK: update(table, record)

    @Test(arguments: Engine.available) func updateRecordSendsOnlyModifiedColumns(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            let record = try #require(try t.db.findById("student", 2))
            #expect(record.modifiedColumns.isEmpty)
            record.name = "renamed"
            #expect(record.modifiedColumns == ["name"])
            t.clearLog()
            #expect(try t.db.update("student", record))
            #expect(t.statements == [#"UPDATE "student" SET "name" = ? WHERE "id" = ?"#])
            #expect(record.modifiedColumns.isEmpty)
            #expect(try t.db.queryString("select name from student where id = 2") == "renamed")
            // The other rows and columns are untouched.
            #expect(try t.db.query("select name from student order by id", as: String.self) == ["s1", "renamed", "s3"])
            #expect(try t.db.queryInt("select age from student where id = 2") == 2)

            // Two columns, in column order.
            record.born = 7.5
            record.age = 20
            t.clearLog()
            #expect(try t.db.update("student", record))
            #expect(t.statements == [#"UPDATE "student" SET "age" = ?, "born" = ? WHERE "id" = ?"#])
            #expect(try t.db.queryDouble("select born from student where id = 2") == 7.5)
        }
    }

    @Test(arguments: Engine.available) func updateRecordWithNothingModifiedReturnsFalse(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            let record = try #require(try t.db.findById("student", 1))
            t.clearLog()
            #expect(try !t.db.update("student", record))
            #expect(t.statements.isEmpty)
            // Reading a column (even a typed read that converts) does not modify it.
            _ = DbSuiteKit.string(record, "name")
            let _: Date? = record.born
            #expect(try !t.db.update("student", record))
            #expect(t.statements.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func updateRecordWithoutKeyIsAnError(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            let noKey = try Record(["name": "x"])
            let error = DbSuiteKit.expectError(.missingPrimaryKey) { try t.db.update("student", noKey) }
            #expect(error?.message.contains("id") == true)
            let nullKey = try Record(["id": nil, "name": "x"])
            DbSuiteKit.expectError(.missingPrimaryKey) { try t.db.update("student", nullKey) }
            DbSuiteKit.expectError(.missingPrimaryKey) { try t.db.delete("student", noKey) }
            // The row was not touched.
            #expect(try t.db.queryString("select name from student where id = 1") == "s1")
        }
    }

    @Test(arguments: Engine.available) func updateRecordOfAMissingRowReturnsFalse(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            let ghost = try Record(["id": 99, "name": "ghost"])
            #expect(try !t.db.update("student", ghost))
            #expect(try t.db.queryInt("select count(*) from student") == 1)
        }
    }

    // MARK: delete / deleteById

    @Test(arguments: Engine.available) func deleteAndDeleteByIdReportWhetherARowWent(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            let one = try #require(try t.db.findById("student", 1))
            #expect(try t.db.delete("student", one))
            #expect(try !t.db.delete("student", one))
            #expect(try t.db.deleteById("student", 2))
            #expect(try !t.db.deleteById("student", 2))
            #expect(try !t.db.deleteById("student", 42))
            #expect(try t.db.query("select id from student", as: Int.self) == [3])
            #expect(try Db.deleteById("student", 3))
            #expect(try t.db.findAll("student").isEmpty)
        }
    }

    @Test(arguments: Engine.available) func deleteByIdWithAnotherKey(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table country(code text primary key, name text)"))
            try t.db.update("insert into country values ('FR', 'France'), ('DE', 'Germany')")
            #expect(try t.db.deleteById("country", "FR", primaryKey: "code"))
            #expect(try !t.db.deleteById("country", "FR", primaryKey: "code"))
            #expect(try t.db.query("select code from country", as: String.self) == ["DE"])
        }
    }

    // MARK: Batches

    @Test(arguments: Engine.available) func batchOfSqlReturnsPerStatementCounts(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 4)
            let counts = try t.db.batch([
                Sql("insert into student(name, age) values (?, ?)", "a", 10),
                Sql("update student set born = 1 where age < ?", 3),
                Sql("delete from student where name = :name", arguments: ["name": "s4"]),
                Sql("update student set born = 2 where age > ?", arguments: [100]),
            ])
            #expect(counts == [1, 2, 1, 0])
            #expect(try t.db.queryInt("select count(*) from student") == 4)
            #expect(try t.db.queryInt("select count(*) from student where born = 1") == 2)
            #expect(try t.db.batch([Sql]()) == [])
        }
    }

    @Test(arguments: Engine.available) func batchOfArgumentRowsReturnsPerRowCounts(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            let counts = try t.db.batch("update student set born = ? where age <= ?", [[1.5, 2], [2.5, 0], [3.5, 5]])
            #expect(counts == [2, 0, 5])
            #expect(try t.db.queryInt("select count(*) from student where born = 3.5") == 5)
            #expect(try t.db.batch("insert into student(name) values (?)", []) == [])
            // A row with the wrong number of arguments is an error and nothing is kept.
            DbSuiteKit.expectError(.argumentCount) {
                try t.db.batch("insert into student(name, age) values (?, ?)", [["x", 1], ["y"]])
            }
            #expect(try t.db.queryInt("select count(*) from student") == 5)
        }
    }

    @Test(arguments: Engine.available) func batchSaveWritesIdsBack(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            let records = try (1...5).map { try Record(["name": "new\($0)", "age": 100 + $0]) }
            let counts = try t.db.batchSave("student", records)
            #expect(counts == [1, 1, 1, 1, 1])
            #expect(records.map { DbSuiteKit.int($0, "id") } == [3, 4, 5, 6, 7])
            #expect(records.allSatisfy { $0.modifiedColumns.isEmpty })
            #expect(try t.db.queryString("select name from student where id = 6") == "new4")
            #expect(try t.db.batchSave("student", []) == [])
        }
    }

    /// On PostgreSQL alike records go to the server together (pipeline mode, 256 a sync): each
    /// generated key must still come back to its own record, across syncs and across the runs
    /// that a record with other columns breaks.
    @Test(arguments: Engine.available) func batchSaveOfManyRecordsWritesEachKeyBackToItsRecord(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            let records = try (1...600).map { n in
                n == 300 || n == 600 ? try Record(["name": "other\(n)"]) : try Record(["name": "new\(n)", "age": n])
            }
            #expect(try t.db.batchSave("student", records) == Array(repeating: 1, count: 600))
            #expect(records.map { DbSuiteKit.int($0, "id") } == Array(3...602))
            #expect(records.allSatisfy { $0.modifiedColumns.isEmpty })
            #expect(try t.db.queryString("select name from student where id = 302") == "other300")
            #expect(try t.db.queryInt("select age from student where id = 301") == 299)
            #expect(try t.db.queryInt("select sum(age) from student where id > 2") == (1...599).filter { $0 != 300 }.reduce(0, +))
        }
    }

    /// A record listed twice: its second insert carries the key the first wrote back and fails
    /// on it, on both engines (alike records are otherwise sent together on PostgreSQL).
    @Test(arguments: Engine.available) func batchSaveOfARecordListedTwiceFailsOnItsKey(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            let twice = try Record(["name": "twice"])
            let records = [try Record(["name": "a"]), twice, try Record(["name": "b"]), twice]
            let error = try #require(throws: DatabaseError.self) { try t.db.batchSave("student", records) }
            #expect(error.batchPosition == BatchPosition(index: 3, count: 4))
            #expect(try t.db.queryInt("select count(*) from student") == 2)
        }
    }

    /// A record that fails in the middle of a run sent together: the error names it, nothing is
    /// written, and no record gets a key.
    @Test(arguments: Engine.available) func batchSaveFailingInsideARunNamesTheRecordAndWritesNothing(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            let explicit = try (0..<600).map { n in try Record(["id": n == 400 ? 2 : 10_000 + n, "name": "late\(n)"]) }
            let clash = try #require(throws: DatabaseError.self) { try t.db.batchSave("student", explicit) }
            #expect(clash.batchPosition == BatchPosition(index: 400, count: 600))
            #expect(clash.arguments.first == .integer(2))
            #expect(try t.db.queryInt("select count(*) from student") == 2)

            try t.db.update(t.db.ddl("create table tagged(id integer primary key autoincrement, tag text not null)"))
            let generated = try (0..<600).map { n in n == 300 ? try Record(["tag": nil]) : try Record(["tag": "t\(n)"]) }
            let missing = try #require(throws: DatabaseError.self) { try t.db.batchSave("tagged", generated) }
            #expect(missing.batchPosition == BatchPosition(index: 300, count: 600))
            #expect(try t.db.queryInt("select count(*) from tagged") == 0)
            #expect(generated.allSatisfy { $0.storedValue("id") == nil })
        }
    }

    @Test(arguments: Engine.available) func batchUpdateUpdatesModifiedColumns(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 4)
            let records = try t.db.find("select * from student order by id")
            records[0].age = 40
            records[2].name = "third"
            // records[1] and records[3] are unmodified.
            t.clearLog()
            let counts = try t.db.batchUpdate("student", records)
            #expect(counts == [1, 0, 1, 0])
            #expect(t.statements.filter { $0.hasPrefix("UPDATE") } == [
                #"UPDATE "student" SET "age" = ? WHERE "id" = ?"#,
                #"UPDATE "student" SET "name" = ? WHERE "id" = ?"#,
            ])
            #expect(try t.db.query("select age from student order by id", as: Int.self) == [40, 2, 3, 4])
            #expect(try t.db.query("select name from student order by id", as: String.self) == ["s1", "s2", "third", "s4"])
        }
    }

    /// `(id, name)` pairs of table u, to compare the whole table before and after.
    private func snapshot(_ db: Db) throws -> [String] {
        try db.find("select id, name from u order by id").map { "\(DbSuiteKit.int($0, "id") ?? -1):\(DbSuiteKit.string($0, "name") ?? "nil")" }
    }

    private func makeUnique(_ db: Db) throws {
        try db.update(db.ddl("create table u(id integer primary key autoincrement, name text unique not null)"))
        try db.batch("insert into u(name) values (?)", (1...10).map { ["existing\($0)"] })
    }

    @Test(arguments: Engine.available) func batchOfArgumentRowsIsAtomic(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try makeUnique(t.db)
            let before = try snapshot(t.db)
            // Row 50 of 100 collides with an existing name.
            let rows: [[DatabaseArgument]] = (1...100).map { $0 == 50 ? ["existing3"] : ["new\($0)"] }
            let error = #expect(throws: DatabaseError.self) {
                try t.db.batch("insert into u(name) values (?)", rows)
            }
            #expect(error?.resultCode == 19)
            #expect(error?.sql == "insert into u(name) values (?)")
            #expect(error?.arguments == [.text("existing3")])
            #expect(try snapshot(t.db) == before)
            // The table is usable and the batch can run once fixed.
            let fixed: [[DatabaseArgument]] = (1...100).map { ["new\($0)"] }
            #expect(try t.db.batch("insert into u(name) values (?)", fixed).count == 100)
            #expect(try t.db.queryInt("select count(*) from u") == 110)
        }
    }

    @Test(arguments: Engine.available) func batchOfSqlIsAtomicAndNamesTheFailingStatement(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try makeUnique(t.db)
            let before = try snapshot(t.db)
            var statements = (1...100).map { Sql("insert into u(name) values (?)", "new\($0)") }
            statements.insert(Sql("update u set name = 'existing1' where name = ?", "existing2"), at: 50)
            statements.insert(Sql("delete from u where name = ?", "existing5"), at: 20)
            let error = #expect(throws: DatabaseError.self) { try t.db.batch(statements) }
            #expect(error?.sql == "update u set name = 'existing1' where name = ?")
            #expect(error?.description.contains("update u set name = 'existing1'") == true)
            #expect(try snapshot(t.db) == before)
        }
    }

    @Test(arguments: Engine.available) func batchSaveIsAtomic(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try makeUnique(t.db)
            let before = try snapshot(t.db)
            let records = try (1...100).map { try Record(["name": $0 == 60 ? "existing7" : "saved\($0)"]) }
            let error = #expect(throws: DatabaseError.self) { try t.db.batchSave("u", records) }
            #expect(error?.sql?.hasPrefix(#"INSERT INTO "u""#) == true)
            #expect(error?.arguments == [.text("existing7")])
            #expect(try snapshot(t.db) == before)
        }
    }

    @Test(arguments: Engine.available) func batchUpdateIsAtomic(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try makeUnique(t.db)
            let before = try snapshot(t.db)
            let records = try t.db.find("select * from u order by id")
            for (i, record) in records.enumerated() {
                record.name = i == 5 ? "existing10" : "changed\(i)"  // id 10 still holds "existing10" then
            }
            let error = #expect(throws: DatabaseError.self) { try t.db.batchUpdate("u", records) }
            #expect(error?.sql == #"UPDATE "u" SET "name" = ? WHERE "id" = ?"#)
            #expect(try snapshot(t.db) == before)
        }
    }

    @Test(arguments: Engine.available) func batchOfThreeThousandInserts(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            let rows: [[DatabaseArgument]] = (0..<3000).map { ["张\($0)", $0 % 100] }
            t.clearLog()
            let counts = try t.db.batch("insert into student(name, age) values (?, ?)", rows)
            #expect(counts.count == 3000)
            #expect(counts.allSatisfy { $0 == 1 })
            #expect(try t.db.queryInt("select count(*) from student") == 3000)
            #expect(try t.db.queryString("select name from student where id = 3000") == "张2999")
            #expect(try t.db.queryInt("select sum(age) from student") == 30 * (0..<100).reduce(0, +))
            // One transaction around the lot.
            #expect(t.statements.filter { $0 == engine.begin }.count == 1)
            #expect(t.statements.filter { $0 == "COMMIT" }.count == 1)
        }
    }

    @Test func writesToAReadonlyContextAreRefused() throws {
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        let path = folder.appendingPathComponent("ro.sqlite").path
        try DbContext.withIsolatedRegistry {
            let writer = try DbContext(path: path, configName: "rw")
            try writer.start()
            try Db.use("rw").update(Db.use("rw").ddl("create table t(x)"))
            try Db.use("rw").update("insert into t values (1)")
            writer.stop()

            var options = DbContext.Options()
            options.readonly = true
            let reader = try DbContext(path: path, configName: "ro", options: options)
            try reader.start()
            defer { reader.stop() }
            #expect(try Db.use("ro").queryInt("select x from t") == 1)
            DbSuiteKit.expectError(.readonly) { try Db.use("ro").update("insert into t values (2)") }
        }
    }
}
