import Foundation
import Testing
@testable import DicRecord
@_spi(Reflection) import Swift

// A SQLite fetch of a model whose declared columns are all integers or doubles fills each model's
// `@Column` wrappers as the rows are stepped (`Db.streamRows`, `LayoutMap.read`, `store`): no block of rows
// is kept, a property read is a load from the model, and the record, when something needs one,
// is made from the wrappers. These pin that every way of reaching a value sees what the table
// holds, exactly, on both engines (PostgreSQL's models read their rows, as any other fetch).

final class WrapperItem: Model {
    @Column var count: Int = 7
    @Column var maybe: Int?
    @Column var big: Int64 = -1
    @Column var bigMaybe: Int64?
    @Column var ratio: Double = 0.5
    @Column var ratioMaybe: Double? = 2.5
    override class var tableName: String { "wrapper_item" }
}

/// Counts the `didLoad` calls it sees, and what `count` read there.
final class LoadCountingItem: Model {
    nonisolated(unsafe) static var loaded: [Int] = []   // Touched by one test, on its own thread.
    @Column var count: Int = 0
    override class var tableName: String { "load_counting_item" }
    override func didLoad() { Self.loaded.append(count) }
}

@Suite("A fetch fills the models' @Column wrappers")
struct ModelWrapperLoadTests {
    private func withItems<T>(_ engine: Engine, _ body: (TestDatabase) throws -> T) throws -> T {
        try withDatabase(engine: engine) { t throws in
            t.context.register(WrapperItem.self)
            let item = WrapperItem()
            item.count = 42; item.maybe = -3; item.big = Int64.max; item.bigMaybe = Int64.min
            item.ratio = 1.25; item.ratioMaybe = nil
            try item.save()
            let other = WrapperItem()
            other.count = -1; other.maybe = nil; other.big = 0; other.bigMaybe = nil
            other.ratio = -0.125; other.ratioMaybe = 1e300
            try other.save()
            return try body(t)
        }
    }

    @Test(arguments: Engine.available) func everyKindReadsBackThroughItsPropertyAndItsRecord(engine: Engine) throws {
        try withItems(engine) { t throws in
            let fetched = try WrapperItem.dao.find("select * from wrapper_item order by id")
            #expect(fetched.count == 2)
            let (first, second) = (fetched[0], fetched[1])
            #expect(first.valuesInWrappers == (engine == .sqlite))
            #expect(first.fetchedRow == nil || engine != .sqlite)   // no row kept
            #expect(first.id == 1 && second.id == 2)
            #expect(first.count == 42 && first.maybe == -3 && first.big == Int64.max && first.bigMaybe == Int64.min)
            #expect(first.ratio == 1.25 && first.ratioMaybe == nil)   // NULL reads nil, not the initial 2.5
            #expect(second.count == -1 && second.maybe == nil && second.big == 0 && second.bigMaybe == nil)
            #expect(second.ratio == -0.125 && second.ratioMaybe == 1e300)
            // The record made from the wrappers holds the row as the table does, NULLs included.
            let expected = try t.db.find("select * from wrapper_item order by id")
            for (model, row) in zip(fetched, expected) {
                #expect(model.columnNames == row.columnNames)
                for name in row.columnNames {
                    #expect(model.record.storedValue(name) == row.storedValue(name), "column \(name)")
                }
                #expect(model.modifiedColumns.isEmpty)
                #expect(model.valuesInWrappers == false)   // the record is read from now on
            }
            // After the record is made, the properties read the same values.
            #expect(first.count == 42 && first.big == Int64.max && first.ratioMaybe == nil)
            #expect(second.ratio == -0.125 && second.ratioMaybe == 1e300)
        }
    }

    /// A write leaves the wrappers: the record is made from them, the write lands in it, and the
    /// wrappers hold their initial values again (what a property reads for NULL).
    @Test(arguments: Engine.available) func aWriteMakesTheRecordAndTheWrappersGetTheirInitialValuesBack(engine: Engine) throws {
        try withItems(engine) { t throws in
            let first = try #require(try WrapperItem.dao.find("select * from wrapper_item order by id").first)
            first.count = 5
            #expect(first.count == 5 && first.big == Int64.max && first.ratio == 1.25 && first.ratioMaybe == nil)
            #expect(first.modifiedColumns == ["count"])
            #expect(try first.update())
            #expect(try t.db.queryInt("select count from wrapper_item where id = 1") == 5)
            #expect(try t.db.queryInt64("select big from wrapper_item where id = 1") == Int64.max)
            first["big"] = nil     // untyped: NULL in the record
            #expect(first.big == -1)             // the initial value, not the fetched one
            first["ratioMaybe"] = nil
            #expect(first.ratioMaybe == nil)
            let second = try #require(try WrapperItem.dao.findById(2))
            second["ratio"] = nil
            #expect(second.ratio == 0.5)
        }
    }

    /// A row whose values a wrapper cannot hold exactly (NULL in a non-optional column, TEXT
    /// that converts) is read as a row, as before; the rows around it still fill their wrappers.
    @Test(arguments: Engine.available) func aRowTheWrappersCannotHoldIsReadAsARow(engine: Engine) throws {
        try withItems(engine) { t throws in
            try t.db.update("insert into wrapper_item (count, big, ratio) values (0, 12, 3)")
            try t.db.update("insert into wrapper_item (count, big, ratio) values (13, 14, 4.5)")
            // The table's own columns are NOT NULL and typed: a SELECT gives the odd values.
            // (PostgreSQL's CASE takes one type: its counts are all TEXT there, and convert.)
            let count = engine == .sqlite ? "count" : "cast(count as text)"
            let sql = """
                select id, case when id = 3 then null when id = 4 then '13' else \(count) end as count, maybe,
                    big, "bigMaybe", case when id = 3 then 3 else ratio end as ratio, "ratioMaybe"
                from wrapper_item order by id
                """
            let fetched = try WrapperItem.dao.find(sql)
            let inWrappers = engine == .sqlite ? [true, true, false, false] : [false, false, false, false]
            #expect(fetched.map(\.valuesInWrappers) == inWrappers)   // NULL for an Int; INTEGER for a Double; TEXT
            #expect(fetched[2].count == 7)            // NULL reads the initial value
            #expect(fetched[2].record.storedValue("count") == .null)   // and the record keeps NULL
            #expect(fetched[2].big == 12 && fetched[2].ratio == 3)
            #expect(fetched[3].count == 13 && fetched[3].ratio == 4.5)
            #expect(fetched.map(\.id) == [1, 2, 3, 4])
            // A value no conversion takes stops the load, naming the column.
            #expect(throws: ConversionError.self) {
                try WrapperItem.dao.find("select id, case when id = 3 then 'x' else \(count) end as count from wrapper_item order by id")
            }
        }
    }

    /// A result with a column the model does not declare, or without its key, keeps its rows:
    /// the record must show them.
    @Test(arguments: Engine.available) func aResultWithOtherColumnsKeepsItsRows(engine: Engine) throws {
        try withItems(engine) { _ throws in
            let extra = try WrapperItem.dao.find("select *, count * 2 as doubled from wrapper_item order by id")
            #expect(extra.map(\.valuesInWrappers) == [false, false])
            #expect(extra[0]["doubled"] as Int? == 84 && extra[0].count == 42)
            let noKey = try WrapperItem.dao.find("select count, big from wrapper_item order by id")
            #expect(noKey.map(\.valuesInWrappers) == (engine == .sqlite ? [true, true] : [false, false]))
            #expect(noKey[0].id == nil && noKey[0].count == 42 && noKey[0].big == Int64.max)
            #expect(noKey[0].ratio == 0.5)                       // not selected: the initial value
            #expect(noKey[0].columnNames == ["count", "big"])
        }
    }

    /// `didLoad` runs once per model, after every row was read, and sees the values; a load that
    /// fails on a later row runs none.
    @Test func didLoadRunsAfterTheFetchAndNotForAFailedOne() throws {
        try withDatabase { t throws in
            t.context.register(LoadCountingItem.self)
            LoadCountingItem.loaded = []
            for n in 1...3 {
                let item = LoadCountingItem()
                item.count = n
                try item.save()
            }
            let fetched = try LoadCountingItem.dao.find("select * from load_counting_item order by id")
            #expect(fetched.map(\.valuesInWrappers) == [true, true, true])
            #expect(LoadCountingItem.loaded == [1, 2, 3])
            LoadCountingItem.loaded = []
            #expect(throws: ConversionError.self) {
                try LoadCountingItem.dao.find("select id, case when id = 3 then 'bad' else count end as count from load_counting_item order by id")
            }
            #expect(LoadCountingItem.loaded.isEmpty)
        }
    }
}

final class TenIntModel: Model {
    @Column var i0 = 0; @Column var i1 = 0; @Column var i2 = 0; @Column var i3 = 0; @Column var i4 = 0
    @Column var i5 = 0; @Column var i6 = 0; @Column var i7 = 0; @Column var i8 = 0; @Column var i9 = 0
}

@Suite("A model's own bytes")
struct ModelSizeTests {
    /// The end of an instance's last stored property, from the field records.
    private func instanceEnd(of type: AnyClass) -> Int {
        var end = 0
        func size<T>(_: T.Type) -> Int { MemoryLayout<T>.size }
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { _, offset, fieldType, _ in
            end = max(end, offset + _openExistential(fieldType, do: size))
            return true
        }
        return end
    }

    /// Every model carries the base class's fields; a fetch makes one per row, so each word is
    /// paid per row (the wall clock of `dao.find` follows the bytes). 40 bytes after the object
    /// header: a field added to `Model` should be weighed against this test. A model of ten
    /// `Int` columns is 136 bytes, a 144-byte block from malloc.
    @Test func theBaseClassTakesFortyBytesAfterTheHeader() {
        #expect(instanceEnd(of: Model.self) == 16 + 40)
        #expect(instanceEnd(of: TenIntModel.self) == 16 + 40 + 10 * 8)
        #expect(MemoryLayout<FetchedValues>.size == 17)
        #expect(MemoryLayout<ModelSide>.size == 8)
    }
}

final class RvLateConv: Model {
    @Column var count: Int = 0
    override class var tableName: String { "rv_late_conv" }
}

/// The initial value of `n` is read from a static when each instance is made (as `= UUID()` or
/// `= Date()` would give each instance its own).
final class RvInstanceDefault: Model {
    nonisolated(unsafe) static var nextDefault = 1
    @Column var n: Int = RvInstanceDefault.nextDefault
    @Column var m: Int = 0
    override class var tableName: String { "rv_instance_default" }
}

/// Counts its inits (the prototype's included).
final class RvCountingInit: Model {
    nonisolated(unsafe) static var inits = 0
    nonisolated(unsafe) static var seenInInit: [Int] = []
    nonisolated(unsafe) static var queryInInit = false
    @Column var count: Int = 0
    required init() {
        super.init()
        Self.inits += 1
        if Self.queryInInit { Self.seenInInit.append((try? Db.queryInt("select count(*) from rv_counting_init")) ?? -1) }
    }
    override class var tableName: String { "rv_counting_init" }
}

class RvBase: Model {
    @Column var a: Int = 1
    @Column var b: Double? = 2.5
    override class var tableName: String { "rv_base" }
}

final class RvSub: RvBase {
    @Column var c: Int64 = -7
    override class var tableName: String { "rv_sub" }
}

final class RvGeneric<T>: Model {
    @Column var a: Int = 3
    @Column var d: Double = 0.25
    override class var tableName: String { "rv_generic" }
}

final class RvCustom: Model, CustomReflectable {
    @Column var alpha: Int = 0
    @Column var beta: Double? = 1.5
    var customMirror: Mirror { Mirror(self, children: ["_beta": _beta, "_alpha": _alpha, "extra": 1]) }
    override class var tableName: String { "rv_custom" }
}

/// Counts its live instances and its `didLoad` calls.
final class RvCounted: Model {
    nonisolated(unsafe) static var alive = 0
    nonisolated(unsafe) static var loaded = 0
    @Column var n: Int = 0
    required init() { super.init(); Self.alive += 1 }
    deinit { Self.alive -= 1 }
    override func didLoad() { Self.loaded += 1 }
    override class var tableName: String { "rv_counted" }
}

/// Replaces Int, and refuses every stored value.
struct RefusingInt: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: Int) throws -> DatabaseValue { .integer(Int64(value)) }
    func decode(_ value: DatabaseValue) throws -> Int {
        throw ConversionError(kind: .invalidValue, column: nil, value: "\(value)", targetType: "Int", reason: "refused")
    }
}

final class RvLateRefused: Model {
    @Column var count: Int = 7
    override class var tableName: String { "rv_late_refused" }
}

/// A generic base class's column and a subclass's own.
class RvGenericBase<T>: Model {
    @Column var a: Int = 1
    override class var tableName: String { "rv_generic_base" }
}

final class RvGenericSub: RvGenericBase<Int> {
    @Column var c: Double = 2
    override class var tableName: String { "rv_generic_sub" }
}

/// A mirror that lists each wrapper under the other's name: the two are of different types
/// (8 and 9 bytes). Its columns are what the mirror says; a fetch must not fill a wrapper with a
/// value of the type the mirror gave its name.
final class RvLyingMirror: Model, CustomReflectable {
    @Column var alpha: Int = 0
    @Column var beta: Int? = nil
    @Column var gamma: Int = 0
    var customMirror: Mirror { Mirror(self, children: ["_alpha": _beta, "_beta": _alpha, "_gamma": _gamma]) }
    override class var tableName: String { "rv_lying_mirror" }
}

final class RvDidLoadWrites: Model {
    @Column var count: Int = 0
    @Column var twice: Int = 0
    override func didLoad() { twice = count * 2 }
    override class var tableName: String { "rv_did_load_writes" }
}

/// Found in review (helper-61): what a fetched model must keep of the behaviour it had when
/// it read its row, now that its values go into its wrappers.
@Suite("Models filled from their rows keep their behaviour", .serialized)
struct ModelWrapperBehaviourTests {
    /// A fetched model reads each column through its context's registry at read time, so a
    /// converter the context registers after the fetch applies to every read (42 here), before
    /// the record is made and after.
    @Test func aConverterRegisteredAfterTheFetchAppliesToEveryRead() throws {
        try withDatabase { t throws in
            t.context.register(RvLateConv.self)
            try t.db.update("insert into rv_late_conv (count) values (420)")
            let models = try RvLateConv.dao.find("select * from rv_late_conv")
            let model = try #require(models.first)
            t.context.converters.register(TenfoldInt())
            let before = model.count
            _ = model.record
            let after = model.count
            #expect(before == after, "before the record: \(before), after: \(after)")
            #expect(before == 42)
        }
    }

    /// A NULL in a non-optional column reads this instance's own initial value, where an init
    /// gives each instance its own (the prototype's would be 1).
    @Test func aNullReadsTheInstancesOwnInitialValue() throws {
        try withDatabase { t throws in
            RvInstanceDefault.nextDefault = 1
            t.context.register(RvInstanceDefault.self)          // the prototype's n is 1
            _ = ModelSchema.of(RvInstanceDefault.self)
            try t.db.update("insert into rv_instance_default (n, m) values (5, 6)")
            RvInstanceDefault.nextDefault = 99                   // instances made from now on: 99
            let model = try #require(try RvInstanceDefault.dao.find("select * from rv_instance_default").first)
            #expect(RvInstanceDefault().n == 99)                 // a new instance reads 99
            model["n"] = nil
            #expect(model.n == 99, "the fetched instance was made with 99 as its initial value")
        }
    }

    /// A row that fails the load check is checked before its model is made: its init does not
    /// run. The rows before it were made as they were read (a fetch keeps no block of rows),
    /// so their inits have run; none of them is returned, and none is told `didLoad()`.
    @Test func theRowThatFailsTheLoadMakesNoModel() throws {
        try withDatabase { t throws in
            t.context.register(RvCountingInit.self)
            _ = ModelSchema.of(RvCountingInit.self)
            for n in 1...3 { try t.db.update("insert into rv_counting_init (count) values (?)", n) }
            RvCountingInit.inits = 0
            #expect(throws: ConversionError.self) {
                try RvCountingInit.dao.find("select id, case when id = 3 then 'bad' else count end as count from rv_counting_init order by id")
            }
            #expect(RvCountingInit.inits == 2)
        }
    }

    /// An init that queries runs while the fetch steps its rows: it works and sees the table.
    @Test func anInitThatQueriesStillWorks() throws {
        try withDatabase { t throws in
            t.context.register(RvCountingInit.self)
            _ = ModelSchema.of(RvCountingInit.self)
            for n in 1...3 { try t.db.update("insert into rv_counting_init (count) values (?)", n) }
            RvCountingInit.seenInInit = []
            RvCountingInit.queryInInit = true
            defer { RvCountingInit.queryInInit = false }
            let fetched = try RvCountingInit.dao.find("select * from rv_counting_init order by id")
            #expect(fetched.map(\.count) == [1, 2, 3])
            #expect(RvCountingInit.seenInInit == [3, 3, 3])
            try Db.tx { _ in
                RvCountingInit.seenInInit = []
                let inTx = try RvCountingInit.dao.find("select * from rv_counting_init order by id")
                #expect(inTx.map(\.count) == [1, 2, 3])
                #expect(RvCountingInit.seenInInit == [3, 3, 3])
                return true
            }
        }
    }

    /// Subclasses, generic classes, custom mirrors and didLoad writes read what the table holds.
    @Test func otherModelShapesReadTheTable() throws {
        try withDatabase { t throws in
            t.context.register(RvBase.self, RvSub.self, RvGeneric<String>.self, RvCustom.self, RvDidLoadWrites.self)
            try t.db.update("insert into rv_base (a, b) values (10, null), (11, 1e300)")
            try t.db.update("insert into rv_sub (a, b, c) values (20, -0.0, 9223372036854775807), (21, null, -9223372036854775808)")
            try t.db.update("insert into rv_generic (a, d) values (30, 0.125)")
            try t.db.update("insert into rv_custom (alpha, beta) values (40, null), (41, 4.5)")
            try t.db.update("insert into rv_did_load_writes (count, twice) values (5, 0)")
            let base = try RvBase.dao.find("select * from rv_base order by id")
            #expect(base.map(\.valuesInWrappers) == [true, true])
            #expect(base.map(\.a) == [10, 11] && base.map(\.b) == [nil, 1e300])
            let sub = try RvSub.dao.find("select * from rv_sub order by id")
            #expect(sub.map(\.valuesInWrappers) == [true, true])
            #expect(sub.map(\.a) == [20, 21] && sub.map(\.c) == [Int64.max, Int64.min])
            #expect(sub[0].b?.sign == .minus || sub[0].b == 0)
            #expect(sub[1].b == nil)
            #expect(sub[0].record.storedValue("c") == .integer(Int64.max))
            let generic = try RvGeneric<String>.dao.find("select * from rv_generic")
            #expect(generic.map(\.valuesInWrappers) == [true])
            #expect(generic.map(\.a) == [30] && generic.map(\.d) == [0.125])
            let custom = try RvCustom.dao.find("select * from rv_custom order by id")
            #expect(custom.map(\.valuesInWrappers) == [true, true])
            #expect(custom.map(\.alpha) == [40, 41] && custom.map(\.beta) == [nil, 4.5])
            // Only the key: nothing to fill, and the models stream.
            let keys = try RvCustom.dao.find("select id from rv_custom order by id")
            #expect(keys.map(\.valuesInWrappers) == [true, true] && keys.map(\.id) == [1, 2])
            #expect(keys.map(\.alpha) == [0, 0] && keys[0].columnNames == ["id"])
            let loaded = try #require(try RvDidLoadWrites.dao.find("select * from rv_did_load_writes").first)
            #expect(loaded.twice == 10 && loaded.modifiedColumns == ["twice"])
            #expect(try loaded.update())
            #expect(try t.db.queryInt("select twice from rv_did_load_writes") == 10)
            #expect(try sub[1].delete())
            #expect(try t.db.queryInt("select count(*) from rv_sub") == 1)
        }
    }

    /// Every model a fetch makes is returned once and freed with its array; a fetch that throws
    /// leaves none alive (helper-62's count).
    @Test func noModelIsLeakedOrReleasedTwice() throws {
        try withDatabase { t throws in
            t.context.register(RvCounted.self)
            _ = ModelSchema.of(RvCounted.self)
            for n in 1...50 { try t.db.update("insert into rv_counted (n) values (?)", n) }
            let base = RvCounted.alive
            RvCounted.loaded = 0
            do {
                let found = try RvCounted.dao.find("select * from rv_counted order by id")
                #expect(found.count == 50 && found.map(\.n) == Array(1...50))
                #expect(found.map(\.valuesInWrappers) == Array(repeating: true, count: 50))
                #expect(found.allSatisfy { type(of: $0) == RvCounted.self })
                #expect(RvCounted.alive == base + 50)
                #expect(RvCounted.loaded == 50)
            }
            #expect(RvCounted.alive == base)
            #expect(throws: ConversionError.self) {
                try RvCounted.dao.find("select id, case when id = 40 then 'x' else n end as n from rv_counted order by id")
            }
            #expect(RvCounted.alive == base)
        }
    }

    /// A converter registered after the fetch that refuses the value: every read falls back to
    /// the initial value, as a model reading its row does (helper-62: the first read gave the
    /// fetched value).
    @Test func aRefusedReadFallsBackToTheInitialValueEveryTime() throws {
        try withDatabase { t throws in
            t.context.register(RvLateRefused.self)
            try t.db.update("insert into rv_late_refused (count) values (42)")
            let inRow = try #require(try RvLateRefused.dao.find("select *, 0 as extra from rv_late_refused").first)
            let inWrappers = try #require(try RvLateRefused.dao.find("select * from rv_late_refused").first)
            #expect(inWrappers.valuesInWrappers && !inRow.valuesInWrappers)
            t.context.converters.register(RefusingInt())
            let rowRead = inRow.count
            let first = inWrappers.count
            let second = inWrappers.count
            #expect(rowRead == 7)
            #expect(first == 7 && second == 7)
        }
    }

    /// A model streamed through `dao.use(name)` runs against that config (its map holds it),
    /// keeps it once a save drops the map, and `use(nil)` takes it back to the default.
    @Test func aStreamedModelKeepsTheConfigOfItsDao() throws {
        try withDatabase { t throws in
            t.context.register(WrapperItem.self)
            let backup = try DbContext.inMemory(configName: "backup")
            backup.register(WrapperItem.self)
            try backup.start()
            defer { backup.stop() }
            try Db.use("backup").update("insert into wrapper_item (count) values (5)")
            try t.db.update("insert into wrapper_item (count) values (99)")
            let found = try #require(try WrapperItem.dao.use("backup").find("select * from wrapper_item").first)
            #expect(found.valuesInWrappers && found.ownBinding == nil)
            #expect(found.configName == "backup" && found.count == 5)
            found.count = 6
            #expect(try found.saveOrUpdate())   // an upsert of row 1, in backup
            #expect(found.layoutMap == nil && found.configName == "backup")
            found.count = 7
            #expect(try found.update())
            #expect(try Db.use("backup").queryInt("select count from wrapper_item where id = 1") == 7)
            let again = try #require(try WrapperItem.dao.use("backup").find("select * from wrapper_item").first)
            again.use(nil)
            #expect(again.configName == nil)
            again.count = 8
            #expect(try again.update())      // id 1 of the default config
            #expect(try t.db.queryInt("select count from wrapper_item where id = 1") == 8)
            #expect(try Db.use("backup").queryInt("select count from wrapper_item where id = 1") == 7)
        }
    }

    /// A generic base class's column streams with the subclass's own.
    @Test func aGenericBaseClassColumnStreams() throws {
        try withDatabase { t throws in
            t.context.register(RvGenericSub.self)
            try t.db.update("insert into rv_generic_sub (a, c) values (5, 0.5), (6, -1.5)")
            let found = try RvGenericSub.dao.find("select * from rv_generic_sub order by id")
            #expect(found.map(\.valuesInWrappers) == [true, true])
            #expect(found.map(\.a) == [5, 6] && found.map(\.c) == [0.5, -1.5])
        }
    }

    /// A mirror that swaps its wrappers' names: the field records say which type lies at each
    /// offset, and the fetch fills no wrapper whose field is not of the type it would write
    /// (before, the model only read wrong values; a fill would write 9 bytes into 8). (helper-63)
    @Test func aMirrorThatSwapsItsWrappersMakesNoFill() throws {
        try withDatabase { t throws in
            t.context.register(RvLyingMirror.self)
            try t.db.update("insert into rv_lying_mirror (alpha, beta, gamma) values (1, 2, 3)")
            // The mirror's `alpha` is an `Int?` (its child is `_beta`) at the offset of the
            // `Column<Int>` field: the map fills nothing.
            let schema = ModelSchema.of(RvLyingMirror.self)
            #expect(schema.columns.map { "\($0.name):\($0.valueType)" } == ["alpha:Optional<Int>", "beta:Int", "gamma:Int"])
            let layout = RowLayout(names: ["id", "alpha", "beta", "gamma"], registry: .shared)
            #expect(schema.positions(in: layout, filling: true).wrapperLoads == nil)
            let found = try #require(try RvLyingMirror.dao.find("select * from rv_lying_mirror").first)
            #expect(!found.valuesInWrappers)
            #expect(found.gamma == 3)   // the neighbour of the swapped pair is untouched
        }
    }
}
