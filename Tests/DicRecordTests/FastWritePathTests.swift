import Foundation
import Testing
@testable import DicRecord

// The shortcuts of the write path: a `@Column` write finds its column through the schema's slot
// table once the class has a schema, and a thread answers "do I hold this writer?" without
// hashing when it holds none or one. Each test fails if a shortcut answers for the wrong column
// or the wrong pool.

class WriteBase: Model {
    @Column var a: Int = 0
    @Column var b: String?
}

final class WriteSub: WriteBase {
    @Column var c: Int = 0
    @Column var d: [String]?          // JSON: never in the slot table, always resolved by name
    @Column var e: Double?
    override class var tableName: String { "write_sub" }
}

/// Writes its own columns in `init()`, which building its schema runs: those writes cannot use
/// a schema (none exists yet) and must still land in their columns.
final class WritesInInit: Model {
    @Column var x: Int = 0
    @Column var y: String?
    required init() {
        super.init()
        x = 7
        y = "set in init"
    }
    override class var tableName: String { "writes_in_init" }
}

/// Columns with a reference and children declared between them (both count in the slot numbering
/// or not, as the schema counts them).
final class MixedFields: Model {
    @Column var first: Int = 0
    @Reference var teacher: RelTeacher?
    @Children(foreignKey: "teacher_id") var students: [RelStudent]
    @Column var second: Int = 0
    @Column var third: String?
    override class var tableName: String { "mixed_fields" }
}

/// Codable, with no converter until a test registers one (after the model's schema is built).
struct LateMoney: Codable, Equatable {
    var cents: Int
}

struct LateMoneyConverter: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: LateMoney) throws -> DatabaseValue { .integer(Int64(value.cents)) }
    func decode(_ value: DatabaseValue) throws -> LateMoney {
        guard case .integer(let cents) = value else { throw ConversionError.cannotDecode(value, to: LateMoney.self, "expected cents") }
        return LateMoney(cents: Int(cents))
    }
}

final class LatePrice: Model {
    @Column var price: LateMoney?
    override class var tableName: String { "late_price" }
}

@Suite("Fast write paths")
struct FastWritePathTests {
    @Test func columnWritesOfNewModelsLandInTheirColumns() throws {
        try withDatabase { t throws in
            t.context.register(WriteSub.self)
            // The schema exists now (registration built it): every write below may take the table.
            for round in 0..<3 {
                let m = WriteSub()
                m.e = Double(round) + 0.5
                m.c = 30 + round
                m.a = 10 + round
                m.d = ["d\(round)"]
                m.b = "b\(round)"
                #expect(m.modifiedColumns.sorted() == ["a", "b", "c", "d", "e"])
                #expect(try m.record.get("a", as: Int.self) == 10 + round)
                #expect(try m.record.get("b", as: String.self) == "b\(round)")
                #expect(try m.record.get("c", as: Int.self) == 30 + round)
                #expect(try m.record.get("d", as: String.self) == #"["d\#(round)"]"#)
                #expect(try m.record.get("e", as: Double.self) == Double(round) + 0.5)
                #expect(try m.save())
            }
            let rows = try t.db.find("select a, b, c, d, e from write_sub order by id")
            #expect(rows.map { $0["a"] as Int? } == [10, 11, 12])
            #expect(rows.map { $0["b"] as String? } == ["b0", "b1", "b2"])
            #expect(rows.map { $0["c"] as Int? } == [30, 31, 32])
            #expect(rows.map { $0["d"] as String? } == [#"["d0"]"#, #"["d1"]"#, #"["d2"]"#])
            #expect(rows.map { $0["e"] as Double? } == [0.5, 1.5, 2.5])
            // And a fetched model's writes (its schema is its map's) overwrite the right columns.
            let found = try #require(try WriteSub.dao.findFirst("select * from write_sub where a = ?", 11))
            found.c = 99
            found.b = nil
            #expect(try found.update())
            #expect(try t.db.find("select b, c from write_sub where a = 11").map { [$0["b"] as String?, ($0["c"] as Int?).map(String.init)] }
                    == [[nil, "99"]])
        }
    }

    @Test func slotsCountReferencesAndSkipChildrenAsTheSchemaDoes() throws {
        try withDatabase { t throws in
            t.context.register(RelTeacher.self, RelStudent.self, MixedFields.self)
            for round in 0..<3 {
                let m = MixedFields()
                m.third = "t\(round)"
                m.second = 20 + round
                m.first = 10 + round
                #expect(try m.record.get("first", as: Int.self) == 10 + round)
                #expect(try m.record.get("second", as: Int.self) == 20 + round)
                #expect(try m.record.get("third", as: String.self) == "t\(round)")
                #expect(try m.save())
            }
            #expect(try t.db.find("select first, second, third from mixed_fields order by id").map {
                "\($0["first"] as Int? ?? -1) \($0["second"] as Int? ?? -1) \($0["third"] as String? ?? "-")"
            } == ["10 20 t0", "11 21 t1", "12 22 t2"])
        }
    }

    /// A base class's column written on base and subclass models: each class's own table answers.
    @Test func aBaseKeyPathWrittenOnBothClassesLandsInItsColumn() throws {
        try withDatabase { t throws in
            t.context.register(WriteSub.self, WriteBase.self)
            for round in 0..<2 {
                let sub = WriteSub()
                sub.c = 3
                sub.b = "sub\(round)"
                sub.a = round
                let base = WriteBase()
                base.b = "base\(round)"
                base.a = 100 + round
                #expect(try sub.record.get("a", as: Int.self) == round)
                #expect(try sub.record.get("b", as: String.self) == "sub\(round)")
                #expect(try sub.record.get("c", as: Int.self) == 3)
                #expect(try base.record.get("a", as: Int.self) == 100 + round)
                #expect(try base.record.get("b", as: String.self) == "base\(round)")
                #expect(base.columnNames.sorted() == ["a", "b", "id"])
            }
        }
    }

    /// The schema took `price` for JSON (no converter then); a converter registered afterwards is
    /// what the first write sees. Every later write must store the value the same way.
    @Test func writesOfAColumnStoredAsJSONByTheSchemaEncodeAlike() throws {
        try withDatabase { t throws in
            t.context.register(LatePrice.self)
            Converters.register(LateMoneyConverter())
            for cents in [150, 275, 300] {
                let m = LatePrice()
                m.price = LateMoney(cents: cents)
                #expect(try m.save())
            }
            let stored = try t.db.find("select typeof(price) as kind, price from late_price order by id")
            #expect(Set(stored.map { $0["kind"] as String? }).count == 1)
            #expect(stored.map { $0["price"] as Int? } == [150, 275, 300])
        }
    }

    @Test func writesInAModelsOwnInitLandInTheirColumns() throws {
        try withDatabase { t throws in
            // Registering builds the schema, which runs `init()` and its writes before any schema exists.
            t.context.register(WritesInInit.self)
            let m = WritesInInit()
            #expect(m.x == 7)
            #expect(m.y == "set in init")
            m.x = 8
            #expect(try m.save())
            let row = try #require(try t.db.findFirst("select x, y from writes_in_init"))
            #expect(row["x"] as Int? == 8)
            #expect(row["y"] as String? == "set in init")
        }
    }

    /// A thread holding two pools' writers (a transaction on one config, inside it one on another)
    /// takes the hashed path; holding one, the shortcut. Each write must join its own config's
    /// transaction: rolling back the inner one keeps the outer's row, and the other way round.
    @Test func nestedTransactionsOnTwoConfigsEachJoinTheirOwn() throws {
        try withDatabase { t throws in
            try t.db.update("create table t (v integer)")
            let other = try DbContext(path: t.folder.appendingPathComponent("other.sqlite").path, configName: "other")
            try other.start()
            defer { other.stop() }
            let second = Db.use("other")
            try second.update("create table u (v integer)")
            struct Undo: Error {}
            try t.db.tx { db in
                try db.update("insert into t (v) values (1)")
                #expect(throws: Undo.self) {
                    try second.tx { inner in
                        try inner.update("insert into u (v) values (1)")
                        // Both writers held by this thread now: each call goes to its own.
                        try db.update("insert into t (v) values (2)")
                        #expect(try inner.queryInt("select count(*) from u") == 1)
                        throw Undo()
                    }
                }
                // Only the inner transaction was rolled back; the write to t inside it was the outer's.
                #expect(try db.queryInt("select count(*) from t") == 2)
                try second.update("insert into u (v) values (2)")
                return true
            }
            #expect(try t.db.query("select v from t order by v", as: Int.self) == [1, 2])
            #expect(try second.query("select v from u", as: Int.self) == [2])
            #expect(try t.context.pool().isWriterHeldByCurrentThread == false)
        }
    }
}
