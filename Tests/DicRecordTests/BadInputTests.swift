import Foundation
import Testing
@testable import DicRecord

/// A type with no converter anywhere.
private struct Secret: Sendable {
    var code = 42
}

/// Bad input: each is a typed, thrown error whose description names the SQL, the column or the
/// config, and the database is unchanged afterwards.
@Suite struct BadInputTests {
    private static func makeStudents(_ t: TestDatabase) throws {
        try t.db.update("create table student(id integer primary key, name text not null, age integer)")
        try t.db.update("insert into student(id, name, age) values (1, '张三', 14), (2, 'abc', 41)")
    }

    /// Every row, in order, as one string.
    private static func checksum(_ t: TestDatabase, _ db: Db? = nil) throws -> String {
        let db = db ?? t.db
        return try db.queryString("""
            select count(*) || ':' || coalesce(group_concat(id || '=' || name || '/' || ifnull(age, 'NULL'), ','), '')
            from (select * from student order by id)
            """) ?? "none"
    }

    private static let expectedChecksum = "2:1=张三/14,2=abc/41"

    // MARK: SQL errors

    @Test(arguments: ["select * frm student", "selec * from student", "insert into student(name) valuez ('x')",
                      "update student set name = where id = 1", "select (1 from student"])
    func malformedSQLThrowsDatabaseErrorWithSQLAndOffset(_ sql: String) throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let error = try #require(throws: DatabaseError.self) { try t.db.update(sql) }
            #expect(error.resultCode == 1)                  // SQLITE_ERROR
            #expect(error.sql == sql)
            #expect(error.configName == "main")
            let offset = try #require(error.errorOffset)
            #expect(offset >= 0 && offset < sql.utf8.count)
            #expect(error.message.contains("syntax error") || error.message.contains("incomplete input"))
            #expect(error.description.contains(sql))
            #expect(error.description.contains("config: main"))
            // find reports it the same way.
            let viaFind = try #require(throws: DatabaseError.self) { try t.db.find(sql) }
            #expect(viaFind.sql == sql && viaFind.errorOffset == offset)
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    @Test func theOffsetPointsAtTheBadToken() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let error = try #require(throws: DatabaseError.self) { try t.db.find("select * frm student") }
            #expect(error.errorOffset == 9)                 // "frm"
            #expect(error.message.contains("frm"))
        }
    }

    @Test func unknownTableOrColumnThrowsDatabaseErrorNamingIt() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "select * from nosuch where id = ?"
            let error = try #require(throws: DatabaseError.self) { try t.db.find(sql, 1) }
            #expect(error.resultCode == 1)
            #expect(error.message.contains("no such table: nosuch"))
            #expect(error.sql == sql)
            #expect(error.description.contains(sql))

            let insert = "insert into nosuch(a) values (1)"
            let insertError = try #require(throws: DatabaseError.self) { try t.db.update(insert) }
            #expect(insertError.sql == insert)

            let column = try #require(throws: DatabaseError.self) { try t.db.update("update student set nope = 1") }
            #expect(column.message.contains("no such column: nope"))

            // Saving a record with a column the table lacks: nothing inserted.
            let record = Record()
            record.name = "王五"
            record.nope = 1
            let saveError = try #require(throws: DatabaseError.self) { try t.db.save("student", record) }
            #expect(saveError.message.contains("nope"))
            #expect(saveError.sql?.contains("INSERT INTO \"student\"") == true)
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    @Test func constraintViolationKeepsTheRowsAndNamesTheArguments() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "insert into student(id, name) values (?, ?)"
            let error = try #require(throws: DatabaseError.self) { try t.db.update(sql, 1, "dup") }
            #expect(error.resultCode == 19)                 // SQLITE_CONSTRAINT
            #expect(error.extendedResultCode == 1555)       // SQLITE_CONSTRAINT_PRIMARYKEY
            #expect(error.arguments == [.integer(1), .text("dup")])
            #expect(error.description.contains("'dup'"))
            let notNull = try #require(throws: DatabaseError.self) { try t.db.update(sql, 3, nil) }
            #expect(notNull.extendedResultCode == 1299)     // SQLITE_CONSTRAINT_NOTNULL
            #expect(notNull.message.contains("student.name"))
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    // MARK: Arguments

    @Test func tooFewPositionalArgumentsThrow() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "insert into student(id, name, age) values (?, ?, ?)"
            let error = try #require(throws: DicRecordError.self) { try t.db.update(sql, 3, "王五") }
            #expect(error.kind == .argumentCount)
            #expect(error.sql == sql)
            #expect(error.configName == "main")
            #expect(error.description.contains(sql))
            #expect(error.description.contains("3 parameters"))
            #expect(error.description.contains("2 arguments"))
            let none = try #require(throws: DicRecordError.self) { try t.db.update(sql) }
            #expect(none.kind == .argumentCount)
            let find = try #require(throws: DicRecordError.self) { try t.db.find("select * from student where id = ? and age = ?", 1) }
            #expect(find.kind == .argumentCount)
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    @Test func tooManyPositionalArgumentsThrow() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "insert into student(id, name) values (?, ?)"
            let error = try #require(throws: DicRecordError.self) { try t.db.update(sql, 3, "王五", 20) }
            #expect(error.kind == .argumentCount)
            #expect(error.sql == sql)
            #expect(error.description.contains(sql))
            let noPlaceholder = try #require(throws: DicRecordError.self) { try t.db.find("select * from student", 1) }
            #expect(noPlaceholder.kind == .argumentCount)
            let array = try #require(throws: DicRecordError.self) { try t.db.update(sql, arguments: [3, "a", nil]) }
            #expect(array.kind == .argumentCount)
            #expect(try Self.checksum(t) == Self.expectedChecksum)
            // The right number works.
            #expect(try t.db.update(sql, 3, "王五") == 1)
        }
    }

    @Test func namedArgumentsMissingOrExtraThrow() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "insert into student(id, name, age) values (:id, :name, :age)"
            let missing = try #require(throws: DicRecordError.self) {
                try t.db.update(sql, arguments: ["id": 3, "name": "王五"])
            }
            #expect(missing.kind == .argumentCount)
            #expect(missing.description.contains(":age"))
            #expect(missing.sql == sql)

            let extra = try #require(throws: DicRecordError.self) {
                try t.db.update(sql, arguments: ["id": 3, "name": "王五", "age": 20, "agee": 21])
            }
            #expect(extra.kind == .argumentCount)
            #expect(extra.description.contains("agee"))
            #expect(extra.sql == sql)

            let positionalSql = try #require(throws: DicRecordError.self) {
                try t.db.find("select * from student where id = ?", arguments: ["id": 1])
            }
            #expect(positionalSql.kind == .argumentCount)
            #expect(try Self.checksum(t) == Self.expectedChecksum)

            // Exactly the parameters (with or without the prefix, nil for NULL) works.
            #expect(try t.db.update(sql, arguments: ["id": 3, ":name": "王五", "age": nil]) == 1)
            #expect(try t.db.queryString("select name || '/' || ifnull(age, 'NULL') from student where id = 3") == "王五/NULL")
        }
    }

    @Test func anArgumentOfAnUnregisteredTypeThrowsNamingTypeAndSQL() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "insert into student(id, name) values (?, ?)"
            let error = try #require(throws: DicRecordError.self) { try t.db.update(sql, 3, Secret()) }
            #expect(error.kind == .unsupportedArgument)
            #expect(error.sql == sql)
            #expect(error.description.contains("Secret"))
            #expect(error.description.contains(sql))
            let named = try #require(throws: DicRecordError.self) {
                try t.db.find("select * from student where name = :n", arguments: ["n": Secret()])
            }
            #expect(named.kind == .unsupportedArgument)
            #expect(named.description.contains("Secret"))
            let batch = try #require(throws: DicRecordError.self) { try t.db.batch(sql, [[3, "ok"], [4, Secret()]]) }
            #expect(batch.kind == .unsupportedArgument)
            #expect(try Self.checksum(t) == Self.expectedChecksum)   // the batch's first row was rolled back
        }
    }

    // MARK: Conversion

    @Test func getAsDateOfTextThrowsConversionError() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 2"))
            let error = try #require(throws: ConversionError.self) { try r.get("name", as: Date.self) }
            #expect(error.kind == .notConvertible)
            #expect(error.column == "name")
            #expect(error.description.contains("TEXT 'abc'"))
            #expect(error.description.contains("Date"))
            #expect(error.description.contains("\"name\""))
            let typed: Date? = r.name
            #expect(typed == nil)
            // Single-column queries say the same.
            let query = try #require(throws: ConversionError.self) { try t.db.queryDate("select name from student where id = 2") }
            #expect(query.column == "name")
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    @Test func aQueryOfMoreThanOneColumnForASingleValueThrows() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let sql = "select id, name from student"
            let error = try #require(throws: DicRecordError.self) { try t.db.queryInt(sql) }
            #expect(error.kind == .multipleColumns)
            #expect(error.sql == sql)
        }
    }

    @Test func anUnknownConfigThrowsListingTheKnownOnes() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let error = try #require(throws: DicRecordError.self) { try Db.use("nope").find("select * from student") }
            #expect(error.kind == .unknownConfig)
            #expect(error.description.contains("nope"))
            #expect(error.description.contains("'main'"))
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    // MARK: Readonly and broken files

    @Test func writesToAReadonlyContextThrowAndChangeNothing() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            t.context.stop()

            var options = DbContext.Options()
            options.readonly = true
            let readonly = try DbContext(path: t.path, configName: "ro", options: options)
            try readonly.start()
            defer { readonly.stop() }
            let ro = Db.use("ro")
            #expect(try Self.checksum(t, ro) == Self.expectedChecksum)    // reads work

            let update = try #require(throws: DicRecordError.self) { try ro.update("update student set name = 'x'") }
            #expect(update.kind == .readonly)
            #expect(update.configName == "ro")
            #expect(update.description.contains("ro"))
            let record = Record()
            record.name = "王五"
            let save = try #require(throws: DicRecordError.self) { try ro.save("student", record) }
            #expect(save.kind == .readonly)
            #expect(!record.hasColumn("id"))
            let tx = try #require(throws: DicRecordError.self) { try ro.tx { db in try db.update("delete from student"); return true } }
            #expect(tx.kind == .readonly)
            let delete = try #require(throws: DicRecordError.self) { try ro.deleteById("student", 1) }
            #expect(delete.kind == .readonly)
            // A write disguised as a query is refused by SQLite itself.
            #expect(throws: (any Error).self) { try ro.find("with x as (select 1) delete from student") }
            #expect(try Self.checksum(t, ro) == Self.expectedChecksum)

            try t.context.start()
            #expect(try Self.checksum(t) == Self.expectedChecksum)
        }
    }

    @Test func aReadonlyOpenOfAMissingFileThrowsAndCreatesNothing() throws {
        try withDatabase { t in
            let folder = t.folder.appendingPathComponent("missing")
            let path = folder.appendingPathComponent("ro.sqlite").path
            var options = DbContext.Options()
            options.readonly = true
            let context = try DbContext(path: path, configName: "ro", options: options)
            let error = try #require(throws: DatabaseError.self) { try context.start() }
            #expect(error.resultCode == 14)                 // SQLITE_CANTOPEN
            #expect(error.description.contains(path))
            #expect(error.configName == "ro")
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(!FileManager.default.fileExists(atPath: folder.path))
            #expect(!context.isStarted)
            // The name is not taken by the failed start.
            let unknown = try #require(throws: DicRecordError.self) { try Db.use("ro").find("select 1") }
            #expect(unknown.kind == .unknownConfig)
        }
    }

    @Test func aFileThatIsNotADatabaseThrowsNotADB() throws {
        try withDatabase { t in
            let path = t.folder.appendingPathComponent("garbage.sqlite").path
            var generator = SystemRandomNumberGenerator()
            var bytes = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes.replaceSubrange(0..<16, with: Array("not a database!!".utf8))
            let garbage = Data(bytes)
            try garbage.write(to: URL(fileURLWithPath: path))

            for readonlyOpen in [false, true] {
                var options = DbContext.Options()
                options.readonly = readonlyOpen
                let context = try DbContext(path: path, configName: "junk", options: options)
                let error = try #require(throws: DatabaseError.self) { try context.start() }
                #expect(error.resultCode == 26)             // SQLITE_NOTADB
                #expect(error.configName == "junk")
                #expect(!context.isStarted)
                #expect(throws: DicRecordError.self) { try Db.use("junk").find("select 1") }
            }
            // The file is left exactly as it was.
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == garbage)
        }
    }

    // MARK: Statements

    @Test func twoStatementsInOneUpdateThrowAndNeitherRuns() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            for sql in ["insert into student(name) values ('a'); insert into student(name) values ('b')",
                        "delete from student; drop table student",
                        "insert into student(name) values ('a');\n-- comment\nupdate student set age = 0"] {
                let error = try #require(throws: DicRecordError.self) { try t.db.update(sql) }
                #expect(error.kind == .multipleStatements)
                #expect(error.sql == sql)
                #expect(error.description.contains(sql))
                #expect(try Self.checksum(t) == Self.expectedChecksum)
            }
            let find = try #require(throws: DicRecordError.self) { try t.db.find("select 1; select 2") }
            #expect(find.kind == .multipleStatements)
            // No statement at all is refused too.
            for sql in ["", "  ;  ", "-- nothing here"] {
                let empty = try #require(throws: DicRecordError.self) { try t.db.update(sql) }
                #expect(empty.kind == .invalidArgument)
                #expect(empty.sql == sql)
            }
            // A trailing semicolon, spaces and comments are one statement.
            #expect(try t.db.update("insert into student(id, name) values (3, 'c');  -- done\n /* end */ ") == 1)
        }
    }

    @Test func aRecordHoldingAValueOfAnUnregisteredTypeIsRefusedNamingTheColumn() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let record = Record()
            record.name = "王五"
            record.age = Secret()                              // no crash: kept, reported later
            #expect(record.modifiedColumns == ["name", "age"])
            #expect(record.age is Secret)
            let save = try #require(throws: ConversionError.self) { try t.db.save("student", record) }
            #expect(save.kind == .noConverter)
            #expect(save.column == "age")
            #expect(save.description.contains("\"age\""))
            #expect(save.description.contains("Secret"))
            #expect(!record.hasColumn("id"))
            #expect(try Self.checksum(t) == Self.expectedChecksum)

            // The same for an update of a fetched row, and for a batch.
            let fetched = try #require(try t.db.findFirst("select * from student where id = 1"))
            fetched.name = "李四"
            fetched.age = Secret()
            let update = try #require(throws: ConversionError.self) { try t.db.update("student", fetched) }
            #expect(update.column == "age")
            let batch = try #require(throws: ConversionError.self) {
                try t.db.batchSave("student", [try Record(["name": "ok"]), record])
            }
            #expect(batch.column == "age")
            #expect(try Self.checksum(t) == Self.expectedChecksum)

            // And at once for a record built from values.
            let built = try #require(throws: ConversionError.self) { try Record(["name": "x", "secret": Secret()]) }
            #expect(built.column == "secret")

            // Replacing the bad value makes the record storable.
            record.age = 20
            #expect(try t.db.save("student", record))
            #expect(try t.db.queryInt("select count(*) from student") == 3)
        }
    }
}
