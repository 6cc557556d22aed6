import DicRecordConverters
import Foundation
import Testing
@testable import DicRecord

// The shortcuts of a member write (`r.name = value`): two names with the same representation
// are the same bytes without reading them, and a value of a common type skips the record's
// registry while no registry replaces a common type's converter. Each test fails if a shortcut
// takes two different names for one, or stores a value its registry would have converted.

/// Int stored as TEXT "#n": a registry with it no longer takes Int's built-in path.
private struct HashIntConverter: TypeConverter {
    var storageType: StorageType { .text }
    func encode(_ value: Int) throws -> DatabaseValue { .text("#\(value)") }
    func decode(_ value: DatabaseValue) throws -> Int {
        guard case .text(let text) = value, text.hasPrefix("#"), let int = Int(text.dropFirst()) else {
            throw ConversionError.cannotDecode(value, to: Int.self, "expected '#<n>'")
        }
        return int
    }
}

@Suite struct MemberWriteTests {
    @Test func sameBytesWhateverTheRepresentation() {
        let small = "i0"
        #expect(small.hasSameBytes(as: "i0"))
        #expect(!small.hasSameBytes(as: "i1"))
        #expect(!small.hasSameBytes(as: "i00"))
        #expect(!small.hasSameBytes(as: "I0"))
        // Longer than a small string: the same storage, and a copy of its bytes made at run time.
        let large = String(repeating: "long_column_name_", count: 3)
        let shared = large
        let copied = String(decoding: Array(large.utf8), as: UTF8.self)
        #expect(large.hasSameBytes(as: shared))
        #expect(large.hasSameBytes(as: copied))
        #expect(!large.hasSameBytes(as: String(large.dropLast()) + "-"))
        // A shared storage written afterwards: the writer gets storage of its own.
        var grown = large
        grown.append("x")
        #expect(!grown.hasSameBytes(as: large))
        #expect(large.hasSameBytes(as: shared))
        // Canonically equivalent text is not the same bytes.
        #expect(!"\u{E9}".hasSameBytes(as: "e\u{301}"))
        #expect(!"\u{212A}".hasSameBytes(as: "K"))
        #expect(!"".hasSameBytes(as: "\u{0}"))
        #expect("".hasSameBytes(as: String(decoding: [UInt8](), as: UTF8.self)))
    }

    @Test func memberWritesFollowingTheLastRecordStillTellNamesApart() throws {
        // The first record grows the layout chain i0, i1, i2; later ones follow it.
        for round in 0..<3 {
            let r = Record()
            r.i0 = round
            r.i1 = "one"
            r.i2 = 2.5
            #expect(r.columnNames == ["i0", "i1", "i2"])
            #expect(r.i0 as Int? == round)
        }
        // The same names in another case are the same columns (SQLite's rule), written in place.
        let r = Record()
        r.i0 = 1
        r.I0 = 2
        r.i1 = "a"
        r.I1 = "b"
        #expect(r.columnNames == ["i0", "i1"])
        #expect(r.i0 as Int? == 2)
        #expect(r.i1 as String? == "b")
        // Canonically equivalent names with other bytes are two columns, after a chain that has one.
        let first = Record()
        first["caf\u{E9}"] = 1
        first["x"] = 0
        let second = Record()
        second["cafe\u{301}"] = 2
        second["caf\u{E9}"] = 3
        #expect(second.columnNames == ["cafe\u{301}", "caf\u{E9}"])
        #expect(try second.get("cafe\u{301}", as: Int.self) == 2)
        #expect(try second.get("caf\u{E9}", as: Int.self) == 3)
        // A long name written again is found, not appended.
        let long = String(repeating: "column_", count: 4)
        let third = Record()
        third[long] = 1
        third[String(decoding: Array(long.utf8), as: UTF8.self)] = 5
        #expect(third.columnCount == 1)
        #expect(try third.get(long, as: Int.self) == 5)
    }

    @Test func aCommonValueWrittenToARecordOfARegistryReplacingItsConverterGoesThroughIt() throws {
        try withDatabase { t throws in
            let r = try #require(try t.db.findFirst("select 1 as n"))
            #expect(r.layout.registry === t.context.converters)
            t.context.converters.register(HashIntConverter())
            r.n = 5
            r.m = 6
            r.s = "text"
            #expect(r.values[try #require(r.layout.position(of: "n"))] == .text("#5"))
            #expect(r.values[try #require(r.layout.position(of: "m"))] == .text("#6"))
            #expect(r.values[try #require(r.layout.position(of: "s"))] == .text("text"))
            #expect(r.n as Int? == 5)
            // A record of the shared registry keeps Int's built-in converter.
            let plain = Record()
            plain.n = 5
            #expect(plain.values[0] == .integer(5))
            try t.db.update("create table hashed (n, m, s)")
            #expect(try t.db.save("hashed", r))
            #expect(try t.db.queryString("select m from hashed") == "#6")
        }
    }
}
