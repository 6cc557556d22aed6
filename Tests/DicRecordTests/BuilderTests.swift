import Foundation
import Testing
@testable import DicRecord

final class BuilderStudent: Model {
    @Column var name: String?
    @Column var age: Int = 0
    @Column var gender: Int = 0
    override class var tableName: String { "builder_students" }
}

/// The clause and statement builder: every ALSQLClause and ALSQLStatement example of seed 000,
/// reproduced exactly (SQL text and arguments) and run against a real `students` database.
@Suite struct BuilderTests {
    /// Arguments as "Type:value", so that 30 and "30" differ.
    private func show(_ arguments: [DatabaseArgument]) -> [String] {
        arguments.map { argument in argument.map { "\(type(of: $0)):\($0)" } ?? "nil" }
    }

    private func makeStudents(_ db: Db) throws {
        try db.update(db.ddl("create table students (_id integer primary key, name text unique, age integer, gender text, address text, province text)"))
        try db.update(db.ddl("create table student_courses (_id integer, course text)"))
        try db.batch("insert into students (name, age, gender, address, province) values (?, ?, ?, ?, ?)", [
            ["alex", 30, "1", "BJ/CN", "bj"], ["alexa", 35, "2", "SH/CN", "sh"], ["Roger", 34, "1", "AB/CA", "ab"],
            ["lee", 17, "1", "SF/US", "ca"], ["bruce lee", 40, "1", "HK/CN", "hk"], ["Jim", 18, "1", "SF/US", "ca"],
        ])
        try db.batch("insert into student_courses values (?, ?)", [[1, "math"], [2, "art"], [3, "math"]])
    }

    // MARK: ALSQLClause

    @Test func functionsWriteIntegersAndColumnsAndBindMarkedValues() {
        let substr = SQL.function("substr", "column_name", 5)
        #expect(substr.sql == "SUBSTR(column_name, 5)")
        #expect(substr.arguments.isEmpty)
        let replace = SQL.replace("col_name", .value(5), .value(3))
        #expect(replace.sql == "REPLACE(col_name, ?, ?)")
        #expect(show(replace.arguments) == ["Int:5", "Int:3"])
        #expect(SQL.function("replace", "col_name", SqlClause.value(5), SqlClause.value(3)).sql == "REPLACE(col_name, ?, ?)")
        #expect(SQL.count().sql == "COUNT(*)")
        #expect(SQL.upper("province").as("province").sql == "UPPER(province) AS province")
    }

    @Test func andOrParenthesesAsPatchworkWritesThem() {
        let clause = "col1".neq(1).or("col1".neq(2)).and("col2".eq(0).or("col2".gt(100)))
        #expect(clause.sql == "(col1 != ? OR col1 != ?) AND (col2 = ? OR col2 > ?)")
        #expect(show(clause.arguments) == ["Int:1", "Int:2", "Int:0", "Int:100"])
        // AND binds tighter than OR: no parentheses needed the other way round.
        #expect("a".eq(1).and("b".eq(2)).or("c".eq(3)).sql == "a = ? AND b = ? OR c = ?")
        #expect("a".eq(1).and("b".eq(2)).and("c".eq(3)).sql == "a = ? AND b = ? AND c = ?")
        #expect("a".eq(1).or("b".eq(2)).not.sql == "NOT (a = ? OR b = ?)")
        #expect("a".isNull.not.sql == "NOT a IS NULL")
    }

    @Test func inBetweenLikeAndNulls() {
        let inList = "col1".in([1, 2, 3])
        #expect(inList.sql == "col1 IN (?, ?, ?)")
        #expect(show(inList.arguments) == ["Int:1", "Int:2", "Int:3"])
        #expect("age".between(10, 20).sql == "age BETWEEN ? AND ?")
        #expect("name".prefixLike("alex").arguments.first as? String == "alex%")
        #expect("name".suffixLike("lee").arguments.first as? String == "%lee")
        #expect("name".containsLike("le").arguments.first as? String == "%le%")
        #expect("name".like("a_c").sql == "name LIKE ?")
        #expect("x".isNull.sql == "x IS NULL")
        #expect("x".isNotNull.sql == "x IS NOT NULL")
        #expect("x".is(nil).sql == "x IS ?")
        let sub = "_id".in(Select("_id").from("student_courses").where("course".eq("math")))
        #expect(sub.sql == "_id IN (SELECT _id FROM student_courses WHERE course = ?)")
        #expect(show(sub.arguments) == ["String:math"])
    }

    @Test func caseWhenThenElseEnd() {
        let clause = SQL.case("col1").when(0).then(SqlClause.value("zero")).when(1).then("one").else("others").end()
        #expect(clause.sql == "CASE col1 WHEN ? THEN ? WHEN ? THEN ? ELSE ? END")
        #expect(show(clause.arguments) == ["Int:0", "String:zero", "Int:1", "String:one", "String:others"])
        let searched = SQL.case().when("age".lt(18)).then("minor").else("adult").end()
        #expect(searched.sql == "CASE WHEN age < ? THEN ? ELSE ? END")
    }

    // MARK: ALSQLStatement: select

    @Test(arguments: Engine.available) func selectExamplesOfTheSeedRunOnARealDatabase(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try makeStudents(t.db)

            let multi = Select().from("students", "student_courses").where("students._id = student_courses._id")
            #expect(multi.sql == "SELECT * FROM students, student_courses WHERE students._id = student_courses._id")
            #expect(try t.db.find(multi).count == 3)

            let inner = Select("name", "age").from("students").where("name".prefixLike("alex"))
            let sub = Select(SQL.count("*")).from(inner).where("age".gt(30))
            #expect(sub.sql == "SELECT COUNT(*) FROM (SELECT name, age FROM students WHERE name LIKE ?) AS subquery1 WHERE age > ?")
            #expect(show(sub.arguments) == ["String:alex%", "Int:30"])
            #expect(try t.db.queryFirst(sub, as: Int.self) == 1)  // alexa, 35

            let aliased = Select(SQL.count("*")).from(inner.as("sub_tbl")).where("age".gt(30))
            #expect(aliased.sql == "SELECT COUNT(*) FROM (SELECT name, age FROM students WHERE name LIKE ?) AS sub_tbl WHERE age > ?")
            #expect(try t.db.queryFirst(aliased, as: Int.self) == 1)

            let core = Select(.raw("COUNT(*) AS num"), SQL.upper("province").as("province"))
                .from("students")
                .where(SQL.lower("gender").eq("1"))
                .groupBy("province")
                .having("age".gt(18))
                .orderBy("num".desc)
                .orderBy("province")
                .limit(5)
                .offset(3)
            #expect(core.sql == "SELECT COUNT(*) AS num, UPPER(province) AS province FROM students "
                + "WHERE LOWER(gender) = ? GROUP BY province HAVING age > ? ORDER BY num DESC, province LIMIT 5 OFFSET 3")
            #expect(show(core.arguments) == ["String:1", "Int:18"])
            // Gender "1": provinces bj, ab, ca, hk; HAVING age > 18 drops ca; OFFSET 3 leaves nothing.
            // (A bare column in HAVING is SQLite's leniency; PostgreSQL refuses it, naming the column.)
            if engine == .sqlite {
                #expect(try t.db.find(core).isEmpty)
                #expect(try t.db.find(core.offset(0)).map { $0["province"] as String? } == ["AB", "BJ", "HK"])
            } else {
                #expect(throws: DatabaseError.self) { try t.db.find(core) }
            }
        }
    }

    // MARK: ALSQLStatement: insert, update, delete

    @Test func insertExamplesOfTheSeed() throws {
        try withDatabase { t in
            try makeStudents(t.db)
            let u1: [DatabaseArgument] = ["alex", 30, "1", "BJ/CN"]
            let u2: [DatabaseArgument] = ["Jim", "18", 1, "SF/US"]
            let rows = Insert(into: "students").orReplace().columns("name", "age", "gender", "address").values(u1).values(u2)
            #expect(rows.sql == "INSERT OR REPLACE INTO students (name, age, gender, address) VALUES (?, ?, ?, ?), (?, ?, ?, ?)")
            #expect(show(rows.arguments) == show(u1 + u2))
            #expect(try t.db.update(rows) == 2)

            let dict: [String: DatabaseArgument] = ["name": "Roger2", "age": 34, "gender": "1", "address": "AB/CA"]
            let one = Insert(into: "students").values(dict)
            let keys = dict.keys.sorted()
            #expect(one.sql == "INSERT INTO students (\(keys.joined(separator: ", "))) VALUES (?, ?, ?, ?)")
            #expect(show(one.arguments) == show(keys.map { dict[$0] ?? nil }))
            #expect(try t.db.update(one) == 1)

            let copy = Insert(into: "students").select(Select().from("students").where("age".neq(0)))
            #expect(copy.sql == "INSERT INTO students SELECT * FROM students WHERE age != ?")
            #expect(show(copy.arguments) == ["Int:0"])
            // Validated as the seed does (prepared by SQLite); running it would clash on _id.
            #expect(throws: DatabaseError.self) { try t.db.update(copy) }
            #expect(try t.db.update(Insert(into: "student_courses").select(Select("_id", "name").from("students").where("age".gt(39)))) == 1)
        }
    }

    @Test func updateExampleOfTheSeed() throws {
        try withDatabase { t in
            try makeStudents(t.db)
            let update = Update("students")
                .orReplace()
                .set(["age": 30])
                .set("gender".eq("2"))
                .set(["name".eq("sindy"), "address".eq("AB/CA")])
                .where("name".eq("Roger"))
            #expect(update.sql == "UPDATE OR REPLACE students SET age = ?, gender = ?, name = ?, address = ? WHERE name = ?")
            #expect(show(update.arguments) == ["Int:30", "String:2", "String:sindy", "String:AB/CA", "String:Roger"])
            #expect(try t.db.update(update) == 1)
            #expect(try t.db.findFirst(Select().from("students").where("name".eq("sindy")))?["age"] as Int? == 30)
        }
    }

    @Test func deleteExamplesOfTheSeed() throws {
        try withDatabase { t in
            try makeStudents(t.db)
            let limited = Delete(from: "students").where("name".suffixLike("lee")).orderBy("age".desc).limit(5)
            #expect(limited.sql == "DELETE FROM students WHERE name LIKE ? ORDER BY age DESC LIMIT 5")
            #expect(show(limited.arguments) == ["String:%lee"])
            #expect(try t.db.update(limited) == 2)  // needs SQLITE_ENABLE_UPDATE_DELETE_LIMIT (Debian's SQLite has it)

            let all = Delete(from: "students").where(1)
            #expect(all.sql == "DELETE FROM students WHERE 1")
            #expect(all.arguments.isEmpty)
            #expect(try t.db.update(all) == 4)
        }
    }

    // MARK: Quoting, binding, edge cases

    @Test(arguments: Engine.available) func keywordsAndOddNamesAreQuotedPlainNamesAreNot(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try t.db.update(#"create table "order" ("index" integer, "group" text, "my col" text, plain text)"#)
            let insert = Insert(into: "order").values(["index": 1, "group": "a", "my col": "x", "plain": "p"])
            #expect(insert.sql == #"INSERT INTO "order" ("group", "index", "my col", plain) VALUES (?, ?, ?, ?)"#)
            try t.db.update(insert)
            let query = Select("index", "my col").from("order").where("group".eq("a")).orderBy("index".desc)
            #expect(query.sql == #"SELECT "index", "my col" FROM "order" WHERE "group" = ? ORDER BY "index" DESC"#)
            let row = try #require(try t.db.findFirst(query))
            #expect(row["index"] as Int? == 1)
            #expect(row["my col"] as String? == "x")
            #expect(Select("students._id", "t.*").sql == "SELECT students._id, t.*")
            #expect(SqlClause.column("select").sql == #""select""#)
            #expect(Update("order").set(["index": 2]).where("index".eq(1)).sql == #"UPDATE "order" SET "index" = ? WHERE "index" = ?"#)
        }
    }

    @Test(arguments: Engine.available) func valuesWithQuotesAndCommentsAreBoundNeverSpliced(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try makeStudents(t.db)
            let hostile = "x' OR 1=1 -- \"; drop table students; --"
            let query = Select().from("students").where("name".eq(hostile))
            #expect(query.sql == "SELECT * FROM students WHERE name = ?")
            #expect(try t.db.find(query).isEmpty)
            try t.db.update(Insert(into: "students").values(["name": hostile, "age": 1]))
            #expect(try t.db.findFirst(query)?["name"] as String? == hostile)
            #expect(try t.db.queryInt("select count(*) from students") == 7)
            // A CASE result and an IN list are bound too.
            #expect(!SQL.case("name").when(hostile).then(hostile).end().sql.contains("drop"))
            #expect(!"name".in([hostile]).sql.contains("drop"))
        }
    }

    @Test(arguments: Engine.available) func anEmptyInListMatchesNothingAndNotInEverything(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try makeStudents(t.db)
            let none = Select().from("students").where("age".in([]))
            #expect(none.sql == "SELECT * FROM students WHERE 1 = 0")
            #expect(try t.db.find(none).isEmpty)
            #expect(try t.db.find(Select().from("students").where("age".notIn([]))).count == 6)
            #expect(try t.db.update(Delete(from: "students").where("_id".in([]))) == 0)
        }
    }

    @Test(arguments: Engine.available) func offsetWithoutLimitAndDistinct(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try makeStudents(t.db)
            let query = Select("gender").distinct().from("students").orderBy("gender").offset(1)
            #expect(query.sql == "SELECT DISTINCT gender FROM students ORDER BY gender LIMIT 9223372036854775807 OFFSET 1")
            #expect(try t.db.query(query, as: String.self) == ["2"])
            let joined = Select("students.name", "student_courses.course").from("students")
                .join("student_courses", on: "students._id = student_courses._id").where("course".eq("math")).orderBy("students._id")
            #expect(joined.sql == "SELECT students.name, student_courses.course FROM students JOIN student_courses ON students._id = student_courses._id WHERE course = ? ORDER BY students._id")
            #expect(try t.db.query(Select("name").from("students").join("student_courses", on: "students._id = student_courses._id")
                .where("course".eq("math")).orderBy("students._id"), as: String.self) == ["alex", "Roger"])
        }
    }

    // MARK: Same rows as raw SQL

    @Test(arguments: Engine.available) func builtStatementsReturnTheSameRowsAsRawSQLOnAThousandRows(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            let db = t.db
            try db.update(db.ddl("create table people (id integer primary key, name text, age integer, city text, score real)"))
            var random = SplitMix64(seed: 42)
            let cities = ["bj", "sh", "sz", "hk", nil]
            try db.batch("insert into people (name, age, city, score) values (?, ?, ?, ?)", (0..<1000).map { i -> [DatabaseArgument] in
                ["p\(random.next() % 500)", Int(random.next() % 80), cities[Int(random.next() % 5)], Double(random.next() % 1000) / 10]
            })
            func same(_ built: Select, _ raw: String, _ args: DatabaseArgument..., sourceLocation: SourceLocation = #_sourceLocation) throws {
                let a = try db.find(built).map { try $0.toJSON() }
                let b = try db.find(raw, arguments: StatementArguments(args)).map { try $0.toJSON() }
                #expect(a == b, sourceLocation: sourceLocation)
                #expect(!a.isEmpty, sourceLocation: sourceLocation)
            }
            try same(Select().from("people").where("age".gt(30).and("city".eq("bj"))).orderBy("id"),
                     "select * from people where age > ? and city = ? order by id", 30, "bj")
            try same(Select("id", "name").from("people").where("city".in(["sh", "sz"]).or("city".isNull)).orderBy("name", "id".desc).limit(50).offset(10),
                     "select id, name from people where city in (?, ?) or city is null order by name, id desc limit 50 offset 10", "sh", "sz")
            try same(Select("city", SQL.count().as("n"), SQL.avg("score").as("s")).from("people").where("age".between(20, 60))
                        .groupBy("city").having(SQL.count().gt(10)).orderBy("city"),
                     "select city, count(*) as n, avg(score) as s from people where age between ? and ? group by city having count(*) > ? order by city", 20, 60, 10)
            try same(Select().from("people").where("name".prefixLike("p1").and("age".lt(40).not)).orderBy("id"),
                     "select * from people where name like ? and not age < ? order by id", "p1%", 40)
            try same(Select(SQL.case().when("age".lt(18)).then("minor").else("adult").end().as("kind"), "id").from("people").orderBy("id").limit(100),
                     "select case when age < ? then ? else ? end as kind, id from people order by id limit 100", 18, "minor", "adult")
            try same(Select().from("people").where("id".in(Select("id").from("people").where("score".ge(90)))).orderBy("id"),
                     "select * from people where id in (select id from people where score >= ?) order by id", 90)
            // Writes: the same rows change.
            let changed = try db.update(Update("people").set(["city": "gz"]).where("age".gt(70)))
            #expect(changed == (try db.queryInt("select count(*) from people where city = 'gz'")))
            #expect(changed > 0)
            let deleted = try db.update(Delete(from: "people").where("city".eq("gz")))
            #expect(deleted == changed)
        }
    }

    // MARK: Through a dao

    @Test func daoFindsCountsAndDeletesByBuiltConditions() async throws {
        try await withDatabase { t in
            t.context.register(BuilderStudent.self)
            for (name, age, gender) in [("ann", 12, 2), ("bob", 19, 1), ("cy", 22, 1), ("dee", 30, 2), ("eve", 41, 2)] {
                try await Db.update(Insert(into: "builder_students").values(["name": name, "age": age, "gender": gender]))
            }
            let older = try await BuilderStudent.dao.find(where: "age".gt(18), orderBy: "age".desc, limit: 10)
            #expect(older.map(\.name) == ["eve", "dee", "cy", "bob"])
            let page = try await BuilderStudent.dao.find(where: "gender".eq(2), orderBy: "age", limit: 1, offset: 1)
            #expect(page.map(\.name) == ["dee"])
            #expect(try await BuilderStudent.dao.count(where: "name".prefixLike("e").or("age".lt(13))) == 2)
            #expect(try await BuilderStudent.dao.delete(where: "age".ge(30)) == 2)
            #expect(try await BuilderStudent.dao.find().map(\.name) == ["ann", "bob", "cy"])
            let all = try await BuilderStudent.dao.find(Select().from("builder_students").where("gender".eq(1)).orderBy("name"))
            #expect(all.map(\.name) == ["bob", "cy"])
        }
    }
}

/// The README's "Building SQL at run time" example, verbatim but for the setup it assumes.
@Suite struct ReadmeBuilderTests {
    private final class Student: Model {
        @Column var name: String?
        @Column var age: Int = 0
        override class var tableName: String { "student" }
    }

    @Test(arguments: Engine.available) func builderExampleRuns(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            t.context.register(Student.self)
            try Db.update("insert into student (name, age) values ('alexa', 30), ('alex', 12), ('bob', 40)")

            let adults = "age".gt(18).and("name".prefixLike("alex"))     // age > ? AND name LIKE ?   [18, "alex%"]
            let query = Select("name", "age").from("student").where(adults).orderBy("age".desc).limit(10)
            let rows = try Db.find(query)                                // query.sql, query.arguments
            try Db.update(Update("student").set(["age": 20]).where("name".eq("张三")))
            try Db.update(Insert(into: "student").values(["name": "李四", "age": 14]))
            let older = try Student.dao.find(where: "age".gt(18), orderBy: "age".desc, limit: 10)

            #expect(adults.sql == "age > ? AND name LIKE ?")
            #expect(query.sql == "SELECT name, age FROM student WHERE age > ? AND name LIKE ? ORDER BY age DESC LIMIT 10")
            #expect(rows.map { $0["name"] as String? } == ["alexa"])
            #expect(older.map(\.name) == ["bob", "alexa"])
            #expect(try Db.queryInt("select count(*) from student") == 4)
        }
    }
}
