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

/// A record written one column at a time follows the layout the last such record grew
/// (`RowLayout.appendingIfRemembered`): that shortcut must never add a column the record has
/// (in another case), nor merge names SQLite tells apart.
@Suite("Records built by member writes")
struct MemberWriteLayoutTests {
    @Test func aColumnWrittenAgainInAnotherCaseIsTheSameColumn() throws {
        let first = Record()
        first.x = 1
        first.y = 2
        #expect(first.columnNames == ["x", "y"])
        // Same path as `first` up to [x]; then "X" (the column x) and "Y" (the column y).
        let second = Record()
        second.x = 5
        second.X = 6
        second["Y"] = 7
        second.y = 8
        #expect(second.columnNames == ["x", "Y"])
        #expect(second["x"] as? Int == 6)
        #expect(second["y"] as? Int == 8)
        #expect(Set(second.modifiedColumns) == ["x", "Y"])
        // A column written twice in a row stays one column.
        let third = Record()
        third.x = 1
        third.y = 2
        third.y = 3
        #expect(third.columnNames == ["x", "y"])
        #expect(third["y"] as? Int == 3)
    }

    @Test func namesThatAreEqualAsSwiftStringsButNotToSQLiteStayTwoColumns() throws {
        let kelvin = "\u{212A}"            // KELVIN SIGN: Swift's == takes it for "K"; SQLite does not
        let a = Record()
        a["K"] = 1
        a[kelvin] = 2
        #expect(a.columnNames == ["K", kelvin])
        let b = Record()
        b["K"] = 3
        b["k"] = 4                          // the same column to SQLite (ASCII case)
        b[kelvin] = 5
        #expect(b.columnNames == ["K", kelvin])
        #expect(b["K"] as? Int == 4)
        #expect(b[kelvin] as? Int == 5)
        let c = Record()
        c[kelvin] = 6
        c["K"] = 7
        #expect(c.columnNames == [kelvin, "K"])
    }

    @Test func manyRecordsBuiltAlikeKeepTheirValues() throws {
        let records = (0..<100).map { n -> Record in
            let r = Record()
            for c in 0..<12 { r["c\(c)"] = n * 100 + c }   // past the 8 values reserved at first
            return r
        }
        for (n, r) in records.enumerated() {
            #expect(r.columnNames == (0..<12).map { "c\($0)" })
            #expect((0..<12).map { r["c\($0)"] as? Int } == (0..<12).map { n * 100 + $0 })
        }
    }

    @Test func canonicallyEquivalentNamesAreTwoColumnsAsInSQLite() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"   // equal to Swift's ==, not to SQLite
        let r = Record()
        r[composed] = 1
        r[decomposed] = 2
        r["名"] = 3
        #expect(r.columnNames.map { Array($0.utf8) } == [composed, decomposed, "名"].map { Array($0.utf8) })
        #expect(r[composed] as? Int == 1)
        #expect(r[decomposed] as? Int == 2)
        // ASCII letters still fold around the other bytes, as SQLite folds them.
        r["CAF\u{E9}"] = 4
        #expect(r.columnNames.count == 3)
        #expect(r[composed] as? Int == 4)
    }

    /// An UPDATE by key "K" keeps a column named with the Kelvin sign in its SET list (Foundation's
    /// case-insensitive compare took it for the key and dropped the new value).
    @Test func anUpdateKeyedByKWritesTheKelvinColumn() throws {
        try withDatabase { t in
            let kelvin = "\u{212A}"
            try t.db.update("create table t(K integer primary key, \"\(kelvin)\" integer)")
            let r = Record()
            r["K"] = 1
            r[kelvin] = 5
            try t.db.save("t", r, primaryKey: "K")
            let found = try #require(try t.db.findFirst("select * from t"))
            #expect((found[kelvin] as Int?) == 5)
            found[kelvin] = 6
            #expect(try t.db.update("t", found, primaryKey: "K"))
            #expect(try t.db.queryInt("select \"\(kelvin)\" from t where K = 1") == 6)
        }
    }

    /// Found in review: one INSERT served records whose column names Swift's == takes as equal
    /// (the Kelvin sign and "K"), so the second record's value went into the first's column.
    @Test func aBatchOfRecordsWithKelvinAndKColumnsInsertsEachIntoItsOwn() throws {
        try withDatabase { t in
            let kelvin = "\u{212A}"
            try t.db.update("create table t(id integer primary key, K integer, \"\(kelvin)\" integer)")
            let k = Record(), sign = Record()
            k["K"] = 1
            sign[kelvin] = 5
            _ = try t.db.batchSave("t", [k, sign])
            let rows = try t.db.find("select K, \"\(kelvin)\" as sign from t order by id")
            #expect(rows.map { $0["K"] as Int? } == [1, nil])
            #expect(rows.map { $0["sign"] as Int? } == [nil, 5])
        }
    }

    /// Found in review: a Decodable read tried the column after the last one by Swift's ==.
    @Test func aDecodableKeyKReadsTheKColumnNotTheKelvinOne() throws {
        struct OnlyK: Decodable { let K: Int }
        try withDatabase { t in
            let row = try #require(try t.db.findFirst("select 1 as \"\u{212A}\", 2 as K"))
            #expect(try row.decode(OnlyK.self).K == 2)
        }
    }

    /// Found in review: the prepared-statement caches were keyed by Swift strings, so SQL that
    /// differs only in a literal's normalization ran the statement prepared for the other.
    @Test(arguments: Engine.available) func sqlThatDiffersOnlyInNormalizationIsAnotherStatement(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            let length = engine == .sqlite ? "length(cast(%@ as blob))" : "octet_length(%@)"
            func bytes(_ literal: String) throws -> Int? {
                try t.db.queryInt("select " + length.replacingOccurrences(of: "%@", with: "'\(literal)'"))
            }
            #expect(try bytes("\u{E9}") == 2)          // é, one scalar
            #expect(try bytes("e\u{301}") == 3)        // e and a combining acute: equal to Swift's ==
            #expect(try bytes("\u{E9}") == 2)
        }
    }

    /// A record built one column at a time, as the one before it was, makes room for all its
    /// columns and a generated key at its first write: its storage grows once.
    @Test func aRecordGrownLikeTheLastOneMakesRoomOnce() throws {
        // Names no other test uses, from a layout no other test reaches: tests run in parallel
        // and `Record()`'s empty layout is everyone's.
        let seed = "seed_\(UUID().uuidString)"
        let names = (0..<13).map { "grow_\($0)" }
        let first = try Record([seed: 0])
        for name in names { first.set(name, 1) }
        first.put("id", .integer(1))             // as a save writes its generated key back
        let second = try Record([seed: 0])   // built with room for one more
        var rooms: [Int] = []
        for name in names {
            second.set(name, 2)
            rooms.append(second.lock.withLock { _ in second.values.capacity })
        }
        second.put("id", .integer(2))
        rooms.append(second.lock.withLock { _ in second.values.capacity })
        // The built room holds the first write; the second makes room for all the rest at once.
        #expect(rooms[0] == 2)
        #expect(Set(rooms.dropFirst()).count == 1 && rooms[1] >= names.count + 2)
        #expect(second.columnNames == [seed] + names + ["id"])
        #expect(names.allSatisfy { second[$0] as Int? == 2 })
        // A record that takes another path grows as before: room for two more, then eight.
        let other = try Record(["other_\(UUID().uuidString)": 0])
        other.set("unrelated", 1)
        #expect(other.lock.withLock { _ in other.values.capacity } == 2)
        other.set("unrelated_too", 1)
        other.set("unrelated_three", 1)
        other.set("unrelated_four", 1)
        #expect(other.lock.withLock { _ in other.values.capacity } == 8)
        #expect(Record().columnNames.isEmpty && other.columnNames.count == 5)
    }

    /// A record built from values keeps them where its writes go: writing a column (a save's
    /// generated key) copies nothing.
    @Test func aBuiltRecordsFirstWriteCopiesNothing() throws {
        let record = try Record(["a": 1, "b": "two", "c": 3.5])
        let before = record.lock.withLock { _ in ObjectIdentifier(record.values.storage) }
        record.put("id", .integer(7))
        record.set("a", 10)
        #expect(record.lock.withLock { _ in ObjectIdentifier(record.values.storage) } == before)
        #expect(record.toDictionary().mapValues { "\($0 ?? "nil")" } == ["a": "10", "b": "two", "c": "3.5", "id": "7"])
        #expect(Set(record.modifiedColumns) == ["a", "b", "c"])
    }

    /// A record written from birth (built from values, `Record()`) writes its base: a status bit
    /// says so, beside the one that says a cell may hold an encoding error. Clearing the Date
    /// marks (removing a column) keeps both, so a value that could not be encoded still stops the save.
    @Test func removingAColumnKeepsAWrittenRecordsEncodingError() throws {
        struct NoConverter: Sendable { let x = 1 }
        try withDatabase { t in
            try t.db.update("create table enc (id integer primary key, a integer, b text, thing blob)")
            let built = try Record(["a": 1, "b": "x"])
            let empty = Record()
            for (saved, record) in [built, empty].enumerated() {
                record.a = 2
                record.thing = NoConverter()
                record.remove("b")
                #expect(record.flags.load(ordering: .relaxed) & Record.ownsBaseBit != 0)
                #expect(throws: ConversionError.self) { try t.db.save("enc", record) }
                #expect(try t.db.queryInt("select count(*) from enc") == saved)
                record.thing = nil
                #expect(try t.db.save("enc", record))
            }
            #expect(try t.db.queryInt("select count(*) from enc where a = 2 and thing is null") == 2)
        }
    }

    /// A fetched record reused by `each` (refilled in place) is a fetched record again after a
    /// pass that wrote it: the next row is read without the lock, and a write copies it first.
    @Test func aRecordRefilledByEachAfterAWriteIsFetchedAgain() throws {
        try withDatabase { t in
            try t.db.update("create table refill (id integer primary key, v integer)")
            for v in 1...3 { try t.db.update("insert into refill (v) values (?)", v) }
            var seen: [Int] = []
            try t.db.each("select v from refill order by id") { record in
                let v: Int? = record.v
                seen.append(v ?? -1)
                #expect(record.modifiedColumns.isEmpty)
                #expect(!record.isMutated && record.flags.load(ordering: .relaxed) & Record.ownsBaseBit == 0)
                record.v = 100
                #expect(record.modifiedColumns == ["v"])
                return true
            }
            #expect(seen == [1, 2, 3])
        }
    }
}
