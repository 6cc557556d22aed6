import Foundation
import Testing
import DicRecord

// The README's "Models" example, verbatim but for the folder and the backup context it assumes:
// if this stops compiling or passing, the README is lying.

private struct EmptyName: Error {}

private final class Teacher: Model {
    @Column var name: String?
    @Children(foreignKey: "teacher_id") var students: [Student]   // one query per access
}

private final class Student: Model {
    @Column var name: String?
    @Column var age: Int = 10                  // NOT NULL DEFAULT 10
    @Column var born: Date?                    // REAL seconds, through the converters
    @Column var tags: [String]?                // Codable with no converter: JSON TEXT, no registration
    @Column var createdAt: Date?               // stamped on insert (updatedAt: on every save)
    @Reference var teacher: Teacher?           // column teacher_id, loaded on first access, then kept
    override class var tableName: String { "student" }
    override class var version: Int { 2 }
    override class var indexes: [Index] { [Index("name"), Index("name", "age", unique: true)] }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        old == 1 ? [Sql("update student set tags = '[]' where tags is null")] : []
    }
    override func willSave() throws { if name?.isEmpty == true { throw EmptyName() } }
}

@Suite struct ReadmeModelTests {
    @Test func modelsExampleRuns() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try DbContext.withIsolatedRegistry {
            let backup = try DbContext.inMemory(configName: "backup")
            backup.register(Student.self, Teacher.self)

            let main = try DbContext(path: folder.appendingPathComponent("db/school.sqlite").path)
            main.register(Teacher.self, Student.self)
            main.migration(version: 1) { db in try db.update("create table log(id integer primary key, line text)") }
            try main.start()      // migrations (PRAGMA user_version), then every model's table, all or nothing
            defer { main.stop() }
            try backup.start()
            defer { backup.stop() }

            let s = Student(); s.name = "张三"; try s.save()                    // s.id is set
            s.age = 15; try s.update()                                           // UPDATE of "age" only
            let found = try Student.dao.findByCondition("age > ?", 12)          // [Student]
            try Student.dao.preload(\.teacher, in: found)                        // their teachers in one query
            let oldest: Int? = try Student.dao.max("age")
            _ = try Student.dao.use("backup").findById(1)                        // another config; Student.dao unchanged

            #expect(s.id == 1)
            #expect(found.map(\.name) == ["张三"])
            #expect(found[0].createdAt != nil)
            #expect(oldest == 15)
            #expect(try Db.queryInt("pragma user_version") == 1)
            #expect(try Db.queryInt("select count(*) from log") == 0)
            let empty = Student(); empty.name = ""
            #expect(throws: EmptyName.self) { try empty.save() }
            let t = Teacher(); t.name = "Ms. Li"; try t.save()
            s.teacher = t; try s.update()
            #expect(t.students.map(\.id) == [s.id])
        }
    }
}
