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

    /// Member writes of every kind of input, checked against the literal builder (the general
    /// path, `encodedGenerally`) and by what they store and report.
    @Test func memberWritesOfEveryKindOfInputAsBefore() throws {
        let date = Date(timeIntervalSince1970: 1_000.25)
        let someNil: Int?? = .some(nil)
        let someSome: Int?? = .some(5)
        let none: Int?? = nil
        let r = Record()
        r.n = nil
        r.sn = someNil as Any?   // (what the implicit coercion makes, spelled out)
        r.ss = someSome as Any?
        r.nn = none as Any?
        r.i = 1; r.big = Int64.max; r.d = 2.5; r.b = true; r.s = "x"; r.t = date
        #expect(r.storedValue("n") == .null)
        #expect(r.storedValue("sn") == .null)
        #expect(r.storedValue("ss") == .integer(5))
        #expect(r.storedValue("nn") == .null)
        #expect(r.n == nil && r.nn == nil)
        #expect("\(r.sn as Any)" == "Optional(nil)")           // the written Optional, kept as it was
        #expect(r.ss as? Int == 5)
        #expect(r.big as? Int64 == .max && r.b as? Bool == true && r.t as? Date == date)
        #expect(r.modifiedColumns == ["n", "sn", "ss", "nn", "i", "big", "d", "b", "s", "t"])
        let literal = try Record(["n": nil, "sn": someNil as Any?, "ss": someSome as Any?, "nn": none as Any?, "i": 1, "big": Int64.max,
                                  "d": 2.5, "b": true, "s": "x", "t": date])
        for column in r.columnNames {
            #expect(r.storedValue(column) == literal.storedValue(column), "\(column)")
            #expect("\(r[column] as Any)" == "\(literal[column] as Any)", "\(column)")
        }
        #expect(r.firstEncodingError == nil)

        // NaN and a value with no converter: kept as NULL with an error naming column and value.
        let nan = Record()
        nan.x = Double.nan
        let nanError = try #require(nan.firstEncodingError)
        #expect(nanError.column == "x" && nanError.kind == .invalidValue)
        #expect(nanError.value.contains("nan"))
        #expect(nan.storedValue("x") == .null)
        let array = Record()
        array.tags = [1, 2, 3]
        let arrayError = try #require(array.firstEncodingError)
        #expect(arrayError.column == "tags")
        #expect(arrayError.description.contains("\"tags\""))
        #expect(array.tags as? [Int] == [1, 2, 3])
    }

    /// A record stepping to its layout's remembered successor (`appendsToPlainRun`) while it alone
    /// holds the layout it leaves: the store frees that layout, and with it the successor's only
    /// other reference; the record must have retained the successor first.
    @Test func aStepFromALayoutOnlyTheRecordHoldsKeepsTheNextOne() throws {
        weak var left: RowLayout?
        weak var next: RowLayout?
        let record: Record
        do {
            let first = try Record(["stepFree_a": 1])
            record = try Record(["stepFree_a": 2])           // the same layout: the last one built
            #expect(first.baseLayout === record.baseLayout)
            first.stepFree_b = 10                           // makes and remembers [a, b]
            left = record.baseLayout
            next = first.baseLayout
            _ = try Record(["stepFree_other": 0])           // this thread's last-built layout is another now
        }
        // `first` is gone: [a] is held by `record` alone, [a, b] by [a]'s successor alone.
        #expect(left != nil && next != nil)
        record.stepFree_b = 20
        #expect(left == nil)                                  // [a] went at the step
        #expect(next != nil && next === record.baseLayout)
        #expect(record.storesCells == false)
        record.stepFree_c = 30
        #expect(record.columnNames == ["stepFree_a", "stepFree_b", "stepFree_c"])
        #expect(record.stepFree_a as? Int == 2 && record.stepFree_b as? Int == 20 && record.stepFree_c as? Int == 30)
    }
}
