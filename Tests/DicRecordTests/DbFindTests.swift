import CSQLite
import Foundation
import Testing
@testable import DicRecord

// Reading through `Db`: find, findFirst, findAll, findById(s), each, single-column queries,
// placeholders and argument forms, quoted identifiers and the statement cache.
//
// `DbSuiteKit` at the end of this file holds the helpers shared by DbFindTests, DbWriteTests,
// TransactionTests, PaginateTests, ContextRegistryTests and PSDbCompatibilityTests.

@Suite("Db find")
struct DbFindTests {
    // MARK: find / findFirst / findAll

    @Test(arguments: Engine.available) func findReturnsAllMatchingRowsInOrder(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            let rows = try t.db.find("select * from student where age > ? order by id", 2)
            #expect(rows.count == 3)
            #expect(rows.map { DbSuiteKit.string($0, "name") } == ["s3", "s4", "s5"])
            #expect(rows.map { DbSuiteKit.int($0, "age") } == [3, 4, 5])
            #expect(rows[0].columnNames == ["id", "name", "age", "born"])
            #expect(try t.db.find("select * from student where 1 = 0").isEmpty)
        }
    }

    @Test(arguments: Engine.available) func findFirstStepsOneRowWithoutLimit(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            t.clearLog()
            let first = try #require(try t.db.findFirst("select * from student order by id"))
            #expect(DbSuiteKit.int(first, "id") == 1)
            #expect(DbSuiteKit.string(first, "name") == "s1")
            // The library adds no LIMIT: the exact statement ran.
            #expect(DbSuiteKit.userStatements(t) == ["select * from student order by id"])

            let last = try #require(try t.db.findFirst("select * from student order by id desc"))
            #expect(DbSuiteKit.int(last, "id") == 3)
            #expect(try t.db.findFirst("select * from student where 1 = 0") == nil)
            let withArgs = try #require(try t.db.findFirst("select * from student where age >= ? order by age", 2))
            #expect(DbSuiteKit.int(withArgs, "age") == 2)
        }
    }

    @Test func findFirstDoesNotRunTheWholeQuery() throws {
        // Stepping one row only: a query whose second row would fail still returns the first.
        try withDatabase { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            // Row 2 computes abs(-9223372036854775808): "integer overflow".
            let sql = "select id, abs(id - 2 - 9223372036854775807 - 1) as x from student order by id"
            let first = try #require(try t.db.findFirst(sql))
            #expect(DbSuiteKit.int(first, "id") == 1)
            let error = #expect(throws: DatabaseError.self) { _ = try t.db.find(sql) }
            #expect(error?.message.contains("overflow") == true)
        }
    }

    @Test(arguments: Engine.available) func findAllReadsEveryRowOfTheTable(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 4)
            t.clearLog()
            let rows = try t.db.findAll("student")
            #expect(rows.count == 4)
            #expect(Set(rows.compactMap { DbSuiteKit.int($0, "id") }) == [1, 2, 3, 4])
            #expect(DbSuiteKit.userStatements(t) == [#"SELECT * FROM "student""#])
            try t.db.update(t.db.ddl("create table empty_table(id integer primary key)"))
            #expect(try t.db.findAll("empty_table").isEmpty)
            // The static shortcut reads main.
            #expect(try Db.findAll("student").count == 4)
        }
    }

    // MARK: findById / findByIds

    @Test(arguments: Engine.available) func findByIdFindsTheRowOrNil(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            let two = try #require(try t.db.findById("student", 2))
            #expect(DbSuiteKit.string(two, "name") == "s2")
            #expect(two.columnNames == ["id", "name", "age", "born"])
            #expect(try t.db.findById("student", 99) == nil)
            // Any integer type and a numeric string (SQLite's affinity) find the same row.
            #expect(try t.db.findById("student", Int64(3)).map { DbSuiteKit.string($0, "name") } == "s3")
            #expect(try Db.findById("student", 1).map { DbSuiteKit.string($0, "name") } == "s1")
        }
    }

    @Test(arguments: Engine.available) func findByIdWithAnotherPrimaryKeyAndColumns(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table country(code text primary key, name text, population integer)"))
            try t.db.update("insert into country values ('FR', 'France', 68), ('DE', 'Germany', 84)")
            let de = try #require(try t.db.findById("country", "DE", primaryKey: "code"))
            #expect(DbSuiteKit.string(de, "name") == "Germany")
            #expect(DbSuiteKit.int(de, "population") == 84)
            #expect(try t.db.findById("country", "XX", primaryKey: "code") == nil)

            let partial = try #require(try t.db.findById("country", "FR", primaryKey: "code", columns: "code, name"))
            #expect(partial.columnNames == ["code", "name"])
            #expect(partial.columnCount == 2)
            #expect(!partial.hasColumn("population"))
            #expect(DbSuiteKit.string(partial, "name") == "France")
        }
    }

    @Test(arguments: Engine.available) func findByIdsWithACompositeKey(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("""
                create table enrollment(student_id integer, course_id integer, grade text,
                                        primary key (student_id, course_id))
                """))
            try t.db.batch("insert into enrollment values (?, ?, ?)", [[1, 7, "A"], [1, 8, "B"], [2, 7, "C"]])
            t.clearLog()
            let row = try #require(try t.db.findByIds("enrollment", primaryKey: "student_id, course_id", 1, 8))
            #expect(DbSuiteKit.string(row, "grade") == "B")
            #expect(DbSuiteKit.userStatements(t) == [#"SELECT * FROM "enrollment" WHERE "student_id" = ? AND "course_id" = ? LIMIT 1"#])
            #expect(try t.db.findByIds("enrollment", primaryKey: "student_id,course_id", 2, 7).map { DbSuiteKit.string($0, "grade") } == "C")
            #expect(try t.db.findByIds("enrollment", primaryKey: "student_id, course_id", 2, 8) == nil)
            // Too few key values is an error, never a silent NULL.
            #expect(throws: DicRecordError.self) {
                _ = try t.db.findByIds("enrollment", primaryKey: "student_id, course_id", 1)
            }
        }
    }

    // MARK: each

    @Test(arguments: Engine.available) func eachStreamsEveryRow(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 50)
            var count = 0
            var ageSum = 0
            var names: [String] = []
            try t.db.each("select * from student where age > ? order by id", 10) { record in
                count += 1
                ageSum += DbSuiteKit.int(record, "age") ?? -1000
                if names.count < 2 { names.append(DbSuiteKit.string(record, "name") ?? "?") }
                return true
            }
            #expect(count == 40)
            #expect(ageSum == (11...50).reduce(0, +))
            #expect(names == ["s11", "s12"])
        }
    }

    @Test(arguments: Engine.available) func eachStopsWhenTheCallbackReturnsFalse(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 20)
            var seen: [Int] = []
            try t.db.each("select id from student order by id") { record in
                seen.append(DbSuiteKit.int(record, "id") ?? -1)
                return seen.count < 3
            }
            #expect(seen == [1, 2, 3])

            // Array and dictionary forms.
            var arrayCount = 0
            try t.db.each("select * from student where age <= ?", arguments: [5]) { _ in arrayCount += 1; return true }
            #expect(arrayCount == 5)
            var namedCount = 0
            try t.db.each("select * from student where age between :low and :high", arguments: ["low": 3, "high": 6]) { _ in
                namedCount += 1
                return true
            }
            #expect(namedCount == 4)
            // No row: the callback never runs.
            try t.db.each("select * from student where 1 = 0") { _ in
                Issue.record("callback ran for an empty result")
                return true
            }
        }
    }

    @Test(arguments: Engine.available) func eachRecordsKeptByTheCallbackStayIntact(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            var kept: [Record] = []
            try t.db.each("select id, name from student order by id") { record in
                kept.append(record)
                return true
            }
            #expect(kept.map { DbSuiteKit.string($0, "name") } == ["s1", "s2", "s3", "s4", "s5"])
            #expect(kept.map { DbSuiteKit.int($0, "id") } == [1, 2, 3, 4, 5])
        }
    }

    @Test(arguments: [false, true])
    func eachCallbackCanReadAndWriteTheSameConfig(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 10)
            let db = t.db
            // Run on another thread with a watchdog, so that a deadlock fails instead of hanging.
            let outcome = DbSuiteKit.onThread(timeout: 20) { () -> [String] in
                var log: [String] = []
                try db.each("select id, age from student order by id") { record in
                    let id = DbSuiteKit.int(record, "id") ?? -1
                    // A read and a write on the same config from inside the callback.
                    let same = try db.find("select * from student where id = ?", id)
                    let changed = try db.update("update student set name = ? where id = ?", "each-\(id)", id)
                    let total = try db.queryInt("select count(*) from student") ?? -1
                    log.append("\(id):\(same.count):\(changed):\(total)")
                    return true
                }
                return log
            }
            switch outcome {
            case nil:
                Issue.record("each with a reentrant find/update deadlocked (no answer in 20 s)")
            case .failure(let error)?:
                Issue.record("each with a reentrant find/update threw: \(error)")
            case .success(let log)?:
                #expect(log == (1...10).map { "\($0):1:1:10" })
                let names = try t.db.query("select name from student order by id", as: String.self)
                #expect(names == (1...10).map { "each-\($0)" })
            }
        }
    }

    @Test(arguments: [false, true])
    func eachCallbackCanRunTheSameSqlAgain(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 4)
            let sql = "select * from student order by id"
            var innerCounts: [Int] = []
            var outer = 0
            try t.db.each(sql) { _ in
                outer += 1
                innerCounts.append(try t.db.find(sql).count)
                var nested = 0
                try t.db.each(sql) { _ in nested += 1; return true }
                innerCounts.append(nested)
                return true
            }
            #expect(outer == 4)
            #expect(innerCounts == Array(repeating: 4, count: 8))
            // The cached statement is usable afterwards.
            #expect(try t.db.find(sql).count == 4)
        }
    }

    @Test(arguments: [false, true])
    func eachCallbackErrorsPropagateAndLeaveTheConfigUsable(inMemory: Bool) throws {
        struct Stop: Error, Equatable {}
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            var seen = 0
            #expect(throws: Stop()) {
                try t.db.each("select * from student order by id") { _ in
                    seen += 1
                    if seen == 2 { throw Stop() }
                    return true
                }
            }
            #expect(seen == 2)
            var again = 0
            try t.db.each("select * from student order by id") { _ in again += 1; return true }
            #expect(again == 5)
            #expect(try t.db.update("delete from student where id = 1") == 1)
        }
    }

    @Test(arguments: [false, true])
    func paginateInsideAnEachCallbackLeavesNoTransactionOpen(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 20)
            var totals: [Int] = []
            try t.db.each("select id from student order by id limit 2") { _ in
                totals.append(try t.db.paginate(1, 5, "select *", "from student").totalRow)
                return true
            }
            #expect(totals == [20, 20])
            // Later reads see later writes: no connection was left inside a read transaction.
            try t.db.update("delete from student where id > 10")
            #expect(try t.db.queryInt("select count(*) from student") == 10)
            #expect(try t.db.paginate(1, 5, "select *", "from student").totalRow == 10)
            #expect(try t.db.find("select * from student").count == 10)
        }
    }

    @Test(arguments: Engine.available) func queriesThatWriteRunOnTheWriter(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            let inserted = try #require(try t.db.findFirst("insert into student(name, age) values ('r', 9) returning id, name"))
            #expect(DbSuiteKit.int(inserted, "id") == 2)
            #expect(try t.db.queryInt("update student set age = 10 where name = 'r' returning age") == 10)
            #expect(try t.db.queryInt("select count(*) from student") == 2)
        }
    }

    @Test(arguments: [false, true])
    func aWithClauseThatInsertsRunsOnTheWriter(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            let fromCte = try t.db.find("with v(n) as (select 7) insert into student(name, age) select 'cte', n from v returning id")
            #expect(fromCte.count == 1)
            #expect(fromCte.first.flatMap { DbSuiteKit.int($0, "id") } == 3)
            #expect(try t.db.queryInt("select count(*) from student") == 3)
        }
    }

    // MARK: Single-column queries

    @Test func typedSingleColumnQueries() throws {
        try withDatabase { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            #expect(try t.db.queryInt("select count(*) from student") == 3)
            #expect(try t.db.queryInt64("select max(age) * 1000000000000 from student") == 3_000_000_000_000)
            #expect(try t.db.queryString("select name from student where id = ?", 2) == "s2")
            #expect(try t.db.queryDouble("select avg(age) from student") == 2.0)
            #expect(try t.db.queryBool("select count(*) > 2 from student") == true)
            #expect(try t.db.queryBool("select count(*) > 5 from student") == false)
            #expect(try t.db.queryData("select x'00ff10'") == Data([0x00, 0xff, 0x10]))
            let date = Date(timeIntervalSince1970: 1_020_873_600.5)
            #expect(try t.db.queryDate("select ?", date) == date)
            #expect(try t.db.queryDate("select '2002-05-08 16:00:00'") == Date(timeIntervalSince1970: 1_020_873_600))

            #expect(try t.db.query("select name from student order by id", as: String.self) == ["s1", "s2", "s3"])
            #expect(try t.db.query("select age from student where age > ? order by age", 1, as: Int.self) == [2, 3])
            #expect(try t.db.query("select age from student where 1 = 0", as: Int.self).isEmpty)
            #expect(try t.db.queryFirst("select name from student order by id desc", as: String.self) == "s3")
            #expect(try t.db.queryFirst("select name from student where id = ?", 42, as: String.self) == nil)
            #expect(try t.db.queryFirst("select age from student where name = :n", arguments: ["n": "s2"], as: Int.self) == 2)
            #expect(try t.db.query("select age from student where age < ?", arguments: [3], as: Int.self).count == 2)
            // Static shortcuts.
            #expect(try Db.queryInt("select count(*) from student") == 3)
        }
    }

    @Test(arguments: Engine.available) func nullGivesNilInSingleColumnQueries(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            #expect(try t.db.queryInt("select null") == nil)
            #expect(try t.db.queryString("select born from student where id = 1") == nil)
            #expect(try t.db.queryDate("select born from student where id = 1") == nil)
            #expect(try t.db.queryFirst("select null", as: Int.self) == nil)
            #expect(try t.db.queryInt("select max(age) from student where 1 = 0") == nil)
            try t.db.update("update student set born = 5 where id = 2")
            let borns = try t.db.query("select born from student order by id", as: Double.self)
            #expect(borns.count == 3)
            #expect(borns[0] == nil)
            #expect(borns[1] == 5.0)
            #expect(borns[2] == nil)
        }
    }

    @Test(arguments: Engine.available) func moreThanOneColumnIsAnError(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            DbSuiteKit.expectError(.multipleColumns) { _ = try t.db.queryInt("select id, age from student") }
            DbSuiteKit.expectError(.multipleColumns) { _ = try t.db.queryFirst("select * from student", as: String.self) }
            DbSuiteKit.expectError(.multipleColumns) { _ = try t.db.query("select 1, 2", as: Int.self) }
            // Even when no row comes back.
            DbSuiteKit.expectError(.multipleColumns) { _ = try t.db.queryString("select id, name from student where 1 = 0") }
        }
    }

    // MARK: Placeholders and argument forms

    @Test(arguments: Engine.available) func numberedPlaceholdersBindByNumber(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            #expect(try t.db.queryString("select ?2 || '-' || ?1", "a", "b") == "b-a")
            #expect(try t.db.queryString("select ?1 || ?1 || ?2", "x", "y") == "xxy")
            try DbSuiteKit.makeStudents(t.db, count: 5)
            let rows = try t.db.find("select * from student where age between ?2 and ?1 order by id", 4, 2)
            #expect(rows.compactMap { DbSuiteKit.int($0, "age") } == [2, 3, 4])
        }
    }

    @Test(arguments: [":", "@", "$"])
    func namedPlaceholdersBindFromADictionary(prefix: String) throws {
        try withDatabase { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            let sql = "select name from student where age >= \(prefix)low and age <= \(prefix)high order by age"
            #expect(try t.db.query(sql, arguments: ["low": 2, "high": 3], as: String.self) == ["s2", "s3"])
            let rows = try t.db.find("select * from student where name = \(prefix)name", arguments: ["name": "s4"])
            #expect(rows.count == 1)
            #expect(rows.first.flatMap { DbSuiteKit.int($0, "age") } == 4)
            // The same name used twice binds once.
            #expect(try t.db.queryFirst("select \(prefix)v + \(prefix)v", arguments: ["v": 21], as: Int.self) == 42)
            // Missing and unused names are errors.
            DbSuiteKit.expectError(.argumentCount) {
                _ = try t.db.find("select * from student where name = \(prefix)name", arguments: ["other": "s4"])
            }
            DbSuiteKit.expectError(.argumentCount) {
                _ = try t.db.find("select * from student where name = \(prefix)name", arguments: ["name": "s4", "extra": 1])
            }
        }
    }

    @Test(arguments: Engine.available) func variadicArrayAndDictionaryFormsAgree(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 10)
            let variadic = try t.db.find("select * from student where age > ? and age < ? order by id", 3, 7)
            let array = try t.db.find("select * from student where age > ? and age < ? order by id", arguments: [3, 7])
            let named = try t.db.find("select * from student where age > :a and age < :b order by id", arguments: ["a": 3, "b": 7])
            #expect(variadic.count == 3)
            #expect(variadic == array)
            #expect(variadic == named)
            #expect(try t.db.findFirst("select * from student where age = ?", arguments: [5]).map { DbSuiteKit.string($0, "name") } == "s5")
            #expect(try t.db.findFirst("select * from student where age = :age", arguments: ["age": 6]).map { DbSuiteKit.string($0, "name") } == "s6")
            #expect(try t.db.update("update student set name = ? where age = ?", arguments: ["x", 1]) == 1)
            #expect(try t.db.update("update student set name = :n where age = :a", arguments: ["n": "y", "a": 2]) == 1)
            #expect(try t.db.query("select name from student where age <= 2 order by age", as: String.self) == ["x", "y"])
        }
    }

    @Test(arguments: Engine.available) func statementArgumentsTakeLiteralsAndWrappedValues(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            // Empty literals: no placeholder, no argument.
            #expect(try t.db.find("select * from student", arguments: []).count == 5)
            #expect(try t.db.find("select * from student", arguments: [:]).count == 5)
            // A variable of array or dictionary type is wrapped; ?NNN and :name bind as with literals.
            let positional: [DatabaseArgument] = [4, 2]
            let named: [String: DatabaseArgument] = ["low": 2, "high": 4]
            let byNumber = try t.db.query("select name from student where age between ?2 and ?1 order by age",
                                          arguments: StatementArguments(positional), as: String.self)
            let byName = try t.db.query("select name from student where age between :low and :high order by age",
                                        arguments: StatementArguments(named), as: String.self)
            #expect(byNumber == ["s2", "s3", "s4"])
            #expect(byName == byNumber)
            let stored: StatementArguments = ["low": 2, "high": 4]
            #expect(try t.db.query("select name from student where age between :low and :high order by age",
                                   arguments: stored, as: String.self) == byNumber)
            DbSuiteKit.expectError(.argumentCount) { _ = try t.db.find("select * from student where id = ?", arguments: []) }
            DbSuiteKit.expectError(.argumentCount) { _ = try t.db.find("select * from student where id = :id", arguments: [:]) }
        }
    }

    @Test func nilArgumentBindsNull() throws {
        try withDatabase { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            try t.db.update("insert into student(name, age) values (?, ?)", "nobody", nil)
            let noAge: Int? = nil
            try t.db.update("insert into student(name, age) values (?, ?)", arguments: ["optional", noAge])
            try t.db.update("insert into student(name, age) values (:n, :a)", arguments: ["n": "named", "a": nil])
            #expect(try t.db.queryInt("select count(*) from student where age is null") == 3)
            #expect(try t.db.queryInt("select ? is null", nil) == 1)
            #expect(try t.db.queryInt("select typeof(?) = 'null'", noAge) == 1)
        }
    }

    @Test(arguments: Engine.available) func wrongArgumentCountIsAnError(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            DbSuiteKit.expectError(.argumentCount) { _ = try t.db.find("select * from student where id = ? and age = ?", 1) }
            DbSuiteKit.expectError(.argumentCount) { _ = try t.db.find("select * from student where id = ?", 1, 2) }
            DbSuiteKit.expectError(.argumentCount) { _ = try t.db.find("select * from student where id = ?") }
            DbSuiteKit.expectError(.argumentCount) { _ = try t.db.update("update student set age = ?") }
        }
    }

    @Test(arguments: Engine.available) func unsupportedArgumentTypeIsAnError(engine: Engine) throws {
        struct NoConverter: Sendable { let x = 1 }
        try withDatabase(engine: engine) { t throws in
            let error = DbSuiteKit.expectError(.unsupportedArgument) { _ = try t.db.queryInt("select ?", NoConverter()) }
            #expect(error?.message.contains("NoConverter") == true)
        }
    }

    // MARK: Identifiers that are keywords

    @Test(arguments: Engine.available) func keywordTableAndColumnNamesWork(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl(#"create table "order"(id integer primary key autoincrement, "index" integer, "select" text)"#))
            let record = try Record(["index": 5, "select": "first"])
            #expect(try t.db.save("order", record))
            let id = try #require(DbSuiteKit.int(record, "id"))
            #expect(id == 1)

            let found = try #require(try t.db.findById("order", id))
            #expect(DbSuiteKit.int(found, "index") == 5)
            #expect(DbSuiteKit.string(found, "select") == "first")

            found["index"] = 6
            #expect(try t.db.update("order", found))
            #expect(try t.db.queryInt(#"select "index" from "order" where id = ?"#, id) == 6)
            #expect(try t.db.findAll("order").count == 1)

            #expect(try t.db.delete("order", found))
            #expect(try t.db.findById("order", id) == nil)
            let again = try Record(["index": 7])
            try t.db.save("order", again)
            let againId = try #require(DbSuiteKit.int(again, "id"))
            #expect(againId == 2)
            #expect(try t.db.deleteById("order", againId))
            #expect(try !t.db.deleteById("order", againId))
            #expect(try t.db.findAll("order").isEmpty)
        }
    }

    @Test(arguments: Engine.available) func keywordCompositeKeyWorks(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(#"create table "group"("from" integer, "to" integer, "where" text, primary key ("from", "to"))"#)
            try t.db.save("group", try Record(["from": 1, "to": 2, "where": "here"]), primaryKey: "from, to")
            let row = try #require(try t.db.findByIds("group", primaryKey: "from, to", 1, 2))
            #expect(DbSuiteKit.string(row, "where") == "here")
            row["where"] = "there"
            #expect(try t.db.update("group", row, primaryKey: "from, to"))
            #expect(try t.db.queryString(#"select "where" from "group""#) == "there")
            #expect(try t.db.deleteByIds("group", primaryKey: "from, to", 1, 2))
            #expect(try t.db.queryInt(#"select count(*) from "group""#) == 0)
        }
    }

    // MARK: Statement cache

    @Test func repeatedSqlIsPreparedOnce() throws {
        try withDatabase { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 10)
            let sql = "select count(*) from student where age > ?"
            let (results, prepared, runs) = try t.db.execute { connection -> ([Int?], Int, Int32) in
                // Inside `execute` this thread holds the writer, so the reads run on it.
                let results = try (0..<100).map { i in try t.db.queryInt(sql, i % 10) }
                var prepared = 0
                var runs: Int32 = 0
                var statement = sqlite3_next_stmt(connection.sqliteHandle, nil)
                while let current = statement {
                    if let text = sqlite3_sql(current), String(cString: text) == sql {
                        prepared += 1
                        runs += sqlite3_stmt_status(current, SQLITE_STMTSTATUS_RUN, 0)
                    }
                    statement = sqlite3_next_stmt(connection.sqliteHandle, current)
                }
                return (results, prepared, runs)
            }
            #expect(results == (0..<100).map { Optional(10 - $0 % 10) })
            #expect(prepared == 1)
            #expect(runs == 100)
        }
    }

    /// The cache looks at the statements used last before hashing (a transaction's BEGIN, its
    /// statements and COMMIT, in turn): statements used in turn are each prepared once, and with
    /// more in turn than it looks at, or than the cache holds, every call still runs its own SQL.
    @Test(arguments: [3, 12])
    func statementsUsedInTurnRunTheirOwnSql(distinct: Int) throws {
        for cacheSize in [2, 64] {
            var options = DbContext.Options()
            options.statementCacheSize = cacheSize
            try withDatabase(options: options) { t throws in
                try DbSuiteKit.makeStudents(t.db, count: 20)
                // Each SQL differs in its text and its result: `age > k` for k in 0..<distinct.
                let sqls = (0..<distinct).map { "select count(*) from student where age > \($0)" }
                let (results, prepared) = try t.db.execute { connection -> ([Int?], [Int]) in
                    let results = try (0..<(distinct * 20)).map { i in try t.db.queryInt(sqls[i % distinct]) }
                    var prepared = [Int](repeating: 0, count: distinct)
                    var statement = sqlite3_next_stmt(connection.sqliteHandle, nil)
                    while let current = statement {
                        if let text = sqlite3_sql(current), let index = sqls.firstIndex(of: String(cString: text)) {
                            prepared[index] += 1
                        }
                        statement = sqlite3_next_stmt(connection.sqliteHandle, current)
                    }
                    return (results, prepared)
                }
                #expect(results == (0..<(distinct * 20)).map { Optional(20 - $0 % distinct) })
                // Cached statements stay prepared: all of them when the cache holds them all.
                if cacheSize >= distinct { #expect(prepared == [Int](repeating: 1, count: distinct)) }
                #expect(prepared.reduce(0, +) <= cacheSize)
            }
        }
    }

    @Test(arguments: [false, true])
    func cachedSelectStarSeesAColumnAddedLater(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            let before = try t.db.find("select * from student order by id")
            #expect(before.first?.columnNames == ["id", "name", "age", "born"])
            let firstBefore = try #require(try t.db.findFirst("select * from student order by id"))
            #expect(!firstBefore.hasColumn("extra"))

            try t.db.update("alter table student add column extra text default 'x'")

            let after = try t.db.find("select * from student order by id")
            #expect(after.first?.columnNames == ["id", "name", "age", "born", "extra"])
            #expect(after.map { DbSuiteKit.string($0, "extra") } == ["x", "x"])
            let firstAfter = try #require(try t.db.findFirst("select * from student order by id"))
            #expect(DbSuiteKit.string(firstAfter, "extra") == "x")
            var eachColumns: [String] = []
            try t.db.each("select * from student order by id") { record in
                eachColumns = record.columnNames
                return false
            }
            #expect(eachColumns.last == "extra")
        }
    }

    @Test(arguments: [false, true])
    func cachedSelectStarForgetsADroppedColumn(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 2)
            #expect(try t.db.find("select * from student order by id").first?.columnNames == ["id", "name", "age", "born"])
            try t.db.update("alter table student drop column born")
            let after = try t.db.find("select * from student order by id")
            #expect(after.first?.columnNames == ["id", "name", "age"])
            #expect(after.first?.columnCount == 3)
            #expect(after.map { DbSuiteKit.string($0, "name") } == ["s1", "s2"])
        }
    }

    @Test(arguments: Engine.available) func cachedSingleColumnQuerySeesTheSchemaChange(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table one(a integer)"))
            try t.db.update("insert into one values (1)")
            #expect(try t.db.query("select * from one", as: Int.self) == [1])
            try t.db.update("alter table one add column b integer")
            // `select *` now returns two columns: the single-column rule applies to the statement as it runs.
            DbSuiteKit.expectError(.multipleColumns) { _ = try t.db.query("select * from one", as: Int.self) }
        }
    }

    @Test(arguments: Engine.available) func moreThanOneStatementInOneStringIsRefused(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 1)
            DbSuiteKit.expectError(.multipleStatements) {
                _ = try t.db.update("update student set age = 1; delete from student")
            }
            #expect(try t.db.queryInt("select count(*) from student") == 1)
            // A trailing semicolon or comment is fine.
            #expect(try t.db.queryInt("select count(*) from student; -- done") == 1)
        }
    }
}

// MARK: - Helpers shared by the Db, transaction, pagination and context suites

enum DbSuiteKit {
    /// `student(id, name, age, born)` with `count` rows: name "s<i>", age i, born NULL, for i in 1...count.
    static func makeStudents(_ db: Db, count: Int) throws {
        try db.update(db.ddl("create table student(id integer primary key autoincrement, name text, age integer, born real)"))
        guard count > 0 else { return }
        try db.batch("insert into student(name, age) values (?, ?)", (1...count).map { ["s\($0)", $0] })
    }

    /// The statements `t` ran, without those that set up a newly opened connection (a reader
    /// opens on first use and runs its own setup then).
    static func userStatements(_ t: TestDatabase) -> [String] {
        t.statements.filter { $0 != "SELECT count(*) FROM sqlite_master" && $0 != "PRAGMA foreign_keys = ON" }
    }

    static func int(_ record: Record, _ column: String) -> Int? {
        try? record.get(column, as: Int?.self)
    }

    static func string(_ record: Record, _ column: String) -> String? {
        try? record.get(column, as: String?.self)
    }

    /// Expects `body` to throw a `DicRecordError` of `kind`; returns it.
    @discardableResult
    static func expectError(_ kind: DicRecordError.Kind, sourceLocation: SourceLocation = #_sourceLocation,
                            _ body: () throws -> Void) -> DicRecordError? {
        let error = #expect(throws: DicRecordError.self, sourceLocation: sourceLocation) { try body() }
        if let error {
            #expect(error.kind == kind, "expected .\(kind), got: \(error)", sourceLocation: sourceLocation)
        }
        return error
    }

    /// A temporary folder for a test that makes contexts itself; `cleanUp` removes it.
    static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-dbsuite-\(UUID().uuidString)")
    }

    static func cleanUp(_ folder: URL) {
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `body` on a new thread and waits for it at most `timeout` seconds (a watchdog
    /// against deadlocks, not a timing assertion). Nil when it did not finish in time.
    static func onThread<T>(timeout: Double = 20, _ body: @escaping @Sendable () throws -> T) -> Result<T, any Error>? {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            box.set(Result { try body() })
            done.signal()
        }
        thread.start()
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.get()
    }

    /// Starts `body` on a new thread; `wait(timeout:)` on the returned handle collects its result.
    static func spawn<T>(_ body: @escaping @Sendable () throws -> T) -> Spawned<T> {
        let spawned = Spawned<T>()
        let thread = Thread {
            spawned.box.set(Result { try body() })
            spawned.done.signal()
        }
        thread.start()
        return spawned
    }

    final class Spawned<T>: @unchecked Sendable {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var collected: Result<T, any Error>?

        /// The thread's result, or nil when it has not finished within `timeout` seconds.
        func wait(timeout: Double) -> Result<T, any Error>? {
            lock.lock()
            defer { lock.unlock() }
            if let collected { return collected }
            guard done.wait(timeout: .now() + timeout) == .success else { return nil }
            collected = box.get()
            return collected
        }
    }

    final class ResultBox<T>: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<T, any Error>?
        func set(_ value: Result<T, any Error>) { lock.lock(); result = value; lock.unlock() }
        func get() -> Result<T, any Error>? { lock.lock(); defer { lock.unlock() }; return result }
    }

    /// A value shared with callbacks that may run on other threads.
    final class Locked<Value>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value
        init(_ value: Value) { stored = value }
        var value: Value { lock.lock(); defer { lock.unlock() }; return stored }
        func update(_ body: (inout Value) -> Void) { lock.lock(); body(&stored); lock.unlock() }
    }

    /// A thread-safe counter for callbacks.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func increment() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }
}
