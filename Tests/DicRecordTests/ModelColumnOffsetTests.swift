import Testing
@testable import DicRecord

/// Columns whose wrappers are made elsewhere than their declarations: by one helper in several
/// initializers, or copied from another column's wrapper.
final class OffsetHelperMade: Model {
    @Column var a: Int = 0
    @Column var b: Int = 0
    @Column var c: String?
    override class var tableName: String { "offset_helper_made" }
    required init() { super.init() }
    init(a: Int) { super.init(); _a = Self.made(a) }
    init(b: Int) { super.init(); _b = Self.made(b) }
    init(copying value: Int) {
        super.init()
        _a = Self.made(value)
        _b = _a
    }
    static func made(_ value: Int) -> Column<Int> { Column(wrappedValue: value) }
}

extension OffsetHelperMade {
    /// Where each wrapper lies, as the `@Column` accessors compute it.
    var wrapperOffsets: [Int] {
        [withUnsafeMutablePointer(to: &_a) { Model.columnOffset($0, in: self) },
         withUnsafeMutablePointer(to: &_b) { Model.columnOffset($0, in: self) },
         withUnsafeMutablePointer(to: &_c) { Model.columnOffset($0, in: self) }]
    }
}

class OffsetBase: Model {
    @Column var code: String?
    @Column var rank: Int = 3
}

final class OffsetDerived: OffsetBase {
    @Column var label: String?
    override class var tableName: String { "offset_derived" }
}

// A `@Column` property is found by where its wrapper lies in the model object, however the
// wrapper was made (`Model.columnOffset`).
@Suite("Model columns found by their wrapper's place")
struct ModelColumnOffsetTests {
    /// The assumption the accessors rest on: a wrapper's offset is the same in every instance of
    /// the class and differs between properties; it is what the schema learns for the column.
    @Test func aWrappersOffsetIsTheSameInEveryInstanceAndItsOwn() throws {
        let first = OffsetHelperMade(), second = OffsetHelperMade(b: 3)
        let offsets = first.wrapperOffsets
        #expect(second.wrapperOffsets == offsets)
        #expect(Set(offsets).count == 3)
        #expect(offsets.allSatisfy { $0 >= 16 && $0 < 4096 })
        let schema = ModelSchema.of(OffsetHelperMade.self)
        _ = first.a; first.b = 1; _ = first.c
        for (offset, name) in zip(offsets, ["a", "b", "c"]) {
            let slot = try #require(schema.slot(offset: offset))
            #expect(schema.columns[slot].name == name)
        }
    }

    @Test func wrappersMadeByOneHelperOrCopiedStayTheirOwnColumns() throws {
        let x = OffsetHelperMade(a: 1)
        #expect(x.a == 1 && x.b == 0)
        let y = OffsetHelperMade(b: 2)
        #expect(y.a == 0 && y.b == 2)
        y.b = 7
        #expect(y.a == 0 && y.b == 7)
        #expect(y["b"] as Int? == 7 && y["a"] as Int? == nil)
        let z = OffsetHelperMade(copying: 5)
        #expect(z.a == 5 && z.b == 5)
        z.b = 9
        #expect(z.a == 5 && z.b == 9)
        z.c = "c"
        #expect(z.c == "c" && x.c == nil)
        #expect(ModelSchema.of(OffsetHelperMade.self).declarationError == nil)
    }

    @Test(arguments: Engine.available) func helperMadeWrappersSaveAndLoadTheirOwnColumns(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(OffsetHelperMade.self)
            let y = OffsetHelperMade(b: 2)
            y.a = 4
            #expect(try y.save())
            let z = OffsetHelperMade(copying: 5)
            z.b = 6
            #expect(try z.save())
            #expect(try t.db.query("select a || ',' || b from offset_helper_made order by id", as: String.self) == ["4,2", "5,6"])
            let found = try OffsetHelperMade.dao.find("select * from offset_helper_made order by id")
            #expect(found.map(\.a) == [4, 5])
            #expect(found.map(\.b) == [2, 6])
        }
    }

    @Test(arguments: Engine.available) func aSubclassReadsItsBaseClassColumnsAndItsOwn(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(OffsetDerived.self)
            let model = OffsetDerived()
            model.code = "C"
            model.label = "L"
            #expect(model.code == "C" && model.label == "L" && model.rank == 3)
            #expect(try model.save())
            let found = try #require(try OffsetDerived.dao.findById(model.id))
            #expect(found.code == "C" && found.label == "L" && found.rank == 3)
            let base = OffsetBase()
            base.code = "B"
            #expect(base.code == "B" && base.rank == 3)
        }
    }
}
