import Foundation
import Testing
@testable import DicRecord

// @Reference (lazy to-one, stored as `<name>_id`), @Children (to-many by foreign key),
// `preload` (N references in one query), and models inside transactions.

final class RelTeacher: Model {
    @Column var name: String?
    @Children(foreignKey: "teacher_id") var students: [RelStudent]
}

final class RelStudent: Model {
    @Column var name: String?
    @Reference var teacher: RelTeacher?
}

@Suite("Model relations")
struct ModelRelationTests {
    struct Boom: Error, Equatable { let code: Int }

    private static let teacherById = #"SELECT * FROM "RelTeacher" WHERE "id" = ? LIMIT 1"#

    private func register(_ t: TestDatabase) {
        t.context.register(RelTeacher.self, RelStudent.self)
    }

    @discardableResult
    private func teacher(_ name: String) throws -> RelTeacher {
        let teacher = RelTeacher()
        teacher.name = name
        try teacher.save()
        return teacher
    }

    @discardableResult
    private func student(_ name: String, teacher: RelTeacher?) throws -> RelStudent {
        let student = RelStudent()
        student.name = name
        student.teacher = teacher
        try student.save()
        return student
    }

    // MARK: 1. Lazy reference

    @Test func theTableHasATeacherIdColumn() throws {
        try withDatabase { t throws in
            register(t)
            let columns = try t.db.find("pragma table_info('RelStudent')").map { "\($0.name as String? ?? "")|\($0.type as String? ?? "")" }
            #expect(columns == ["id|INTEGER", "name|TEXT", "teacher_id|INTEGER"])
            // @Children adds no column.
            let teacherColumns = try t.db.find("pragma table_info('RelTeacher')").map { $0.name as String? ?? "" }
            #expect(teacherColumns == ["id", "name"])
        }
    }

    @Test(arguments: Engine.available) func aReferenceLoadsOnceOnFirstAccess(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            let wang = try teacher("Mr. Wang")
            let ann = try student("Ann", teacher: li)
            #expect(try t.db.queryInt("select teacher_id from \"RelStudent\" where id = ?", ann.id) == li.id)

            let fresh = try #require(try RelStudent.dao.findById(ann.id))
            t.clearLog()
            let first = try #require(fresh.teacher)
            #expect(t.statements == [Self.teacherById])
            #expect(first.name == "Ms. Li")
            #expect(first.id == li.id)
            t.clearLog()
            let second = try #require(fresh.teacher)
            #expect(t.statements.isEmpty)
            #expect(second === first)   // kept, not loaded again

            // Assigning a model sets teacher_id; reading it back runs no query.
            fresh.teacher = wang
            let stored: Int? = fresh["teacher_id"]
            #expect(stored == wang.id)
            #expect(fresh.modifiedColumns == ["teacher_id"])
            t.clearLog()
            #expect(fresh.teacher === wang)
            #expect(t.statements.isEmpty)
            #expect(try fresh.update())
            #expect(try t.db.queryInt("select teacher_id from \"RelStudent\" where id = ?", ann.id) == wang.id)
            let reloaded = try #require(try RelStudent.dao.findById(ann.id))
            #expect(reloaded.teacher?.name == "Mr. Wang")

            // Assigning nil clears the column.
            reloaded.teacher = nil
            let cleared: Int? = reloaded["teacher_id"]
            #expect(cleared == nil)
            #expect(reloaded.teacher == nil)
            try reloaded.update()
            #expect(try t.db.queryInt("select count(*) from \"RelStudent\" where id = ? and teacher_id is null", ann.id) == 1)
        }
    }

    @Test(arguments: Engine.available) func aNullTeacherIdReadsNilWithoutAQuery(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            try teacher("Ms. Li")
            let bob = try student("Bob", teacher: nil)
            let fresh = try #require(try RelStudent.dao.findById(bob.id))
            let stored: Int? = fresh["teacher_id"]
            #expect(stored == nil)
            t.clearLog()
            #expect(fresh.teacher == nil)
            #expect(try fresh.load(\.teacher) == nil)
            #expect(t.statements.isEmpty)
            // A new, unsaved student too.
            #expect(RelStudent().teacher == nil)
            #expect(t.statements.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func aDanglingTeacherIdReadsNilAndLoadDoesNotThrow(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            let orphan = RelStudent()
            orphan.name = "Orphan"
            orphan["teacher_id"] = 999
            try orphan.save()
            #expect(try t.db.queryInt("select teacher_id from \"RelStudent\" where id = ?", orphan.id) == 999)

            let fresh = try #require(try RelStudent.dao.findById(orphan.id))
            t.clearLog()
            #expect(fresh.teacher == nil)
            #expect(t.statements == [Self.teacherById])
            t.clearLog()
            #expect(fresh.teacher == nil)   // the miss is kept too
            #expect(t.statements.isEmpty)

            let other = try #require(try RelStudent.dao.findById(orphan.id))
            t.clearLog()
            let loaded = try other.load(\.teacher)
            #expect(loaded == nil)
            #expect(t.statements == [Self.teacherById])

            // Changing teacher_id through the subscript: the next access loads the new one.
            other["teacher_id"] = li.id
            t.clearLog()
            #expect(other.teacher?.name == "Ms. Li")
            #expect(t.statements == [Self.teacherById])
            t.clearLog()
            #expect(other.teacher?.name == "Ms. Li")
            #expect(t.statements.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func changingTheKeyThroughTheSubscriptLoadsTheNewReference(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            let wang = try teacher("Mr. Wang")
            let ann = try student("Ann", teacher: li)
            let fresh = try #require(try RelStudent.dao.findById(ann.id))
            #expect(fresh.teacher?.name == "Ms. Li")
            fresh["teacher_id"] = wang.id
            t.clearLog()
            #expect(fresh.teacher?.name == "Mr. Wang")
            #expect(t.statements == [Self.teacherById])
            // Back to the first key: loaded again (one reference is kept, for the current key).
            fresh["teacher_id"] = li.id
            t.clearLog()
            #expect(fresh.teacher?.name == "Ms. Li")
            #expect(t.statements.count == 1)
            // A key set to NULL through the subscript reads nil without a query.
            fresh["teacher_id"] = nil
            t.clearLog()
            #expect(fresh.teacher == nil)
            #expect(t.statements.isEmpty)
            // A key assigned as a numeric string is the same key once saved.
            fresh["teacher_id"] = "\(wang.id!)"
            try fresh.update()
            if engine == .sqlite {
                #expect(try t.db.queryString("select typeof(teacher_id) from \"RelStudent\" where id = ?", ann.id) == "integer")
            }
            #expect(try RelStudent.dao.findById(ann.id)?.teacher?.name == "Mr. Wang")
        }
    }

    @Test(arguments: Engine.available) func loadThrowsWhereThePropertyReadsNil(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            let ann = try student("Ann", teacher: li)
            let fresh = try #require(try RelStudent.dao.findById(ann.id))
            try t.db.update(#"drop table "RelTeacher""#)
            #expect(fresh.teacher == nil)     // a failed load reads nil, never crashes
            let again = try #require(try RelStudent.dao.findById(ann.id))
            let error = try #require(throws: DatabaseError.self) { try again.load(\.teacher) }
            #expect(error.message.contains("RelTeacher"))
        }
    }

    @Test(arguments: Engine.available) func theReferenceIsLoadedThroughTheStudentsConfig(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            try teacher("main teacher")
            let other = try DbContext.inMemory(configName: "other")
            other.register(RelTeacher.self, RelStudent.self)
            try other.start()
            defer { other.stop() }
            let otherTeacher = RelTeacher()
            otherTeacher.name = "other teacher"
            try otherTeacher.use("other").save()
            #expect(otherTeacher.id == 1)
            let s = RelStudent()
            s.name = "s"
            s["teacher_id"] = 1
            try s.use("other").save()
            let found = try #require(try RelStudent.dao.use("other").findById(s.id))
            #expect(found.teacher?.name == "other teacher")
            #expect(found.teacher?.configName == "other")
            let fromMain = try #require(try RelStudent.dao.use("other").findById(s.id)).use(nil)
            #expect(fromMain.teacher?.name == "main teacher")
        }
    }

    // MARK: 2. To-many

    @Test(arguments: Engine.available) func childrenAreFoundByForeignKey(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            let wang = try teacher("Mr. Wang")
            let nobody = try teacher("Nobody")
            try student("Ann", teacher: li)
            try student("Carl", teacher: wang)
            try student("Bob", teacher: li)
            try student("Dora", teacher: nil)

            let fresh = try #require(try RelTeacher.dao.findById(li.id))
            t.clearLog()
            let students = fresh.students
            #expect(t.statements == [#"SELECT * FROM "RelStudent" WHERE "teacher_id" = ?"#])
            #expect(students.map { $0.name ?? "?" }.sorted() == ["Ann", "Bob"])
            #expect(students.allSatisfy { $0.teacher?.id == li.id })
            #expect(wang.students.map(\.name) == ["Carl"])
            #expect(nobody.students.isEmpty)

            // One query per access, never cached: a new student shows at the next access.
            t.clearLog()
            _ = li.students
            _ = li.students
            #expect(t.statements.count == 2)
            try student("Eve", teacher: li)
            #expect(li.students.map { $0.name ?? "?" }.sorted() == ["Ann", "Bob", "Eve"])

            // A teacher not yet saved has no children and runs no query.
            t.clearLog()
            #expect(RelTeacher().students.isEmpty)
            #expect(t.statements.isEmpty)
            // A deleted teacher's students keep the (now dangling) key.
            let nobodyId = try #require(nobody.id)
            try nobody.delete()
            #expect(nobody.students.isEmpty)
            #expect(try RelStudent.dao.countByCondition("teacher_id = ?", nobodyId) == 0)
        }
    }

    @Test(arguments: Engine.available) func childrenOfAFailedQueryReadEmpty(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            try student("Ann", teacher: li)
            #expect(li.students.count == 1)
            try t.db.update(#"drop table "RelStudent""#)
            #expect(li.students.isEmpty)
        }
    }

    /// A relation read that fails cannot throw (a property), but it is not silent: the context's
    /// logger gets a warning naming the model, the property and the error, once per error.
    @Test(arguments: Engine.available) func aFailedRelationReadIsLogged(engine: Engine) throws {
        let log = CapturedLog()
        var options = DbContext.Options()
        options.logger = log.logger
        try withDatabase(options: options, engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            let ann = try student("Ann", teacher: li)
            try student("Bob", teacher: try teacher("Mr. Wang"))
            let fresh = try RelStudent.dao.findAll()
            #expect(fresh.count == 2)
            #expect(fresh.allSatisfy { $0.teacher != nil })
            #expect(log.warnings.isEmpty)

            try t.db.update(#"drop table "RelTeacher""#)
            // Another key, another model: still one warning (the error's text may name the key).
            for student in fresh { student["teacher_id"] = (student["teacher_id"] as Int? ?? 0) + 100 }
            #expect(fresh.allSatisfy { $0.teacher == nil })
            #expect(fresh[0].teacher == nil)
            #expect(ann.name == "Ann")
            let references = log.warnings.filter { $0.contains("@Reference") }
            #expect(references.count == 1)
            #expect(references.first?.contains(#""teacher" of RelStudent"#) == true)
            #expect(references.first?.contains("RelTeacher") == true && references.first?.contains(#"load(\.teacher)"#) == true)

            try t.db.update(#"drop table "RelStudent""#)
            #expect(li.students.isEmpty)
            #expect(li.students.isEmpty)
            let children = log.warnings.filter { $0.contains("@Children") }
            #expect(children.count == 1)
            #expect(children.first?.contains("RelStudent by teacher_id") == true && children.first?.contains("of RelTeacher") == true)
        }
    }

    /// A reference set to a model with no id yet stores NULL, and says so (once per property).
    @Test func aReferenceToAnUnsavedModelWarns() throws {
        let log = CapturedLog()
        var options = DbContext.Options()
        options.logger = log.logger
        try withDatabase(options: options) { t throws in
            register(t)
            let ann = RelStudent()
            ann.teacher = try teacher("Ms. Li")
            #expect(log.warnings.isEmpty)
            let unsaved = RelTeacher()
            ann.teacher = unsaved
            ann.teacher = unsaved
            let stored: Int? = ann["teacher_id"]
            #expect(stored == nil && ann.teacher == nil)
            #expect(log.warnings.count == 1)
            #expect(log.warnings.first?.contains(#"@Reference "teacher" of RelStudent to a RelTeacher with no id"#) == true)
            #expect(log.warnings.first?.contains(#""teacher_id" is set to NULL"#) == true)
        }
    }

    // MARK: 3. Preload

    @Test(arguments: Engine.available) func preloadLoadsEveryTeacherInOneQuery(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let teachers = try t.db.transaction { _ in try (0..<10).map { try teacher("T\($0)") } }
            try t.db.transaction { _ in
                for i in 0..<100 { try student("S\(i)", teacher: teachers[i % 10]) }
            }
            t.clearLog()
            let students = try RelStudent.dao.findAll()
            try RelStudent.dao.preload(\.teacher, in: students)
            #expect(students.count == 100)
            #expect(t.statements.count == 2)
            #expect(t.statements.last?.hasPrefix(#"SELECT * FROM "RelTeacher" WHERE "id" IN ("#) == true)
            // Ten distinct keys: ten parameters, not a hundred.
            #expect(t.statements.last?.filter { $0 == "?" }.count == 10)

            t.clearLog()
            for student in students {
                let index = Int(student.name!.dropFirst())!
                #expect(student.teacher?.name == "T\(index % 10)")
                #expect(student.teacher?.id == teachers[index % 10].id)
            }
            #expect(t.statements.isEmpty)
            // Students sharing a teacher share the loaded instance.
            #expect(students[0].teacher === students[10].teacher)

            // A key changed after preload loads again, once.
            students[0]["teacher_id"] = teachers[5].id
            t.clearLog()
            #expect(students[0].teacher?.name == "T5")
            #expect(t.statements.count == 1)

            // An empty list runs nothing.
            t.clearLog()
            try RelStudent.dao.preload(\.teacher, in: [])
            #expect(t.statements.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func preloadWithNullAndDanglingKeys(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let teachers = try t.db.transaction { _ in try (0..<10).map { try teacher("T\($0)") } }
            try t.db.transaction { _ in
                for i in 0..<100 { try student("S\(i)", teacher: teachers[i % 10]) }
            }
            // Every 7th: NULL; every 11th (not 7th): a key no teacher has.
            try t.db.update("update \"RelStudent\" set teacher_id = null where cast(substr(name, 2) as integer) % 7 = 0")
            try t.db.update("update \"RelStudent\" set teacher_id = 5000 + id where cast(substr(name, 2) as integer) % 7 <> 0 and cast(substr(name, 2) as integer) % 11 = 0")
            t.clearLog()
            let students = try RelStudent.dao.findAll()
            try RelStudent.dao.preload(\.teacher, in: students)
            #expect(t.statements.count == 2)
            t.clearLog()
            var nils = 0
            for student in students {
                let index = Int(student.name!.dropFirst())!
                if index % 7 == 0 || index % 11 == 0 {
                    #expect(student.teacher == nil, "S\(index)")
                    nils += 1
                } else {
                    #expect(student.teacher?.name == "T\(index % 10)", "S\(index)")
                }
            }
            #expect(nils == 15 + 8)   // multiples of 7 in 0..<100: 15; of 11 but not 7: 11,22,…,99 minus 77 = 8
            #expect(t.statements.isEmpty)   // missing ones are remembered as missing
            #expect(try students.first { $0.name == "S11" }!.load(\.teacher) == nil)
            #expect(t.statements.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func preloadOnABadKeyPathThrows(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            try student("Ann", teacher: try teacher("Ms. Li"))
            let students = try RelStudent.dao.findAll()
            // A computed property of the right type is not a @Reference.
            #expect(throws: DicRecordError.self) { try RelStudent.dao.preload(\.computedTeacher, in: students) }
        }
    }

    // MARK: 4. Transactions

    @Test(arguments: Engine.available) func modelsInsideATransactionCommitOrRollBackWithIt(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let li = try teacher("Ms. Li")
            #expect(try RelTeacher.dao.count() == 1)

            // return false: everything rolls back (insert, update, delete).
            let rolledBack = try t.db.tx { _ in
                let x = try teacher("rolled back")
                #expect(x.id != nil)
                #expect(try RelTeacher.dao.count() == 2)   // visible inside
                li.name = "renamed"
                try li.update()
                try student("inside", teacher: li)
                return false
            }
            #expect(rolledBack == false)
            #expect(try RelTeacher.dao.count() == 1)
            #expect(try RelStudent.dao.count() == 0)
            #expect(try RelTeacher.dao.findById(li.id)?.name == "Ms. Li")

            // return true: committed.
            let committed = try t.db.tx { _ in
                try teacher("committed")
                try student("inside", teacher: li)
                return true
            }
            #expect(committed)
            #expect(try RelTeacher.dao.count() == 2)
            #expect(try RelStudent.dao.findAll().map(\.name) == ["inside"])

            // A throw rolls back and is rethrown unchanged.
            #expect(throws: Boom(code: 7)) {
                try t.db.tx { _ in
                    try teacher("thrown")
                    try li.delete()
                    throw Boom(code: 7)
                }
            }
            #expect(try RelTeacher.dao.count() == 2)
            #expect(try RelTeacher.dao.findById(li.id)?.name == "Ms. Li")
            #expect(try RelTeacher.dao.findFirstByCondition("name = ?", "thrown") == nil)

            // The static Db.tx runs on main too.
            #expect(try Db.tx { _ in try teacher("static"); return false } == false)
            #expect(try RelTeacher.dao.count() == 2)

            // A database error from a model write inside rolls back the rest.
            #expect(throws: DatabaseError.self) {
                try t.db.tx { _ in
                    try teacher("before error")
                    let dup = RelTeacher()
                    dup.id = li.id    // primary key taken
                    dup.name = "dup"
                    try dup.save()
                    return true
                }
            }
            #expect(try RelTeacher.dao.count() == 2)
            #expect(try RelTeacher.dao.findFirstByCondition("name = ?", "before error") == nil)
            #expect(try !t.db.onWriter { $0.isInTransaction })
        }
    }

    @Test(arguments: Engine.available) func aModelOfAnotherConfigIsNotPartOfMainsTransaction(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            register(t)
            let other = try DbContext.inMemory(configName: "other")
            other.register(RelTeacher.self, RelStudent.self)
            try other.start()
            defer { other.stop() }

            let result = try t.db.tx { _ in
                try teacher("main, rolled back")
                let elsewhere = RelTeacher()
                elsewhere.name = "other, kept"
                try elsewhere.use("other").save()
                #expect(elsewhere.id == 1)
                return false
            }
            #expect(result == false)
            #expect(try RelTeacher.dao.count() == 0)
            #expect(try RelTeacher.dao.use("other").findAll().map(\.name) == ["other, kept"])
            #expect(try Db.use("other").queryString("select name from \"RelTeacher\"") == "other, kept")

            // And the other way round: other's tx rolling back leaves main's write.
            _ = try Db.use("other").tx { _ in
                try teacher("main, kept")
                try RelTeacher().use("other").save()
                return false
            }
            #expect(try RelTeacher.dao.findAll().map(\.name) == ["main, kept"])
            #expect(try RelTeacher.dao.use("other").count() == 1)
        }
    }
}

extension RelStudent {
    /// Not a @Reference: preload must refuse it.
    var computedTeacher: RelTeacher? { nil }
}
