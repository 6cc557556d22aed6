import DicRecordConverters
import Foundation
import Synchronization
import Testing
@testable import DicRecord

// Records built from literals and member writes read common values where they lie
// (`PlainValue.peek`, `LiteralPairs`). These check the layouts that relies on, and that every
// value comes out as the general path gives it.

private struct Wide: Codable, Equatable { var a, b, c, d: Int }   // four words: boxed, not inline
private final class Boxed: @unchecked Sendable {}

@Suite("Common values read where they lie")
struct PlainValueTests {
    /// The layouts the unsafe reads assume: an `Any?` is three words of buffer and a metadata
    /// word (zero for nil), and a `KeyValuePairs` is the array of its elements.
    @Test func theLayoutsTheReadsAssumeHold() {
        let word = MemoryLayout<UnsafeRawPointer>.size
        #expect(MemoryLayout<Any?>.size == 4 * word)
        #expect(MemoryLayout<Any>.size == 4 * word)
        #expect(PlainValue.metadataOffset == 3 * word)
        var none: Any? = nil
        withUnsafeBytes(of: &none) { #expect($0.load(fromByteOffset: 3 * word, as: UInt.self) == 0) }
        var some: Any? = 7
        withUnsafeBytes(of: &some) {
            #expect($0.load(fromByteOffset: 3 * word, as: UInt.self) == UInt(bitPattern: ObjectIdentifier(Int.self)))
            #expect($0.load(as: Int.self) == 7)
        }
        // `Record.set` unwraps first and reads the `Any` itself: laid out as the one an `Any?` wraps.
        // (Through a pointer typed as the container: Swift 6 opens an `Any` handed to
        // `withUnsafeBytes(of:)`, which would give the bytes of the Int it holds.)
        var unwrapped: Any = 7
        withUnsafeMutablePointer(to: &unwrapped) { (container: UnsafeMutablePointer<Any>) in
            let raw = UnsafeRawPointer(container)
            #expect(raw.load(fromByteOffset: 3 * word, as: UInt.self) == UInt(bitPattern: ObjectIdentifier(Int.self)))
            #expect(raw.load(as: Int.self) == 7)
        }
        #expect(MemoryLayout<KeyValuePairs<String, Any?>>.size == MemoryLayout<[(key: String, value: Any?)]>.size)
        let literal: KeyValuePairs<String, Any?> = ["a": 1, "b": "two", "c": nil, "d": 4.5]
        let elements = unsafeBitCast(literal, to: [(key: String, value: Any?)].self)
        #expect(elements.map(\.key) == literal.map(\.key))
        #expect(elements.map { "\($0.value as Any)" } == literal.map { "\($0.value as Any)" })
        #expect(LiteralPairs.valueOffset == MemoryLayout<String>.stride)
        #expect(LiteralPairs.keyOffset == 0)
        elements.withUnsafeBufferPointer { buffer in
            let pairs = LiteralPairs(elements: buffer)
            #expect((0..<pairs.count).map(pairs.name(at:)) == ["a", "b", "c", "d"])
        }
        // A cell is its flags and one reference: a common value is rebuilt from its kind.
        #expect(MemoryLayout<Record.Cell>.stride == 2 * word)
    }

    /// Each common type is read as itself; nil, Optionals inside an `Any` and every other type
    /// are left to the general path.
    @Test func peekReadsTheCommonTypesAndNothingElse() {
        let long = String(repeating: "长", count: 40)   // on the heap, not a small string
        func peek(_ value: Any?) -> PlainValue? { PlainValue.peek(value) }
        if case .int(let v)? = peek(Int.min) { #expect(v == Int.min) } else { Issue.record("Int") }
        if case .int64(let v)? = peek(Int64(-5)) { #expect(v == -5) } else { Issue.record("Int64") }
        if case .double(let v)? = peek(-0.0) { #expect(v.bitPattern == (-0.0).bitPattern) } else { Issue.record("Double") }
        if case .bool(let v)? = peek(true) { #expect(v) } else { Issue.record("Bool") }
        if case .string(let v)? = peek("é") { #expect(v == "é") } else { Issue.record("String") }
        if case .string(let v)? = peek(long) { #expect(v == long) } else { Issue.record("long String") }
        #expect(peek(nil) == nil)
        #expect(peek(Optional<Int>.some(3) as Any) == nil)
        #expect(peek(Optional<Int>.none as Any) == nil)
        #expect(peek(Int32(3)) == nil)
        #expect(peek(UInt(3)) == nil)
        #expect(peek(Float(1.5)) == nil)
        #expect(peek(Date(timeIntervalSince1970: 1)) == nil)
        #expect(peek(Data([1, 2])) == nil)
        #expect(peek(Wide(a: 1, b: 2, c: 3, d: 4)) == nil)
        #expect(peek(Boxed()) == nil)
        #expect(peek(DatabaseValue.integer(1)) == nil)

        // The overload for an `Any` (what `Record.set` reads once it has unwrapped its value)
        // agrees with the one for an `Any?` on every value.
        let values: [Any] = [Int.min, Int64(-5), -0.0, Double.nan, true, "é", long, Optional<Int>.some(3) as Any,
                             Optional<Int>.none as Any, Int32(3), UInt(3), Float(1.5), Date(timeIntervalSince1970: 1),
                             Data([1, 2]), Wide(a: 1, b: 2, c: 3, d: 4), Boxed(), DatabaseValue.integer(1)]
        for value in values {
            #expect(PlainValue.peek(value as Any).map(String.init(describing:)) == peek(value).map(String.init(describing:)),
                    "\(type(of: value))")
        }
        if case .int(let v)? = PlainValue.peek(42 as Any) { #expect(v == 42) } else { Issue.record("Int as Any") }
        if case .string(let v)? = PlainValue.peek(long as Any) { #expect(v == long) } else { Issue.record("long String as Any") }
    }

    /// A literal, the same pairs as a dictionary, and member writes make the same record: the
    /// same stored values and the same untyped and typed reads, for common and other values.
    @Test func everyWayOfBuildingARecordAgrees() throws {
        let url = URL(string: "https://example.com/a")!
        let date = Date(timeIntervalSince1970: 1_000.25)
        let long = String(repeating: "长", count: 40)
        let literal = try Record(["i": 42, "big": Int64.max, "d": 2.5, "b": true, "s": "é", "long": long,
                                  "n": nil, "opt": Optional<Int>.some(9), "u": url, "t": date, "f": Float(1.5)])
        let dictionary = try Record(dictionary: ["i": 42, "big": Int64.max, "d": 2.5, "b": true, "s": "é", "long": long,
                                                 "n": nil, "opt": Optional<Int>.some(9), "u": url, "t": date, "f": Float(1.5)])
        let written = Record()
        written.i = 42; written.big = Int64.max; written.d = 2.5; written.b = true; written.s = "é"; written.long = long
        written.n = nil; written.opt = Optional<Int>.some(9); written.u = url; written.t = date; written.f = Float(1.5)
        for record in [literal, dictionary, written] {
            #expect(record.storedValue("i") == .integer(42))
            #expect(record.storedValue("big") == .integer(.max))
            #expect(record.storedValue("d") == .real(2.5))
            #expect(record.storedValue("b") == .integer(1))
            #expect(record.storedValue("s") == .text("é"))
            #expect(record.storedValue("long") == .text(long))
            #expect(record.storedValue("n") == .null)
            #expect(record.storedValue("opt") == .integer(9))
            #expect(record.storedValue("u") == .text(url.absoluteString))
            #expect(record.storedValue("f") == .real(1.5))
            // Untyped reads give back what was written, as its own type.
            #expect(record.i as? Int == 42)
            #expect(record.big as? Int64 == .max)
            #expect(record.d as? Double == 2.5)
            #expect(record.b as? Bool == true)
            #expect(record.s as? String == "é")
            #expect(record.opt as? Int == 9)
            #expect(record.t as? Date == date)
            #expect((record.n as Any?) == nil)
            // Typed reads.
            #expect(record.i as Int? == 42)
            #expect(record.b as Bool? == true)
            #expect(record.long as String? == long)
            #expect(record.u as URL? == url)
            #expect(record.modifiedColumns.count == 11)
        }
    }

    /// NaN has no stored form: refused by the literal (naming the column) and kept as an
    /// encoding error by a member write, as before.
    @Test func aNaNIsStillRefused() throws {
        let error = try #require(throws: ConversionError.self) { try Record(["ok": 1, "x": Double.nan]) }
        #expect("\(error)".contains("x"))
        try withDatabase { t throws in
            try t.db.update("create table nan_t(x real)")
            let r = Record()
            r.x = Double.nan
            #expect(throws: (any Error).self) { try t.db.save("nan_t", r) }
            #expect(try t.db.queryInt("select count(*) from nan_t") == 0)
        }
    }

    /// A registry that replaces a common type's conversion is asked for member writes of it
    /// (the in-place read is only for the built-in rules).
    @Test func aReplacedConversionIsUsedForMemberWrites() throws {
        struct TenfoldInt: TypeConverter {
            var storageType: StorageType { .integer }
            func encode(_ value: Int) throws -> DatabaseValue { .integer(Int64(value) * 10) }
            func decode(_ value: DatabaseValue) throws -> Int {
                guard case .integer(let v) = value else { throw ConversionError.cannotDecode(value, to: Int.self, "INTEGER") }
                return Int(v / 10)
            }
        }
        try withDatabase { t throws in
            t.context.register(converter: TenfoldInt())
            let r = try #require(try t.db.findFirst("select 1 as n"))
            r.n = 4
            #expect(r.storedValue("n") == .integer(40))
            r.set("m", 5)
            #expect(r.storedValue("m") == .integer(50))
        }
    }
}
