import Foundation
import Testing
import DicRecord

/// The README's quick start, verbatim but for the folder: if this stops compiling or passing,
/// the README is lying to newcomers.
@Suite struct ReadmeTests {
    @Test func quickStartRuns() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try DbContext.withIsolatedRegistry {
            let main = try DbContext(path: folder.appendingPathComponent("db/database.sqlite").path)  // config "main"; the folder is created
            try main.start()
            defer { main.stop() }

            try Db.update("create table student(id integer primary key autoincrement, name text, age integer, born real)")
            try Db.update("insert into student(name, age, born) values (?, ?, ?)", "张三", 14, Date())

            if let s = try Db.findFirst("select * from student where name = ?", "张三") {
                let name: String? = s.name           // typed read through the converters
                let born: Date? = s.born             // REAL seconds -> Date on first read, then kept
                s.age = 15                           // marks "age" modified
                try Db.update("student", s)          // UPDATE of the modified columns only
                #expect(name == "张三")
                #expect(born != nil)
                #expect(try s.toJSON().contains("\"age\":15"))
            }

            let page = try Db.paginate(1, 10, "select *", "from student where age > ?", 10)
            #expect(page.totalRow == 1 && page.list.count == 1)

            try Db.tx { db in                        // commit on true, roll back on false or throw
                try db.update("delete from student where age < ?", 12)
                return true
            }

            let backup = try DbContext(path: folder.appendingPathComponent("db/backup.sqlite").path, configName: "backup")
            try backup.start()
            defer { backup.stop() }
            #expect(try Db.use("backup").find("select * from sqlite_master").isEmpty)
            #expect(try Db.queryInt("select age from student") == 15)
        }
    }
}
