import Foundation
import Testing
@testable import DicRecord

// A SQLite fetch of a model whose declared columns are all integers or doubles fills each model's
// `@Column` wrappers as the rows are stepped (`ModelStream`, `LayoutMap.fill`): no block of rows
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
