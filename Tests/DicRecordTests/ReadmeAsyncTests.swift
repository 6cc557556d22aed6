import Foundation
import Testing
import DicRecord

// The README's "Concurrency and async" example, verbatim but for the setup it assumes (a main
// context with a student table, a "bank" context with two accounts).

private final class Student: Model {
    @Column var name: String?
    @Column var age: Int = 10
    override class var tableName: String { "student" }
}

@Suite struct ReadmeAsyncTests {
    @Test func concurrencyExampleRuns() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-readme-async-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await DbContext.withIsolatedRegistry {
            let main = try DbContext(path: folder.appendingPathComponent("main.sqlite").path)
            main.register(Student.self)
            try main.start()
            defer { main.stop() }
            let bank = try DbContext(path: folder.appendingPathComponent("bank.sqlite").path, configName: "bank")
            try bank.start()
            defer { bank.stop() }
            try await Db.update("insert into student (name, age) values ('ann', 15), ('bob', 19)")
            try await Db.use("bank").update("create table account (id integer primary key, balance integer)")
            try await Db.use("bank").update("insert into account values (1, 100), (2, 100)")

            let adults = try await Db.find("select * from student where age >= ?", 18)   // runs off your thread
            try await Db.use("bank").tx { db in                  // every call of this task on "bank" joins it
                try await db.update("update account set balance = balance - ? where id = ?", 10, 1)
                try await db.update("update account set balance = balance + ? where id = ?", 10, 2)
                return true                                      // commit; false or a throw rolls back
            }
            if let s = try await Student.dao.findById(1) {       // dao methods have async twins too
                s.age = 16
                try await s.update()
            }

            #expect(adults.map { $0["name"] as String? } == ["bob"])
            #expect(try await Db.use("bank").query("select balance from account order by id", as: Int.self) == [90, 110])
            #expect(try await Student.dao.findById(1)?.age == 16)
        }
    }
}
