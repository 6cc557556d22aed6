import Foundation
import Testing
@testable import DicRecord

// A record built from common values, or written column by column with them, keeps no cell per
// column: its columns are a "plain run" (`Record.PlainCells`), each standing for the cell of an
// Int stored as INTEGER, a Double as REAL or a String as TEXT. These check that such a record
// behaves exactly as one holding every cell, whatever is done to it next.
@Suite("Plain runs of cells")
struct PlainRunTests {
    @Test func aRecordOfCommonValuesStoresNoCellsAndReadsThemBackAsWritten() throws {
        let built = try Record(["i": 1, "d": 1.5, "s": "x"])
        #expect(built.storesCells == false)
        #expect(built["i"] as? Int == 1 && built["d"] as? Double == 1.5 && built["s"] as? String == "x")
        #expect(built.modifiedColumns == ["i", "d", "s"])
        let written = Record()
        written.i = 1; written.d = 1.5; written.s = "x"
        #expect(written.storesCells == false)
        #expect(written["i"] as? Int == 1 && written.modifiedColumns == ["i", "d", "s"])
        // Values that are not the natural type of their storage class need cells.
        #expect(try Record(["i": 1, "b": true]).storesCells)
        #expect(try Record(["i": 1, "n": Int64(2)]).storesCells)
        #expect(try Record(["i": 1, "none": nil]).storesCells)
        let mixed = try Record(["i": 1, "b": true, "n": Int64(2), "none": nil, "s": "y"])
        #expect(mixed["i"] as? Int == 1 && mixed["b"] as? Bool == true && mixed["n"] as? Int64 == 2)
        #expect(mixed["none"] == nil && mixed["s"] as? String == "y")
    }

    @Test func savingClearsTheRunsModifiedFlagAndTheKeyReadsAsAKeyDoes() throws {
        try withDatabase { t in
            try t.db.update("create table item (id integer primary key autoincrement, a integer, b text)")
            let plain = try Record(["a": 1, "b": "x"])
            let celled = try Record(["a": 1, "b": "x", "c": true])
            celled.remove("c")
            #expect(plain.storesCells == false && celled.storesCells)
            _ = try t.db.batchSave("item", [plain, celled])
            for record in [plain, celled] {
                #expect(record.modifiedColumns.isEmpty)
                #expect(record["a"] as? Int == 1 && record["b"] as? String == "x")
            }
            // The generated key reads as a stored INTEGER, as before.
            #expect(plain["id"] is Int64 && celled["id"] is Int64)
            #expect(plain.storesCells == false)
            plain.a = 5
            #expect(plain.modifiedColumns == ["a"])
            try t.db.update("item", plain)
            #expect(try t.db.queryInt("select a from item where id = ?", try plain.get("id", as: Int.self)) == 5)
        }
    }

    @Test func aNewModelsColumnsFormARunAfterItsId() throws {
        try withDatabase { t in
            t.context.register(PlainRunItem.self)   // after start: the table is made at once
            let item = PlainRunItem()
            item.a = 3; item.b = "x"; item.c = 2.5
            #expect(item.record.storesCells == false)
            #expect(item.modifiedColumns == ["a", "b", "c"])
            try item.save()
            #expect(item.modifiedColumns.isEmpty && item.id != nil)
            item.a = 4
            #expect(item.modifiedColumns == ["a"])
            try item.update()
            let found = try #require(try PlainRunItem.dao.findById(item.id))
            #expect(found.a == 4 && found.b == "x" && found.c == 2.5)
        }
    }

    /// The same steps on a record whose cells form a run and on one that stores every cell give
    /// the same record after each step.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func everyStepLeavesTheSameRecordAsStoredCellsDo(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let names = ["a", "b", "c", "d", "e"]
        let values: [Any?] = [1, 7, Int64(9), true, "s", "t", 2.5, -Double.infinity, nil, Data([1]), Date(timeIntervalSince1970: 5)]
        for start in 0..<2 {
            let plain = start == 0 ? try Record(["a": 1, "b": "x", "c": 1.5]) : Record()
            let celled = start == 0 ? try Record(["a": 1, "b": "x", "c": 1.5, "z": Data()]) : try Record(["z": Data()])
            celled.remove("z")
            #expect(celled.storesCells || start == 1)
            var steps: [String] = []
            for _ in 0..<60 {
                let name = names[Int(random.next() % UInt64(names.count))]
                switch random.next() % 10 {
                case 0:
                    steps.append("remove \(name)")
                    plain.remove(name); celled.remove(name)
                case 1:
                    steps.append("clearModified")
                    plain.clearModified(); celled.clearModified()
                case 2:
                    let stored: [DatabaseValue] = [.integer(42), .text("p"), .null, .real(1)]
                    let value = stored[Int(random.next() % UInt64(stored.count))]
                    steps.append("put \(name) \(value)")
                    plain.put(name, value); celled.put(name, value)
                case 3:
                    steps.append("markModified")
                    let set = plain.clearModified()
                    let other = celled.clearModified()
                    plain.markModified(set); celled.markModified(other)
                default:
                    let value = values[Int(random.next() % UInt64(values.count))]
                    steps.append("set \(name) = \(value.map { "\($0)" } ?? "nil")")
                    plain.set(name, value); celled.set(name, value)
                }
                #expect(Self.observed(plain) == Self.observed(celled), "after \(steps)")
            }
        }
    }

    /// What a user can see of a record: names, modified columns, and each value with its type,
    /// by name, by index and typed.
    static func observed(_ record: Record) -> [String] {
        let values = record.columnNames.enumerated().map { index, name in
            "\(name): \(record[name].map { "\(type(of: $0)) \($0)" } ?? "nil") [\(record[index].map { "\(type(of: $0))" } ?? "nil")]"
                + " \(String(describing: try? record.get(name, as: String?.self)))"
        }
        let saved: String
        do { saved = "\(try record.modifiedStoredColumns().map { "\($0.name)=\($0.value)" })" } catch { saved = "throws \(error)" }
        return values + ["modified \(record.modifiedColumns)", "saved \(saved)", "json \((try? record.toJSON()) ?? "throws")"]
    }

    /// Steps a plain run can stand for keep it: common values written over its columns while
    /// they are modified, new columns after it, reads of every kind.
    @Test(arguments: [11, 12, 13, 14])
    func stepsTheRunStandsForKeepIt(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let values: [Any] = [1, -7, Int.max, 2.5, -0.0, Double.infinity, "s", "", "日本"]
        let plain = Record()
        let celled = try Record(["z": Data()])
        celled.remove("z")
        for step in 0..<80 {
            // Existing columns, or the next new one.
            let name = "c\(Int(random.next() % UInt64(plain.columnCount + 1)))"
            let value = values[Int(random.next() % UInt64(values.count))]
            plain.set(name, value); celled.set(name, value)
            #expect(plain.storesCells == false, "step \(step)")
            #expect(Self.observed(plain) == Self.observed(celled), "step \(step)")
        }
        // A save clears the run's flags, and the run stays.
        plain.clearModified(); celled.clearModified()
        #expect(plain.storesCells == false && plain.modifiedColumns.isEmpty)
        #expect(Self.observed(plain) == Self.observed(celled))
    }

    /// A record built column by column as the one before it was follows that one's layouts (the
    /// remembered successors, `Record.appendsToPlainRun`), and shows what a record storing every
    /// cell shows, at every step: common values of each kind, a value that ends the run, a write
    /// over a column, a typed read that keeps a conversion, a save's cleared flags.
    @Test func aRecordBuiltAsTheOneBeforeFollowsItsLayoutsAndReadsAsStoredCells() throws {
        let writes: [(String, Any?)] = [("p", 1), ("q", "s"), ("r", 2.5), ("p", 2), ("s", -0.0), ("t", "日本"),
                                        ("u", Int64(3)), ("v", 4), ("w", nil), ("x", true), ("y", 5)]
        var layouts: [[ObjectIdentifier]] = []
        for round in 0..<3 {
            let plain = try Record(["nw_plain_start": 1])
            // Not built from a literal: `plain` is then the last record this thread built, and
            // the next round's starts from its layout.
            let celled = Record()
            celled.set("nw_plain_start", 1); celled.set("z", Data())
            celled.remove("z")
            #expect(celled.storesCells)
            var seen: [ObjectIdentifier] = []
            for (index, (name, value)) in writes.enumerated() {
                plain.set(name, value); celled.set(name, value)
                seen.append(ObjectIdentifier(plain.layout))
                #expect(Self.observed(plain) == Self.observed(celled), "round \(round), write \(index)")
                // Until Int64 (its own kind) ends the run, no cell is stored (in the third round,
                // until a new column follows the one `put` added after the run).
                #expect(plain.storesCells == (index >= 6 || (round == 2 && index >= 4)), "round \(round), write \(index)")
                if index == 2, round == 2 {
                    // A kept conversion (a URL read of a column `put` wrote): later writes take
                    // the general path, and show the same.
                    plain.put("k", .text("https://example.com/a")); celled.put("k", .text("https://example.com/a"))
                    let url: URL? = plain.k
                    #expect(url?.host == "example.com")
                    _ = celled.k as URL?
                    #expect(plain.flags.load(ordering: .relaxed) & Record.keptBit != 0)
                }
            }
            layouts.append(seen)
            plain.clearModified(); celled.clearModified()
            #expect(Self.observed(plain) == Self.observed(celled))
        }
        // A column added after a save (the run's flags cleared) is modified alone.
        let saved = try Record(["nw_plain_start": 1])
        let savedCelled = Record()
        savedCelled.set("nw_plain_start", 1); savedCelled.set("z", Data()); savedCelled.remove("z")
        saved.clearModified(); savedCelled.clearModified()
        saved.set("p", 1); savedCelled.set("p", 1)
        #expect(saved.modifiedColumns == ["p"])
        #expect(Self.observed(saved) == Self.observed(savedCelled))
        // The second record followed the first one's layouts (the third, up to its `put`).
        #expect(layouts[1] == layouts[0] && layouts[2][0...2] == layouts[0][0...2])
    }

    @Test func aLiteralThatNamesAColumnTwiceKeepsTheLastValueAndItsType() throws {
        let cases: [(KeyValuePairs<String, Any?>, [String], Bool)] = [
            (["a": 1, "A": true], ["a: Bool true", "b: nil"], true),
            (["a": true, "A": 1], ["a: Int 1", "b: nil"], true),
            (["a": 1, "b": true, "A": 2], ["a: Int 2", "b: Bool true"], true),
            (["a": 1, "A": 2.5], ["a: Double 2.5", "b: nil"], false),
            (["a": 1, "b": "x", "A": "y"], ["a: String y", "b: String x"], false),
        ]
        for (literal, expected, storesCells) in cases {
            let record = try Record(literal)
            #expect(["a", "b"].map { "\($0): \(record[$0].map { "\(type(of: $0)) \($0)" } ?? "nil")" } == expected)
            #expect(record.storesCells == storesCells)
            #expect(record.modifiedColumns == record.columnNames)
        }
    }

    /// The modified set of a run names each of its columns, for a run that starts past the
    /// first column and ends below, at, or past the 64th (the set's bits, then its list).
    @Test func aRunsModifiedSetNamesEveryColumnOfTheRun() throws {
        try withDatabase { t in
            try t.db.update("create table base3 (a integer, b integer, c integer)")
            try t.db.update("insert into base3 values (1, 2, 3)")
            for count in [1, 10, 60, 61, 62, 70, 130] {
                let record = try #require(try t.db.findFirst("select * from base3"))
                for i in 0..<count { record.set("n\(i)", i) }
                #expect(record.storesCells == false)
                let set = record.clearModified()
                #expect(set.positions == Array(3..<(3 + count)), "\(count) columns")
                #expect(record.modifiedColumns.isEmpty)
                record.markModified(set)
                #expect(record.modifiedColumns == (0..<count).map { "n\($0)" })
            }
            // A run of exactly the first 64 columns (every bit), and one that starts past the 64th.
            let sixtyFour = Record()
            for i in 0..<64 { sixtyFour.set("s\(i)", i) }
            #expect(sixtyFour.storesCells == false)
            #expect(sixtyFour.clearModified().positions == Array(0..<64))
            let names = (0..<70).map { "w\($0)" }
            try t.db.update("create table wide70 (\(names.map { "\($0) integer" }.joined(separator: ", ")))")
            try t.db.update("insert into wide70 (w0) values (1)")
            let wide = try #require(try t.db.findFirst("select * from wide70"))
            for i in 0..<5 { wide.set("late\(i)", i) }
            #expect(wide.storesCells == false)
            let set = wide.clearModified()
            #expect(set.bits == 0 && set.positions == Array(70..<75))
        }
    }

    @Test func aRunPastTheSixtyFourthColumnSavesAndRollsBack() throws {
        try withDatabase { t in
            let names = (0..<70).map { "c\($0)" }
            try t.db.update("create table wide (id integer primary key autoincrement, \(names.map { "\($0) integer" }.joined(separator: ", ")))")
            let plain = Record()
            for (i, name) in names.enumerated() { plain.set(name, i) }
            #expect(plain.storesCells == false)
            // A save rolled back gives the record back as it was: every column modified, no key.
            struct Undo: Error {}
            #expect(throws: Undo.self) {
                try t.db.transaction { db in
                    _ = try db.save("wide", plain)
                    #expect(plain.modifiedColumns.isEmpty && plain.hasColumn("id"))
                    throw Undo()
                }
            }
            #expect(plain.modifiedColumns == names)
            #expect(plain.hasColumn("id") == false)
            #expect(plain["c69"] as? Int == 69)
            _ = try t.db.save("wide", plain)
            #expect(plain.modifiedColumns.isEmpty)
            #expect(try t.db.queryInt("select c69 from wide") == 69)
        }
    }

    @Test func aNewModelsSaveRolledBackIsModifiedAgain() throws {
        try withDatabase { t in
            t.context.register(PlainRunItem.self)
            let item = PlainRunItem()
            item.a = 1; item.b = "x"
            struct Undo: Error {}
            #expect(throws: Undo.self) {
                try t.db.transaction { _ in
                    try item.save()
                    throw Undo()
                }
            }
            #expect(item.modifiedColumns == ["a", "b"])
            #expect(item.id == nil)
            try item.save()
            #expect(try PlainRunItem.dao.findById(item.id)?.b == "x")
        }
    }
}

final class PlainRunItem: Model {
    @Column var a: Int?
    @Column var b: String?
    @Column var c: Double?
    override class var tableName: String { "plain_run_item" }
}
