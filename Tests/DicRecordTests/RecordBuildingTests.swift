import Foundation
import Testing
@testable import DicRecord

// Records built from values in a loop share the layout of the previous one while their names
// come in its order (`Record.LayoutReuse`), and a written Int, Bool, String, Double or Data is
// kept as its type only (`Record.Kept`). These check what each record then holds.
@Suite("Building records")
struct LayoutReuseTests {
    @Test func recordsOfOtherShapesAfterEachOtherKeepTheirOwnColumns() throws {
        let shapes: [KeyValuePairs<String, Any?>] = [
            ["a": 1, "b": 2, "c": 3],
            ["a": 4, "b": 5, "c": 6],          // the same names: the same layout
            ["a": 7],                          // fewer
            ["a": 8, "b": 9, "c": 10, "d": 11], // more
            ["b": 12, "a": 13],                // another order
            ["a": 14, "A": 15],                // the same column twice: the last wins
            ["K": 16],
            // The Kelvin sign: Swift's == takes it for "K", SQLite does not; it is not the last layout's "K".
            ["\u{212A}": 18],
        ]
        let expected: [[String]] = [["a", "b", "c"], ["a", "b", "c"], ["a"], ["a", "b", "c", "d"], ["b", "a"], ["a"],
                                    ["K"], ["\u{212A}"]]
        let built = try shapes.map { try Record($0) }
        for (record, names) in zip(built, expected) {
            #expect(record.columnNames.map { Array($0.utf8) } == names.map { Array($0.utf8) })
            #expect(record.modifiedColumns.count == names.count)
        }
        #expect(built[0].columnNames == built[1].columnNames)
        #expect(built[2]["a"] as? Int == 7 && built[2].hasColumn("b") == false)
        #expect(built[3]["d"] as? Int == 11)
        #expect(built[4][0] as? Int == 12)
        #expect(built[5]["a"] as? Int == 15)
        #expect(built[6][0] as? Int == 16)
        #expect(built[7][0] as? Int == 18)
    }

    @Test func aWrittenValueReadsBackAsItsOwnType() throws {
        let record = try Record(["i": 1, "b": true, "s": "x", "d": 1.5, "data": Data([1, 2]), "i64": Int64(3),
                                 "date": Date(timeIntervalSince1970: 10), "url": URL(string: "https://a.b")!, "none": nil])
        #expect(record["i"] as? Int == 1)
        #expect(record["b"] as? Bool == true)
        #expect(record["s"] as? String == "x")
        #expect(record["d"] as? Double == 1.5)
        #expect(record["data"] as? Data == Data([1, 2]))
        #expect(record["i64"] as? Int64 == 3)
        #expect(record["date"] as? Date == Date(timeIntervalSince1970: 10))
        #expect(record["url"] as? URL == URL(string: "https://a.b"))
        #expect(record["none"] == nil)
        record.b = false
        record.i = 2
        #expect(record["b"] as? Bool == false)
        #expect(record["i"] as? Int == 2)
        #expect(try record.get("b", as: Int.self) == 0)
        let dictionary = record.toDictionary()
        #expect(dictionary["b"] as? Bool == false && dictionary["i"] as? Int == 2)
    }

    @Test func underAConverterThatReplacesIntTheWrittenValueItselfIsKept() throws {
        try withDatabase { t in
            t.context.register(converter: TenfoldInt())
            let r = try #require(try t.db.findFirst("select 1 as n, 'a' as s"))
            r.n = 4                                    // stored as 40 by the context's converter
            r.s = "b"
            #expect(r.n as? Int == 4)                  // the value written, not Int(40)
            #expect(r.toDictionary()["n"] as? Int == 4)
            #expect(try r.get("n", as: Int.self) == 4)
            #expect(r.s as? String == "b")
            try t.db.update("create table v (n integer)")
            try t.db.save("v", try Record(["n": 3]))  // the shared registry: built in, stored as 3
            #expect(try t.db.query("select n from v", as: Int64.self) == [3])   // (read back raw: the context would divide)
        }
    }

    @Test func aTypedReadOfAWrittenStringDoesNotReplaceIt() throws {
        let r = try Record(["born": "1970-01-01T00:00:10Z", "link": "https://a.b"])
        r.more = "https://c.d"
        _ = try? r.get("born", as: Date.self)
        let link: URL? = r.link
        let more: URL? = r.more
        #expect(link == URL(string: "https://a.b") && more == URL(string: "https://c.d"))
        #expect(r["born"] as? String == "1970-01-01T00:00:10Z")
        #expect(r["link"] as? String == "https://a.b")
        #expect(r["more"] as? String == "https://c.d")
        #expect(r.toDictionary()["link"] as? String == "https://a.b")
    }
}
