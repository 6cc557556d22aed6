import Testing
@testable import DicRecord

/// A transaction's changed region is the union of its statements': the columns of a table add up,
/// a statement that writes whole rows makes the whole table changed, and one that writes columns
/// already there changes nothing (it is skipped, so the table it shares is not copied).
@Suite struct ChangedRegionTests {
    private func region(_ tables: [String: Set<String>?], schema: Bool = false) -> ChangedRegion {
        var region = ChangedRegion()
        region.tables = tables
        region.schemaChanged = schema
        return region
    }

    @Test func columnsOfOneTableAddUp() {
        var pending = ChangedRegion()
        let balance = region(["account": ["balance"]])
        pending.formUnion(balance)
        pending.formUnion(balance)
        #expect(pending.tables == ["account": ["balance"]])
        pending.formUnion(region(["account": ["owner"]]))
        #expect(pending.tables == ["account": ["balance", "owner"]])
        // A subset adds nothing, and leaves the statement's own region as it was.
        let first = region(["account": ["balance"]])
        pending.formUnion(first)
        #expect(pending.tables == ["account": ["balance", "owner"]])
        #expect(first.tables == ["account": ["balance"]])
        #expect(balance.tables == ["account": ["balance"]])
    }

    @Test func aWholeRowWriteMakesTheWholeTableChanged() {
        let whole: Set<String>? = nil
        var pending = region(["account": ["balance"]])
        pending.formUnion(region(["account": whole]))
        #expect(pending.tables == ["account": whole])
        pending.formUnion(region(["account": ["balance"]]))
        #expect(pending.tables == ["account": whole])
        pending.formUnion(region(["log": whole], schema: true))
        #expect(pending.tables == ["account": whole, "log": whole])
        #expect(pending.schemaChanged)
    }
}
