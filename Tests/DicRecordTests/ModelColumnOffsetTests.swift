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

/// Columns of every width, packed tight now that a wrapper carries no mark: a `Bool` column is
/// one byte, an `Int8?` two, so neighbours begin at odd offsets.
struct OffsetPoint: Codable, Equatable { var x: Int8; var y: Int8 }
class OffsetPackedBase: Model {
    @Column var flag: Bool = false
    @Column var tiny: Int8?
    @Column var other: Bool = true
    @Column var name: String?
}

final class OffsetPacked: OffsetPackedBase {
    @Column var small: UInt8 = 7
    @Column var point: OffsetPoint?
    @Column var last: Bool = false
    @Column var score: Double = 0.5
    override class var tableName: String { "offset_packed" }
}

extension OffsetPackedBase {
    /// The base class's wrappers: where each lies, and its stored property's name.
    var baseWrapperOffsets: [(Int, String)] {
        [(withUnsafeMutablePointer(to: &_flag) { Model.columnOffset($0, in: self) }, "_flag"),
         (withUnsafeMutablePointer(to: &_tiny) { Model.columnOffset($0, in: self) }, "_tiny"),
         (withUnsafeMutablePointer(to: &_other) { Model.columnOffset($0, in: self) }, "_other"),
         (withUnsafeMutablePointer(to: &_name) { Model.columnOffset($0, in: self) }, "_name")]
    }
}

extension OffsetPacked {
    var ownWrapperOffsets: [(Int, String)] {
        [(withUnsafeMutablePointer(to: &_small) { Model.columnOffset($0, in: self) }, "_small"),
         (withUnsafeMutablePointer(to: &_point) { Model.columnOffset($0, in: self) }, "_point"),
         (withUnsafeMutablePointer(to: &_last) { Model.columnOffset($0, in: self) }, "_last"),
         (withUnsafeMutablePointer(to: &_score) { Model.columnOffset($0, in: self) }, "_score")]
    }
}

/// A base class's private reference and a subclass's column of the same property name: each
/// accessor must find its own wrapper (a name is not enough).
class OffsetReuseBase: Model {
    @Reference private var teacher: RelTeacher?
    @Column var note: String?
    func setTeacher(_ teacher: RelTeacher?) { self.teacher = teacher }
    var teacherRead: RelTeacher? { teacher }
}

final class OffsetReuse: OffsetReuseBase {
    @Column var teacher: String?
    override class var tableName: String { "offset_reuse" }
}

/// Three levels, the middle one generic, and a stored property of size 0 that is not a column.
class OffsetLevelOne: Model {
    @Column var one: Int = 1
    var nothing = OffsetNothing()
}

class OffsetLevelTwo<Tag>: OffsetLevelOne {
    @Column var two: String?
    var marker: Tag?
}

final class OffsetLevelThree: OffsetLevelTwo<Int8> {
    @Column var three: Double = 0.25
    @Column var flag: Bool = false
    override class var tableName: String { "offset_level_three" }
}

/// An `unowned` property whose object may be gone, next to columns: learning which column a
/// wrapper is must not read it (reading a dangling `unowned` reference traps).
final class OffsetOwner: Sendable {
    static let kept = OffsetOwner()
}

/// A model with an `unowned` owner (declared on it or a base class).
protocol OffsetOwned: AnyObject {
    var owner: OffsetOwner { get set }
}

/// Points `model.owner` at an object that is gone when this returns: reading `owner` then traps.
func letOwnerGo(of model: some OffsetOwned) {
    let passing = OffsetOwner()
    model.owner = passing
}

final class OffsetUnowned: Model, OffsetOwned {
    @Column var first: Int = 0
    unowned var owner: OffsetOwner = OffsetOwner.kept
    @Column var second: String?
    override class var tableName: String { "offset_unowned" }
}

/// A model whose mirror lists its properties otherwise than the class declares them.
final class OffsetCustomMirror: Model, CustomReflectable {
    @Column var alpha: Int = 0
    @Column var beta: String?
    var customMirror: Mirror {
        Mirror(self, children: ["_beta": _beta, "_alpha": _alpha, "extra": 1])
    }
    override class var tableName: String { "offset_custom_mirror" }
}

/// A base class with an `unowned` property, under a model whose custom mirror lists its own
/// wrapper only (its base class's mirror is the runtime's).
class OffsetUnownedBase: Model, OffsetOwned {
    unowned var owner: OffsetOwner = OffsetOwner.kept
    @Column var inherited: Int = 0
    override class var tableName: String { "offset_unowned_custom" }
}

final class OffsetUnownedCustom: OffsetUnownedBase, CustomReflectable {
    @Column var own: String?
    var customMirror: Mirror { Mirror(self, children: ["_own": _own]) }
}

/// A base class's own mirror (listing its properties in another order) under a model's, as
/// `.customized` ancestors: its wrapper must still be found (it is not the runtime's mirror).
class OffsetCustomizedBase: Model, CustomReflectable {
    var cache = 7
    @Column var alpha: Int = 0
    var customMirror: Mirror { Mirror(self, children: ["_alpha": _alpha, "cache": cache]) }
    override class var tableName: String { "offset_customized" }
}

final class OffsetCustomizedChild: OffsetCustomizedBase {
    @Column var gamma: String?
    override var customMirror: Mirror {
        Mirror(self, children: ["_gamma": _gamma], ancestorRepresentation: .customized({ super.customMirror }))
    }
}

/// `CustomReflectable` declared on a base class (its mirror's subject is that class), over a
/// base with an `unowned` property, under a model that adds a stored property of its own.
class OffsetGrandBase: Model, OffsetOwned {
    unowned var owner: OffsetOwner = OffsetOwner.kept
    @Column var grand: Int = 0
}

class OffsetMirrorBase: OffsetGrandBase, CustomReflectable {
    @Column var middle: String?
    var customMirror: Mirror { Mirror(self, children: ["_middle": _middle]) }
}

final class OffsetMirrorChild: OffsetMirrorBase {
    var note = ""
    override class var tableName: String { "offset_mirror_child" }
}

/// A base class's own mirror that calls itself a class and lists as many children as the class
/// declares, in another order: it passes for the runtime's but for its names.
class OffsetClassStyledBase: Model, CustomReflectable {
    var cache = 7
    @Column var alpha: Int = 0
    var customMirror: Mirror { Mirror(self, children: ["_alpha": _alpha, "cache": cache], displayStyle: .class) }
}

final class OffsetClassStyledChild: OffsetClassStyledBase {
    @Column var gamma: String?
    override var customMirror: Mirror {
        Mirror(self, children: ["_gamma": _gamma], ancestorRepresentation: .customized({ super.customMirror }))
    }
    override class var tableName: String { "offset_class_styled" }
}

/// The usual subclass mirror (`.customized` ancestors) over a base's own mirror, over a grand
/// base with an `unowned` property: the runtime's levels at the bottom are still filtered.
class OffsetListedGrand: Model, OffsetOwned {
    unowned var owner: OffsetOwner = OffsetOwner.kept
    @Column var root: Int = 0
}

class OffsetListedBase: OffsetListedGrand, CustomReflectable {
    @Column var listed: String?
    var customMirror: Mirror { Mirror(self, children: ["_listed": _listed]) }
}

final class OffsetListedChild: OffsetListedBase {
    @Column var leaf: Int = 0
    override var customMirror: Mirror {
        Mirror(self, children: ["_leaf": _leaf], ancestorRepresentation: .customized({ super.customMirror }))
    }
    override class var tableName: String { "offset_listed_child" }
}

/// A project-wide base with its own mirror, a middle class with an `unowned` property that
/// keeps it, and a leaf whose mirror has `.customized` ancestors: the runtime puts the middle
/// class's own mirror above the base's, and it is filtered as any runtime mirror is.
class OffsetAppBase: Model, CustomReflectable {
    @Column var app: Int = 0
    var customMirror: Mirror { Mirror(self, children: ["_app": _app]) }
}

class OffsetAppMiddle: OffsetAppBase, OffsetOwned {
    unowned var owner: OffsetOwner = OffsetOwner.kept
    @Column var middleName: String?
}

final class OffsetAppLeaf: OffsetAppMiddle {
    @Column var leafValue: Int = 0
    override var customMirror: Mirror {
        Mirror(self, children: ["_leafValue": _leafValue], ancestorRepresentation: .customized({ super.customMirror }))
    }
    override class var tableName: String { "offset_app_leaf" }
}

/// A base class's private reference under its own mirror (an extra child first), and a middle
/// class's column of the same property name, whose known place is the number the base's mirror
/// gives its reference: the column must find its own wrapper.
class OffsetShadowBase: Model, CustomReflectable {
    @Reference private var teacher: RelTeacher?
    var customMirror: Mirror { Mirror(self, children: ["extra": 1, "_teacher": _teacher]) }
    func setTeacher(_ teacher: RelTeacher?) { self.teacher = teacher }
    var teacherRead: RelTeacher? { teacher }
}

class OffsetShadowMiddle: OffsetShadowBase {
    @Column var teacher: String?
}

final class OffsetShadowLeaf: OffsetShadowMiddle {
    @Column var leafNote: String?
    override var customMirror: Mirror {
        Mirror(self, children: ["_leafNote": _leafNote], ancestorRepresentation: .customized({ super.customMirror }))
    }
    override class var tableName: String { "offset_shadow_leaf" }
}

/// Nothing to store: refused, since its wrapper would begin where the next one does.
struct OffsetNothing: Codable, Equatable {}
final class OffsetEmptyColumn: Model {
    @Column var nothing: OffsetNothing = OffsetNothing()
    @Column var after: Int = 0
    override class var tableName: String { "offset_empty_column" }
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

    /// The property at a wrapper's offset is named by the runtime's field records, base class
    /// fields included; offsets between wrappers name nothing.
    @Test func columnsAreFoundByTheOffsetOfTheirWrappers() throws {
        let model = OffsetPacked()
        let offsets = model.baseWrapperOffsets + model.ownWrapperOffsets
        for (offset, name) in offsets {
            #expect(FieldResolver.storedProperty(at: offset, in: OffsetPacked.self)?.name == name)
        }
        // Packed tight: a Bool wrapper is one byte, so the next wrapper follows at once.
        #expect(offsets[2].0 == offsets[1].0 + MemoryLayout<Int8?>.size)
        #expect(MemoryLayout<Column<Int>>.size == MemoryLayout<Int>.size)
        #expect(FieldResolver.storedProperty(at: offsets[3].0 + 1, in: OffsetPacked.self) == nil)
        #expect(FieldResolver.storedProperty(at: 1_000_000, in: OffsetPacked.self) == nil)
    }

    @Test(arguments: Engine.available) func packedColumnsOfEveryWidthKeepTheirOwnValues(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(OffsetPacked.self)
            var random = SplitMix64(seed: 11)
            var written: [(Bool, Int8?, Bool, String?, UInt8, OffsetPoint?, Bool, Double)] = []
            for i in 0..<40 {
                let m = OffsetPacked()
                let row = (random.next() % 2 == 0, i % 3 == 0 ? nil : Int8(truncatingIfNeeded: random.next()),
                           random.next() % 2 == 0, i % 4 == 0 ? nil : "n\(i)", UInt8(truncatingIfNeeded: random.next()),
                           i % 5 == 0 ? nil : OffsetPoint(x: Int8(truncatingIfNeeded: i), y: -1), random.next() % 2 == 0, Double(i) / 4)
                // Written in an order unlike the declarations', so a wrapper found one place off shows.
                m.score = row.7; m.last = row.6; m.point = row.5; m.small = row.4
                m.name = row.3; m.other = row.2; m.tiny = row.1; m.flag = row.0
                #expect(try m.save())
                written.append(row)
            }
            let found = try OffsetPacked.dao.find("select * from offset_packed order by id")
            #expect(found.count == 40)
            for (m, row) in zip(found, written) {
                #expect(m.flag == row.0 && m.tiny == row.1 && m.other == row.2 && m.name == row.3)
                #expect(m.small == row.4 && m.point == row.5 && m.last == row.6 && m.score == row.7)
            }
            #expect(try t.db.queryInt("select count(*) from offset_packed where flag in (0, 1) and other in (0, 1) and last in (0, 1)") == 40)
        }
    }

    @Test func aColumnOfATypeThatStoresNothingIsRefused() throws {
        let error = try #require(ModelSchema.of(OffsetEmptyColumn.self).declarationError)
        #expect(error.message.contains("'nothing'") && error.message.contains("takes no bytes") && error.message.contains("OffsetNothing?"))
        try withDatabase { t throws in
            t.context.register(OffsetEmptyColumn.self)
            #expect(throws: DicRecordError.self) { try OffsetEmptyColumn.dao.findAll() }
        }
    }

    /// A subclass's `@Column` named as a base class's private `@Reference` is its own column:
    /// found by its place among the stored properties, not by its name.
    @Test func aColumnNamedAsABaseClassesPrivateReferenceIsItsOwn() throws {
        try withDatabase { t throws in
            t.context.register(RelTeacher.self)
            t.context.register(OffsetReuse.self)
            let teacher = RelTeacher()
            teacher.name = "Wang"
            #expect(try teacher.save())
            let model = OffsetReuse()
            model.teacher = "a column"
            model.note = "n"
            model.setTeacher(teacher)
            #expect(model.teacher == "a column")
            #expect(try model.save())
            let found = try #require(try OffsetReuse.dao.findById(model.id))
            #expect(found.teacher == "a column" && found.note == "n")
            #expect(found.teacherRead?.name == "Wang")
            #expect(try t.db.queryInt("select teacher_id from offset_reuse") == teacher.id)
            #expect(try t.db.query("select teacher from offset_reuse", as: String.self) == ["a column"])
        }
    }

    /// Columns of three levels, the middle one generic, next to stored properties that are not
    /// columns (one of size 0), save and load as their own.
    @Test(arguments: Engine.available) func columnsOfAGenericMiddleClassAndItsNeighboursKeepTheirValues(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(OffsetLevelThree.self)
            let model = OffsetLevelThree()
            model.flag = true; model.three = 2.5; model.two = "two"; model.one = 11
            model.marker = 3
            #expect(model.one == 11 && model.two == "two" && model.three == 2.5 && model.flag)
            #expect(try model.save())
            let found = try #require(try OffsetLevelThree.dao.findById(model.id))
            #expect(found.one == 11 && found.two == "two" && found.three == 2.5 && found.flag)
            #expect(ModelSchema.of(OffsetLevelThree.self).columns.map(\.name) == ["one", "two", "three", "flag"])
        }
    }

    /// The first access to a column of a class reads no property but the wrappers: a model whose
    /// `unowned` property's object is gone still reads and writes its columns.
    @Test func learningAColumnReadsNoPropertyButTheWrappers() throws {
        try withDatabase { t throws in
            t.context.register(OffsetUnowned.self)
            let model = OffsetUnowned()
            letOwnerGo(of: model)
            // The owner is gone: reading `model.owner` would trap. The columns' first accesses do not.
            model.second = "s"
            #expect(model.first == 0 && model.second == "s")
            // Saved with `first` unset: the insert fills it from the wrappers' initial values.
            #expect(try model.save())
            let found = try #require(try OffsetUnowned.dao.findById(model.id))
            #expect(found.first == 0 && found.second == "s")
            model.first = 5
            #expect(try model.update())
            #expect(try OffsetUnowned.dao.findById(model.id)?.first == 5)
        }
    }

    /// A custom mirror's base classes are the runtime's mirrors: learning a column skips their
    /// properties that are not wrappers, as for any model (their `unowned` object may be gone).
    @Test func aCustomMirrorsBaseClassesReadNoPropertyButTheWrappers() throws {
        try withDatabase { t throws in
            t.context.register(OffsetUnownedCustom.self)
            let model = OffsetUnownedCustom()
            letOwnerGo(of: model)
            // The owner is gone: reading `model.owner` would trap. The columns' first accesses do not.
            model.own = "o"
            model.inherited = 4
            #expect(model.own == "o" && model.inherited == 4)
            #expect(try model.save())
            let found = try #require(try OffsetUnownedCustom.dao.findById(model.id))
            #expect(found.own == "o" && found.inherited == 4)
            // Saved with `inherited` unset: the insert's fill of initial values walks the fields.
            let other = OffsetUnownedCustom()
            letOwnerGo(of: other)
            other.own = "p"
            #expect(try other.save())
            #expect(try OffsetUnownedCustom.dao.findById(other.id)?.inherited == 0)
        }
    }

    /// A base class's own mirror, in another order, as a model's `.customized` ancestors: not
    /// the runtime's mirror, so every child is read and its wrapper found by name.
    @Test func customizedAncestorsStillFindTheirColumns() throws {
        try withDatabase { t throws in
            t.context.register(OffsetCustomizedChild.self)
            let model = OffsetCustomizedChild()
            model.alpha = 3
            model.gamma = "g"
            #expect(model.alpha == 3 && model.gamma == "g")
            #expect(try model.save())
            #expect(try t.db.query("select gamma || alpha from offset_customized", as: String.self) == ["g3"])
        }
    }

    /// A base class's own mirror that passes for the runtime's (a `.class` mirror of the class,
    /// as many children) but lists them in another order: told by its names, and read in full.
    @Test func aCustomMirrorPassingForTheRuntimesIsToldByItsNames() throws {
        try withDatabase { t throws in
            t.context.register(OffsetClassStyledChild.self)
            let model = OffsetClassStyledChild()
            model.alpha = 5
            model.gamma = "c"
            #expect(model.alpha == 5 && model.gamma == "c")
            #expect(try model.save())
            #expect(try t.db.query("select gamma || alpha from offset_class_styled", as: String.self) == ["c5"])
        }
    }

    /// `.customized` ancestors over a base's own mirror: the runtime's levels under them (the
    /// grand base, whose `unowned` object is gone) read no property but the wrappers.
    @Test func customizedAncestorsOverTheRuntimesReadNoPropertyButTheWrappers() throws {
        try withDatabase { t throws in
            t.context.register(OffsetListedChild.self)
            let model = OffsetListedChild()
            letOwnerGo(of: model)
            model.root = 1
            model.listed = "l"
            model.leaf = 9
            #expect(model.root == 1 && model.listed == "l" && model.leaf == 9)
            #expect(try model.save())
            let found = try #require(try OffsetListedChild.dao.findById(model.id))
            #expect(found.root == 1 && found.listed == "l" && found.leaf == 9)
        }
    }

    /// A runtime mirror above a custom one (a middle class under a base's own mirror, below a
    /// leaf's `.customized` ancestors) is filtered too: its dangling `unowned` is not read.
    @Test func aRuntimeLevelAboveACustomOneReadsNoPropertyButTheWrappers() throws {
        try withDatabase { t throws in
            t.context.register(OffsetAppLeaf.self)
            let model = OffsetAppLeaf()
            letOwnerGo(of: model)
            model.app = 1
            model.middleName = "m"
            model.leafValue = 3
            #expect(model.app == 1 && model.middleName == "m" && model.leafValue == 3)
            #expect(try model.save())
            let found = try #require(try OffsetAppLeaf.dao.findById(model.id))
            #expect(found.app == 1 && found.middleName == "m" && found.leafValue == 3)
        }
    }

    /// Under custom mirrors, a column named like a base class's private reference finds its own
    /// wrapper, though the base's mirror gives the reference the number of the column's place.
    @Test func aColumnAtItsKnownPlaceIsNotTakenForABasesReferenceOfItsName() throws {
        try withDatabase { t throws in
            t.context.register(RelTeacher.self)
            t.context.register(OffsetShadowLeaf.self)
            let teacher = RelTeacher()
            teacher.name = "Li"
            #expect(try teacher.save())
            let model = OffsetShadowLeaf()
            model.teacher = "a column"
            model.leafNote = "n"
            model.setTeacher(teacher)
            #expect(model.teacher == "a column" && model.leafNote == "n")
            #expect(try model.save())
            let found = try #require(try OffsetShadowLeaf.dao.findById(model.id))
            #expect(found.teacher == "a column" && found.leafNote == "n")
            #expect(found.teacherRead?.name == "Li")
        }
    }

    /// `CustomReflectable` declared on a base class: the levels below its mirror are the
    /// runtime's and read no property but the wrappers (the grand base's `unowned` object is gone).
    @Test func aBaseClassesCustomMirrorReadsNoPropertyBelowItButTheWrappers() throws {
        try withDatabase { t throws in
            t.context.register(OffsetMirrorChild.self)
            let model = OffsetMirrorChild()
            letOwnerGo(of: model)
            model.middle = "m"
            model.grand = 2
            #expect(model.middle == "m" && model.grand == 2)
            #expect(try model.save())
            let found = try #require(try OffsetMirrorChild.dao.findById(model.id))
            #expect(found.middle == "m" && found.grand == 2)
        }
    }

    /// A model whose custom mirror lists its wrappers in another order still finds its columns
    /// (by name there, since the mirror's order is not the class's).
    @Test func aCustomMirrorInAnotherOrderStillFindsItsColumns() throws {
        try withDatabase { t throws in
            t.context.register(OffsetCustomMirror.self)
            let model = OffsetCustomMirror()
            model.alpha = 3
            model.beta = "b"
            #expect(model.alpha == 3 && model.beta == "b")
            #expect(try model.save())
            #expect(try t.db.query("select beta || alpha from offset_custom_mirror", as: String.self) == ["b3"])
        }
    }
}
