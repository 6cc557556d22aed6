import Foundation
import Testing
@testable import DicRecord

// The table a model declares: keys (implicit id, TEXT, composite), column types and constraints,
// quoted identifiers, and what the dao does with each kind of key.

final class KeyCountry: Model {
    @Column var code: String?
    @Column var name: String?
    override class var primaryKey: String { "code" }
}

final class KeyEnrollment: Model {
    @Column var studentId: Int?
    @Column var courseId: Int?
    @Column var grade: Double?
    override class var primaryKey: String { "studentId, courseId" }
}

/// Keywords as table and column names.
final class KeyOrder: Model {
    @Column var index: Int?
    @Column var group: String?
    @Column var amount: Int?
    override class var tableName: String { "order" }
    override class func constraint(for column: String) -> String? {
        switch column {
        case "amount": "DEFAULT 7 CHECK (amount >= 0)"
        case "group": "COLLATE NOCASE"
        default: nil
        }
    }
    override class var indexes: [Index] { [Index("group", "index", unique: true)] }
}

@Suite("Model keys and table definitions")
struct ModelKeyTests {
    private func createSQL(_ t: TestDatabase, _ table: String) throws -> String? {
        try t.db.queryString("select sql from sqlite_master where type = 'table' and name = ?", table)
    }

    @Test func theImplicitKeyIsAnAutoincrementId() throws {
        try withDatabase { t throws in
            t.context.register(PSStudent.self)
            #expect(try createSQL(t, "student") == #"CREATE TABLE "student" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "name" TEXT, "age" INTEGER, "date" REAL)"#)
            let a = PSStudent(); try a.save()
            let b = PSStudent(); try b.save()
            try b.delete()
            let c = PSStudent(); try c.save()
            #expect([a.id, b.id, c.id] == [1, 2, 3])   // AUTOINCREMENT: a deleted id is never reused
        }
    }

    @Test func aTextKey() throws {
        try withDatabase { t throws in
            t.context.register(KeyCountry.self)
            #expect(try createSQL(t, "KeyCountry") == #"CREATE TABLE "KeyCountry" ("code" TEXT NOT NULL PRIMARY KEY, "name" TEXT)"#)
            let fr = KeyCountry(); fr.code = "FR"; fr.name = "France"
            try fr.save()
            #expect(fr.id == nil)   // no id column, nothing written back
            let found = try #require(try KeyCountry.dao.findById("FR"))
            #expect(found.name == "France")
            found.name = "République française"
            #expect(try found.update())
            #expect(try KeyCountry.dao.findById("FR")?.name == "République française")
            // A missing key is refused (NOT NULL), a duplicate is a constraint error.
            let noKey = KeyCountry(); noKey.name = "?"
            #expect(throws: DatabaseError.self) { try noKey.save() }
            let duplicate = KeyCountry(); duplicate.code = "FR"
            let error = try #require(throws: DatabaseError.self) { try duplicate.save() }
            #expect(error.resultCode == 19)
            #expect(try KeyCountry.dao.count() == 1)
            #expect(try KeyCountry.dao.deleteById("FR"))
            #expect(try KeyCountry.dao.count() == 0)
        }
    }

    @Test func aCompositeKey() throws {
        try withDatabase { t throws in
            t.context.register(KeyEnrollment.self)
            #expect(try createSQL(t, "KeyEnrollment") == #"CREATE TABLE "KeyEnrollment" ("studentId" INTEGER NOT NULL, "courseId" INTEGER NOT NULL, "grade" REAL, PRIMARY KEY ("studentId", "courseId"))"#)
            for (s, c, g) in [(1, 1, 3.5), (1, 2, 4.0), (2, 1, 2.5)] {
                let e = KeyEnrollment(); e.studentId = s; e.courseId = c; e.grade = g
                try e.save()
            }
            let e = try #require(try KeyEnrollment.dao.findByIds(1, 2))
            #expect(e.grade == 4.0)
            e.grade = 4.5
            t.clearLog()
            #expect(try e.update())
            #expect(t.statements == [#"UPDATE "KeyEnrollment" SET "grade" = ? WHERE "studentId" = ? AND "courseId" = ?"#])
            #expect(try KeyEnrollment.dao.findByIds(1, 2)?.grade == 4.5)
            #expect(try KeyEnrollment.dao.findByIds(2, 2) == nil)
            #expect(try e.delete())
            #expect(try KeyEnrollment.dao.count() == 2)
            // Wrong number of key values is an argument-count error, not a silent NULL.
            #expect(throws: DicRecordError.self) { try KeyEnrollment.dao.findByIds(1) }
        }
    }

    @Test func keywordNamesAreQuotedAndConstraintsApplied() throws {
        try withDatabase { t throws in
            t.context.register(KeyOrder.self)
            #expect(try createSQL(t, "order") == #"CREATE TABLE "order" ("id" INTEGER PRIMARY KEY AUTOINCREMENT, "index" INTEGER, "group" TEXT COLLATE NOCASE, "amount" INTEGER DEFAULT 7 CHECK (amount >= 0))"#)
            let o = KeyOrder(); o.index = 1; o.group = "A"
            try o.save()
            #expect(try KeyOrder.dao.findById(o.id)?.amount == 7)   // the constraint's DEFAULT
            let negative = KeyOrder(); negative.amount = -1
            let error = try #require(throws: DatabaseError.self) { try negative.save() }
            #expect(error.extendedResultCode == 275)   // SQLITE_CONSTRAINT_CHECK
            // The unique index on ("group", "index") is case-insensitive through the collation.
            let clash = KeyOrder(); clash.index = 1; clash.group = "a"
            #expect(throws: DatabaseError.self) { try clash.save() }
            #expect(try KeyOrder.dao.findByCondition(#""group" = ?"#, "a").count == 1)
            #expect(try KeyOrder.dao.count("index") == 1)
            let max: Int? = try KeyOrder.dao.max("index")
            #expect(max == 1)
        }
    }
}
