import Foundation
import Synchronization
import Testing
@testable import DicRecord

// A model the dao fetches reads its row in place, with no record until something needs one
// (`Model.fetchedRow`, `Model.makeRecord`). These check that every way of reaching the row sees
// the same values, before and after the record is made, on both engines.

final class InPlaceItem: Model {
    @Column var name: String?
    @Column var score: Int = 7
    @Column var ratio: Double?
    @Column var born: Date?
    @Column var tags: [String]?
    override class var tableName: String { "in_place_item" }
}

@Suite("Models reading their fetched row in place")
struct FetchedModelTests {
    private func withItems<T>(_ engine: Engine, _ body: (TestDatabase) throws -> T) throws -> T {
        try withDatabase(engine: engine) { t throws in
            t.context.register(InPlaceItem.self)
            for i in 0..<30 {
                let item = InPlaceItem()
                item.name = "n\(i)"
                item.score = i
                item.ratio = i % 3 == 0 ? nil : Double(i) / 4
                item.born = Date(timeIntervalSince1970: Double(i) * 1_000)
                item.tags = ["t\(i)"]
                try item.save()
            }
            return try body(t)
        }
    }

    @Test(arguments: Engine.available) func readsBeforeAndAfterTheRecordIsMadeAgree(engine: Engine) throws {
        try withItems(engine) { _ throws in
            let items = try InPlaceItem.dao.find("select * from in_place_item order by id")
            #expect(items.count == 30)
            for (i, item) in items.enumerated() {
                #expect(item.id == i + 1)
                #expect(item.recordIfMade == nil)   // still reading the fetched row
                #expect(item.name == "n\(i)")
                #expect(item.score == i)
                #expect(item.ratio == (i % 3 == 0 ? nil : Double(i) / 4))
                #expect(item.born == Date(timeIntervalSince1970: Double(i) * 1_000))
                #expect(item.tags == ["t\(i)"])     // JSON: read through a record
                #expect(item.modifiedColumns.isEmpty)
                #expect(try item.record.get("name", as: String.self) == "n\(i)")
                #expect(item.recordIfMade != nil && item.fetchedRow == nil)
                #expect(item.name == "n\(i)")
                #expect(item.score == i)
            }
        }
    }

    @Test(arguments: Engine.available) func aWriteThroughTheRecordIsWhatTheModelReads(engine: Engine) throws {
        try withItems(engine) { t throws in
            let item = try #require(try InPlaceItem.dao.findFirst("select * from in_place_item where score = ?", 4))
            let models = try InPlaceItem.dao.find("select * from in_place_item where score = ?", 5)
            let fetched = try #require(models.first)
            #expect(fetched.fetchedRow != nil)
            let record = fetched.record   // shared, not copied
            record.score = 50
            record.name = "changed"
            #expect(fetched.score == 50)
            #expect(fetched.name == "changed")
            #expect(Set(fetched.modifiedColumns) == ["score", "name"])
            #expect(try fetched.update())
            #expect(try t.db.queryInt("select score from in_place_item where id = ?", fetched.id) == 50)
            // The other fetched models of that row's block are untouched.
            #expect(item.score == 4)
        }
    }

    @Test(arguments: Engine.available) func aColumnWrittenOnAFetchedModelIsSavedAndTheRestKept(engine: Engine) throws {
        try withItems(engine) { t throws in
            let items = try InPlaceItem.dao.find("select * from in_place_item order by id limit 3")
            items[1].score = 100
            #expect(items[1].modifiedColumns == ["score"])
            #expect(items[1].name == "n1")
            #expect(try items[1].update())
            #expect(items[0].score == 0 && items[2].score == 2)
            #expect(try t.db.queryInt("select score from in_place_item where name = 'n1'") == 100)
            #expect(try InPlaceItem.dao.findById(items[1].id)?.score == 100)
            // Output of a model that never made its record.
            let untouched = try #require(try InPlaceItem.dao.find("select * from in_place_item where name = 'n2'").first)
            #expect(untouched.toDictionary()["name"] as? String == "n2")
            #expect(try untouched.toJSON().contains("\"name\":\"n2\""))
            #expect(untouched.columnNames == ["id", "name", "score", "ratio", "born", "tags"])
        }
    }

    @Test(arguments: Engine.available) func aColumnTheQueryDidNotSelectReadsItsInitialValue(engine: Engine) throws {
        try withItems(engine) { _ throws in
            let items = try InPlaceItem.dao.find("select id, name from in_place_item order by id limit 2")
            #expect(items.map(\.name) == ["n0", "n1"])
            #expect(items.map(\.score) == [7, 7])
            #expect(items[0].ratio == nil && items[0].born == nil)
            #expect(items[0].recordIfMade == nil)
            #expect(items[0].tags == nil)   // a JSON column reads through the record
        }
    }

    @Test(arguments: Engine.available) func aStoredValueThatDoesNotConvertStillFailsTheLoad(engine: Engine) throws {
        try withItems(engine) { t throws in
            try t.db.update("insert into in_place_item(name, score) values ('bad', 1)")
            let error = #expect(throws: ConversionError.self) {
                _ = try InPlaceItem.dao.find("select id, name, 'x' || score as score from in_place_item")
            }
            #expect(error?.column == "score")
        }
    }

    /// The load checks a fetch's rows on their tags (`ModelSchema.tagsTake`): each storage class
    /// passes or fails as the column-by-column check decides, wherever the row sits in its block.
    @Test(arguments: Engine.available) func theLoadCheckOnTagsAgreesWithTheColumnCheck(engine: Engine) throws {
        try withItems(engine) { t throws in
            let blob = engine == .sqlite ? "x'00ff'" : "'\\x00ff'::bytea"
            // An INTEGER in a REAL column and a NULL in a NOT NULL one load (the initial value).
            let loaded = try InPlaceItem.dao.find("select id, name, score, score as ratio from in_place_item order by id")
            #expect(loaded.count == 30)
            #expect(loaded[29].ratio == 29)
            let nulls = try InPlaceItem.dao.find("select id, name, null as score from in_place_item order by id")
            #expect(nulls.map(\.score) == Array(repeating: 7, count: 30))
            // A BLOB in the TEXT column fails, and TEXT in the INTEGER column. SQLite's columns mix
            // storage classes: there the bad value sits in the first, a middle or the last row.
            let rows = engine == .sqlite ? [1, 17, 30] : [0]
            for row in rows {
                let name = engine == .sqlite ? "case when id = \(row) then \(blob) else name end" : blob
                let error = #expect(throws: ConversionError.self) {
                    _ = try InPlaceItem.dao.find("select id, \(name) as name from in_place_item order by id")
                }
                #expect(error?.column == "name")
                let score = engine == .sqlite ? "case when id = \(row) then 'seventeen' else score end" : "'seventeen'"
                let scoreError = #expect(throws: ConversionError.self) {
                    _ = try InPlaceItem.dao.find("select id, name, \(score) as score from in_place_item order by id")
                }
                #expect(scoreError?.column == "score")
            }
            // TEXT in the TEXT column passes.
            let texts = try InPlaceItem.dao.find("select id, name || '' as name, score from in_place_item order by id")
            #expect(texts.map(\.name) == (0..<30).map { "n\($0)" })
        }
    }

    @Test(arguments: Engine.available) func aPageOfModelsReadsItsRowsInPlaceAndChecksThem(engine: Engine) throws {
        try withItems(engine) { t throws in
            let page = try InPlaceItem.dao.paginate(2, 10, "select *", "from in_place_item order by id")
            #expect(page.totalRow == 30)
            #expect(page.list.count == 10)
            for (offset, item) in page.list.enumerated() {
                let i = 10 + offset
                #expect(item.recordIfMade == nil)   // no record made for the page's rows
                #expect(item.id == i + 1)
                #expect(item.name == "n\(i)")
                #expect(item.score == i)
                #expect(item.born == Date(timeIntervalSince1970: Double(i) * 1_000))
            }
            // A stored value that does not convert fails the page's load, as it fails a find's.
            let error = #expect(throws: ConversionError.self) {
                _ = try InPlaceItem.dao.paginate(2, 10, "select id, name, 'x' || score as score", "from in_place_item order by id")
            }
            #expect(error?.column == "score")
        }
    }

    @Test func aNewModelMakesItsRecordOnlyWhenUsed() throws {
        try withDatabase { t throws in
            t.context.register(InPlaceItem.self)
            let item = InPlaceItem()
            #expect(item.recordIfMade == nil)
            #expect(item.score == 7 && item.name == nil)
            #expect(item.columnNames == ["id"])   // asking for the row makes it: the empty id
            item.name = "new"
            #expect(try item.save())
            #expect(item.id == 1)
            #expect(try t.db.queryInt("select score from in_place_item where id = 1") == 7)
        }
    }

    /// A new model's record is made with room for its key and every declared column (the
    /// schema is at hand once the class is registered): writing them all never grows it. (The
    /// column names are this test's own: no record of the process grew through them before,
    /// which would have taught the layout how long such a record gets.)
    @Test func aNewModelsRecordHasRoomForEveryDeclaredColumn() throws {
        try withDatabase { t throws in
            t.context.register(RoomyItem.self)
            let item = RoomyItem()
            item.roomy0 = 100
            // (Its identity only: holding the storage would make the next write copy it.)
            let storage = ObjectIdentifier(item.storage.values.storage)
            #expect(item.storage.values.storage.arrayCapacity == 13)   // "id" and 12 columns
            item.roomy1 = 101; item.roomy2 = 102; item.roomy3 = 103; item.roomy4 = 104; item.roomy5 = 105
            item.roomy6 = 106; item.roomy7 = 107; item.roomy8 = 108; item.roomy9 = 109; item.roomy10 = 110
            item.roomy11 = 111
            // Written in place, never moved (the capacity too: two moves could reuse an address).
            #expect(ObjectIdentifier(item.storage.values.storage) == storage)
            #expect(item.storage.values.storage.arrayCapacity == 13)
            #expect(item.columnNames.count == 13)
            #expect(try item.save())
            let found = try #require(try RoomyItem.dao.findById(item.id))
            #expect(found.roomy0 == 100 && found.roomy6 == 106 && found.roomy11 == 111)
        }
    }
}

/// Twelve columns named for `aNewModelsRecordHasRoomForEveryDeclaredColumn` alone.
final class RoomyItem: Model {
    @Column var roomy0 = 0
    @Column var roomy1 = 0
    @Column var roomy2 = 0
    @Column var roomy3 = 0
    @Column var roomy4 = 0
    @Column var roomy5 = 0
    @Column var roomy6 = 0
    @Column var roomy7 = 0
    @Column var roomy8 = 0
    @Column var roomy9 = 0
    @Column var roomy10 = 0
    @Column var roomy11 = 0
    override class var tableName: String { "roomy_item" }
}

/// Takes a ticket when the dao gives it its row: tickets rise in the order `didLoad` ran.
final class LoadOrderItem: Model {
    @Column var position: Int = -1
    var ticket = -1
    static let tickets = Atomic<Int>(0)
    override class var tableName: String { "load_order_item" }
    override func didLoad() { ticket = Self.tickets.add(1, ordering: .relaxed).newValue }
}

@Suite("Models come back in row order")
struct ModelRowOrderTests {
    /// The dao stores each model into its place of the result: the models are in the rows'
    /// order, each over its own row, and `didLoad` runs in that order too.
    @Test(arguments: Engine.available) func modelsAndTheirDidLoadFollowTheRows(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(LoadOrderItem.self)
            for i in 0..<500 {
                let item = LoadOrderItem(); item.position = 499 - i; try item.save()
            }
            let found = try LoadOrderItem.dao.find("select * from load_order_item order by position")
            #expect(found.map(\.position) == Array(0..<500))
            #expect(found.map(\.id) == (1...500).reversed().map { Optional($0) })
            #expect(found.allSatisfy { $0.ticket > 0 })
            #expect(zip(found, found.dropFirst()).allSatisfy { $0.ticket < $1.ticket })
            #expect(try LoadOrderItem.dao.find("select * from load_order_item where position < 0").isEmpty)
        }
    }
}

/// Its init reads a column and its didLoad copies it: only didLoad sees the fetched row.
final class InitReader: Model {
    @Column var status: String?
    var seenInInit: String?
    var seenInDidLoad: String?
    override class var tableName: String { "init_reader" }
    required init() {
        super.init()
        seenInInit = status
    }
    override func didLoad() { seenInDidLoad = status }
}

@Suite("A fetched model's init and didLoad")
struct FetchedModelHookTests {
    @Test(arguments: Engine.available) func initRunsOnAnEmptyModelAndDidLoadSeesTheRow(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(InitReader.self)
            let first = InitReader(); first.status = "open"; try first.save()
            for found in try InitReader.dao.find("select * from init_reader") + [try #require(try InitReader.dao.findById(first.id))] {
                #expect(found.seenInInit == nil)
                #expect(found.seenInDidLoad == "open")
                #expect(found.status == "open")
            }
        }
    }
}

/// Twenty-four columns: more offsets than a small slot table has entries, so the table grows
/// and probes past collisions.
final class WideInPlaceItem: Model {
    @Column var c0: Int = -0
    @Column var c1: Int = -1
    @Column var c2: Int = -2
    @Column var c3: Int = -3
    @Column var c4: Int = -4
    @Column var c5: Int = -5
    @Column var c6: Int = -6
    @Column var c7: Int = -7
    @Column var c8: Int = -8
    @Column var c9: Int = -9
    @Column var c10: Int = -10
    @Column var c11: Int = -11
    @Column var c12: Int = -12
    @Column var c13: Int = -13
    @Column var c14: Int = -14
    @Column var c15: Int = -15
    @Column var c16: Int = -16
    @Column var c17: Int = -17
    @Column var c18: Int = -18
    @Column var c19: Int = -19
    @Column var c20: Int = -20
    @Column var c21: Int = -21
    @Column var c22: Int = -22
    @Column var c23: Int = -23
    override class var tableName: String { "wide_in_place_item" }
}

@Suite("Model column slots")
struct ModelColumnSlotTests {
    /// The offset → slot table (`ModelSchema.KeySlots`) finds every key it holds and no other,
    /// at every size it grows through: offsets indexed directly (a JSON column's slot -1
    /// included), and keys of 64 KiB or more, which it searches.
    @Test func theSlotTableFindsEveryKeyAndNoOther() {
        for count in [0, 1, 2, 7, 8, 9, 33, 100, 300] {
            // Wrapper-like offsets (16 and up, strides of 9 bytes), a few far ones among them.
            let pairs: [(key: UInt, slot: Int)] = (0..<count).map { i -> (key: UInt, slot: Int) in
                let key: UInt = i % 10 == 9 ? 65_536 + UInt(i) * 24 : 16 + UInt(i) * 9
                return (key: key, slot: i % 7 == 3 ? -1 : i)
            }
            let table = ModelSchema.KeySlots(pairs)
            for pair in pairs {
                #expect(table.slot(pair.key) == pair.slot, "key \(pair.key) of \(count)")
            }
            let held = Set(pairs.map { $0.key })
            let near: [UInt] = (0..<3_000).map { UInt($0) }
            let far: [UInt] = (0..<300).map { 65_536 + UInt($0) * 24 + 8 } + [UInt.max, 1 << 40]
            let strangers = near + far
            for stranger in strangers where !held.contains(stranger) {
                #expect(table.slot(stranger) == nil, "stranger \(stranger) of \(count)")
            }
        }
    }

    /// Every column of a wide fetched model reads its own value, first in place and then
    /// through its record, and unselected columns their initial value.
    @Test(arguments: Engine.available) func everyColumnOfAWideModelReadsItsOwnValue(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(WideInPlaceItem.self)
            let item = WideInPlaceItem()
            item.c0 = 7
            item.c1 = 107
            item.c2 = 207
            item.c3 = 307
            item.c4 = 407
            item.c5 = 507
            item.c6 = 607
            item.c7 = 707
            item.c8 = 807
            item.c9 = 907
            item.c10 = 1007
            item.c11 = 1107
            item.c12 = 1207
            item.c13 = 1307
            item.c14 = 1407
            item.c15 = 1507
            item.c16 = 1607
            item.c17 = 1707
            item.c18 = 1807
            item.c19 = 1907
            item.c20 = 2007
            item.c21 = 2107
            item.c22 = 2207
            item.c23 = 2307
            try item.save()
            let reads: (WideInPlaceItem) -> [Int] = { m in [m.c0, m.c1, m.c2, m.c3, m.c4, m.c5, m.c6, m.c7, m.c8, m.c9, m.c10, m.c11, m.c12, m.c13, m.c14, m.c15, m.c16, m.c17, m.c18, m.c19, m.c20, m.c21, m.c22, m.c23] }
            let expected = (0..<24).map { $0 * 100 + 7 }
            let found = try #require(WideInPlaceItem.dao.find("select * from wide_in_place_item").first)
            #expect(reads(found) == expected)
            #expect(reads(found) == expected)
            _ = found.record
            #expect(reads(found) == expected)
            let partial = try #require(WideInPlaceItem.dao.find("select id, c3, c17 from wide_in_place_item").first)
            #expect(reads(partial) == (0..<24).map { $0 == 3 || $0 == 17 ? $0 * 100 + 7 : -$0 })
        }
    }
}
