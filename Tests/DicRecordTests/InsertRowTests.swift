import Foundation
import Testing
@testable import DicRecord

final class KeyInTheMiddle: Model {
    @Column var a: Int = 0
    @Column var b: String?
    @Column var c: Double = 0
}

/// An INSERT binds the record's own stored values, leaving out a NULL key wherever it sits, and
/// the generated key is written back to that column, not a neighbour.
@Suite struct InsertRowTests {
    /// A batch reuses the key's position of its first snapshot while the layout is the same:
    /// a key supplied in that layout is bound, a NULL one left out, and another layout finds its own.
    @Test func aBatchFindsTheKeyOfEachLayout() throws {
        try withDatabase { t in
            try t.db.update("create table k (id integer primary key, a integer)")
            let records = try [Record(["id": nil, "a": 1]), Record(["id": 5, "a": 2]), Record(["id": nil, "a": 3]),
                               Record(["a": 4, "id": nil]), Record(["a": 5])]
            #expect(try t.db.batchSave("k", records) == [1, 1, 1, 1, 1])
            #expect(records.map { $0["id"] as Int? } == [1, 5, 6, 7, 8])
            let rows = try t.db.find("select id, a from k order by id")
            #expect(rows.map { [$0["id"] as Int?, $0["a"] as Int?] } == [[1, 1], [5, 2], [6, 3], [7, 4], [8, 5]])
            // A snapshot "like" another of the same layout takes its key position; of another layout, its own.
            let shape = try records[0].insertSnapshot(key: "id").shape
            let other = try Record(["a": 9, "id": nil])
            #expect(try other.insertSnapshot(key: "id", like: shape).omitted == 1)
        }
    }

    /// Two model classes saved in turn each get their own schema (`ModelSchema.of` answers the
    /// class asked last without its lock).
    @Test func modelsOfTwoClassesSavedInTurnKeepTheirTables() throws {
        try withDatabase { t in
            t.context.register(KeyInTheMiddle.self, UndoPupil.self)
            for n in 0..<5 {
                let k = KeyInTheMiddle(); k.a = n; k.b = "b\(n)"
                let p = UndoPupil(); p.name = "p\(n)"; p.age = n
                try k.save(); try p.save()
                #expect(ModelSchema.of(KeyInTheMiddle.self).tableName != ModelSchema.of(UndoPupil.self).tableName)
            }
            #expect(try KeyInTheMiddle.dao.count() == 5 && UndoPupil.dao.count() == 5)
            #expect(try KeyInTheMiddle.dao.find("select * from \(ModelSchema.of(KeyInTheMiddle.self).tableName) order by id").map(\.a) == [0, 1, 2, 3, 4])
        }
    }

    @Test(arguments: Engine.available) func aNullKeyAnywhereIsLeftOutAndFilledBack(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try t.db.update(t.db.ddl("create table p (a integer, id integer primary key, b text, c real)"))
            let first = try Record(["a": 1, "id": nil, "b": "x", "c": 1.5])
            let second = try Record(["a": 2, "id": nil, "b": "y", "c": 2.5])
            let last = try Record(["a": 3, "b": "z", "c": 3.5, "id": nil])
            #expect(try t.db.batchSave("p", [first, second, last]) == [1, 1, 1])
            #expect(first.toDictionary().mapValues { "\($0 ?? "nil")" } == ["a": "1", "id": "1", "b": "x", "c": "1.5"])
            #expect(second["id"] as Int? == 2 && second["a"] as Int? == 2 && second["b"] as String? == "y")
            #expect(last["id"] as Int? == 3 && last["c"] as Double? == 3.5)
            let rows = try t.db.find("select a, id, b, c from p order by id")
            #expect(rows.map { [$0["a"] as Int?, $0["id"] as Int?] } == [[1, 1], [2, 2], [3, 3]])
            #expect(rows.map { $0["b"] as String? } == ["x", "y", "z"])
            #expect(rows.map { $0["c"] as Double? } == [1.5, 2.5, 3.5])
            #expect([first, second, last].allSatisfy { $0.modifiedColumns.isEmpty })
        }
    }

    /// A record saved, then written: the save's view of its values does not see the write, and
    /// the write does not change what was saved.
    @Test(arguments: Engine.available) func aWriteAfterASaveIsTheRecordsOwn(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(KeyInTheMiddle.self)
            let model = KeyInTheMiddle()
            model.a = 5
            model.b = "five"
            model.c = 0.5
            try model.save()
            let id = try #require(model.id)
            model.b = "six"
            #expect(model.b == "six")
            #expect(try KeyInTheMiddle.dao.findById(id)?.b == "five")
            try model.update()
            #expect(try KeyInTheMiddle.dao.findById(id)?.b == "six")
            // A second model saved through the same statement gets its own key.
            let other = KeyInTheMiddle()
            other.a = 6
            try other.save()
            #expect(other.id == id + 1 && other.a == 6 && other.b == nil)
        }
    }

    /// A record's own values are bound in place in two runs around the omitted key; a fetched
    /// record's (a block's) by position. A value SQLite refuses is named by its parameter either way.
    @Test func boundInPlaceOrByPositionTheValuesLandInTheirColumns() throws {
        try withDatabase { t throws in
            try t.db.update("create table p (a integer, id integer primary key, b text, c real)")
            let fetched = try #require(try t.db.findFirst("select 7 as a, null as id, 'q' as b, 0.25 as c"))
            #expect(try t.db.save("p", fetched))
            #expect(try t.db.save("p", try Record(["a": 8, "id": nil, "b": "r", "c": 0.5])))
            #expect(try t.db.save("p", try Record(["id": nil, "a": 9, "b": "s", "c": 0.75])))
            #expect(try t.db.save("p", try Record(["a": 10, "b": "t", "c": 1.0, "id": nil])))
            let rows = try t.db.find("select a, id, b, c from p order by id")
            #expect(rows.map { "\($0["a"] as Int? ?? -1) \($0["id"] as Int? ?? -1) \($0["b"] as String? ?? "-") \($0["c"] as Double? ?? -1)" }
                    == ["7 1 q 0.25", "8 2 r 0.5", "9 3 s 0.75", "10 4 t 1.0"])
            #expect([fetched["id"] as Int?] == [1])
            // After the omitted key: the third column is the second parameter.
            let refused = try Record(["a": 11, "id": nil, "b": DatabaseValue.real(.nan)])
            let error = try #require(throws: DicRecordError.self) { try t.db.save("p", refused) }
            #expect(error.message.contains("argument 2: REAL NaN"))
            let before = try Record(["a": DatabaseValue.real(.nan), "id": nil, "b": "u"])
            let first = try #require(throws: DicRecordError.self) { try t.db.save("p", before) }
            #expect(first.message.contains("argument 1: REAL NaN"))
            #expect(try t.db.queryInt("select count(*) from p") == 4)
        }
    }

    /// The values of an INSERT as a trace or error shows them: the key left out.
    @Test func theArgumentsOfARowLeaveTheKeyOut() throws {
        let record = try Record(["a": 1, "id": nil, "b": "x"])
        let row = try record.insertSnapshot(key: "id")
        #expect(row.omitted == 1 && row.keyIsMissing)
        #expect(row.values == [.integer(1), .text("x")])
        let keyed = try Record(["id": 9, "a": 1]).insertSnapshot(key: "id")
        #expect(keyed.omitted == nil && !keyed.keyIsMissing && keyed.values == [.integer(9), .integer(1)])
        let keyless = try Record(["a": 1]).insertSnapshot(key: "id")
        #expect(keyless.omitted == nil && keyless.keyIsMissing && keyless.values == [.integer(1)])
    }
}
