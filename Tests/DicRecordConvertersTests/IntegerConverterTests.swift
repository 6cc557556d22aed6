import Testing
import Foundation
@testable import DicRecordConverters

/// The fixed-width integer types with a built-in converter.
enum IntegerType: String, CaseIterable, Sendable {
    case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64
}

@Suite("Integer converters")
struct IntegerConverterTests {
    // MARK: Extremes

    @Test("every integer type stores as INTEGER", arguments: IntegerType.allCases)
    func storageType(_ type: IntegerType) {
        let expected: StorageType? = .integer
        switch type {
        case .int: #expect(IntegerConverter<Int>().storageType == .integer); #expect(Converters.shared.storageType(for: Int.self) == expected)
        case .int8: #expect(IntegerConverter<Int8>().storageType == .integer); #expect(Converters.shared.storageType(for: Int8.self) == expected)
        case .int16: #expect(IntegerConverter<Int16>().storageType == .integer); #expect(Converters.shared.storageType(for: Int16.self) == expected)
        case .int32: #expect(IntegerConverter<Int32>().storageType == .integer); #expect(Converters.shared.storageType(for: Int32.self) == expected)
        case .int64: #expect(IntegerConverter<Int64>().storageType == .integer); #expect(Converters.shared.storageType(for: Int64.self) == expected)
        case .uint: #expect(IntegerConverter<UInt>().storageType == .integer); #expect(Converters.shared.storageType(for: UInt.self) == expected)
        case .uint8: #expect(IntegerConverter<UInt8>().storageType == .integer); #expect(Converters.shared.storageType(for: UInt8.self) == expected)
        case .uint16: #expect(IntegerConverter<UInt16>().storageType == .integer); #expect(Converters.shared.storageType(for: UInt16.self) == expected)
        case .uint32: #expect(IntegerConverter<UInt32>().storageType == .integer); #expect(Converters.shared.storageType(for: UInt32.self) == expected)
        case .uint64: #expect(IntegerConverter<UInt64>().storageType == .integer); #expect(Converters.shared.storageType(for: UInt64.self) == expected)
        }
    }

    @Test("min, max, 0 round-trip exactly", arguments: IntegerType.allCases)
    func extremesRoundTrip(_ type: IntegerType) throws {
        // Expected stored values are written out, not derived from the type.
        switch type {
        case .int8: try checkExtremes(Int8.self, min: -128, max: 127)
        case .int16: try checkExtremes(Int16.self, min: -32_768, max: 32_767)
        case .int32: try checkExtremes(Int32.self, min: -2_147_483_648, max: 2_147_483_647)
        case .int64: try checkExtremes(Int64.self, min: -9_223_372_036_854_775_808, max: 9_223_372_036_854_775_807)
        case .int: try checkExtremes(Int.self, min: -9_223_372_036_854_775_808, max: 9_223_372_036_854_775_807)
        case .uint8: try checkExtremes(UInt8.self, min: 0, max: 255)
        case .uint16: try checkExtremes(UInt16.self, min: 0, max: 65_535)
        case .uint32: try checkExtremes(UInt32.self, min: 0, max: 4_294_967_295)
        case .uint:
            // UInt is 64-bit: its max does not fit; the largest storable value is Int64.max.
            try checkExtremes(UInt.self, min: 0, max: nil)
            try expectStored(UInt(9_223_372_036_854_775_807), as: .integer(9_223_372_036_854_775_807))
        case .uint64:
            try checkExtremes(UInt64.self, min: 0, max: nil)
            try expectStored(UInt64(9_223_372_036_854_775_807), as: .integer(9_223_372_036_854_775_807))
        }
    }

    /// `I.min` and `I.max` store as the given INTEGER (through the registry and the struct) and decode back;
    /// `max: nil` skips the max (it does not fit in Int64).
    private func checkExtremes<I: FixedWidthInteger & Sendable>(_: I.Type, min: Int64, max: Int64?,
                                                                 sourceLocation: SourceLocation = #_sourceLocation) throws {
        try expectStored(I.min, as: .integer(min), sourceLocation: sourceLocation)
        try expectConverter(IntegerConverter<I>(), stores: I.min, as: .integer(min), sourceLocation: sourceLocation)
        try expectStored(I.zero, as: .integer(0), sourceLocation: sourceLocation)
        if let max {
            try expectStored(I.max, as: .integer(max), sourceLocation: sourceLocation)
            try expectConverter(IntegerConverter<I>(), stores: I.max, as: .integer(max), sourceLocation: sourceLocation)
        }
    }

    @Test("UInt64 and UInt above Int64.max throw .invalidValue on encode, never wrap")
    func unsignedAboveInt64MaxThrows() {
        let justAbove = UInt64(9_223_372_036_854_775_807) + 1
        expectConversionError(.invalidValue, naming: UInt64.self) { try Converters.shared.encode(justAbove) }
        expectConversionError(.invalidValue, naming: UInt64.self) { try IntegerConverter<UInt64>().encode(justAbove) }
        expectConversionError(.invalidValue, naming: UInt64.self) { try Converters.shared.encode(UInt64.max) }
        expectConversionError(.invalidValue, naming: UInt.self) { try Converters.shared.encode(UInt.max) }
        expectConversionError(.invalidValue, naming: UInt.self) { try IntegerConverter<UInt>().encode(UInt(justAbove)) }
    }

    // MARK: Out-of-range decoding

    @Test("an INTEGER outside the type's range throws, never truncates", arguments: IntegerType.allCases)
    func outOfRangeIntegerThrows(_ type: IntegerType) {
        switch type {
        case .int8: checkOutOfRange(Int8.self, below: -129, above: 128)
        case .int16: checkOutOfRange(Int16.self, below: -32_769, above: 32_768)
        case .int32: checkOutOfRange(Int32.self, below: -2_147_483_649, above: 2_147_483_648)
        case .uint8: checkOutOfRange(UInt8.self, below: -1, above: 256)
        case .uint16: checkOutOfRange(UInt16.self, below: -1, above: 65_536)
        case .uint32: checkOutOfRange(UInt32.self, below: -1, above: 4_294_967_296)
        case .uint: checkOutOfRange(UInt.self, below: -1, above: nil)
        case .uint64: checkOutOfRange(UInt64.self, below: Int64.min, above: nil)
        case .int, .int64:
            // Every INTEGER fits; out of range is only possible through REAL and TEXT.
            expectConversionError(.notConvertible, naming: Int64.self) { try Converters.shared.decode(.real(9.3e18), as: Int64.self) }
            expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.real(-9.3e18), as: Int.self) }
            expectConversionError(.notConvertible, naming: Int64.self) {
                try Converters.shared.decode(.text("9223372036854775808"), as: Int64.self)
            }
            expectConversionError(.notConvertible, naming: Int.self) {
                try IntegerConverter<Int>().decode(.text("9223372036854775808"))
            }
        }
    }

    private func checkOutOfRange<I: FixedWidthInteger & Sendable>(_: I.Type, below: Int64, above: Int64?,
                                                                   sourceLocation: SourceLocation = #_sourceLocation) {
        var stored: [DatabaseValue] = [.integer(below), .real(Double(below)), .text(String(below))]
        if let above { stored += [.integer(above), .real(Double(above)), .text(String(above))] }
        for value in stored {
            expectConversionError(.notConvertible, naming: I.self, sourceLocation: sourceLocation) {
                try Converters.shared.decode(value, as: I.self)
            }
            expectConversionError(.notConvertible, naming: I.self, sourceLocation: sourceLocation) {
                try IntegerConverter<I>().decode(value)
            }
        }
    }

    // MARK: Lenient decoding

    @Test("REAL holding a whole number decodes", arguments: [(3.0, 3), (-0.0, 0), (-42.0, -42), (9_007_199_254_740_992.0, 9_007_199_254_740_992)])
    func wholeRealDecodes(real: Double, expected: Int64) throws {
        #expect(try Converters.shared.decode(.real(real), as: Int64.self) == expected)
        #expect(try Converters.shared.decode(.real(real), as: Int.self) == Int(expected))
        #expect(try IntegerConverter<Int64>().decode(.real(real)) == expected)
    }

    @Test("REAL 3.0 decodes into the narrow types")
    func wholeRealIntoNarrowTypes() throws {
        #expect(try Converters.shared.decode(.real(3.0), as: Int8.self) == 3)
        #expect(try Converters.shared.decode(.real(3.0), as: UInt16.self) == 3)
        #expect(try Converters.shared.decode(.real(3.0), as: UInt64.self) == 3)
    }

    @Test("REAL with a fraction, infinity or NaN throws", arguments: [3.5, -0.25, 1e-300, Double.infinity, -Double.infinity, Double.nan])
    func fractionalRealThrows(real: Double) {
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.real(real), as: Int.self) }
        expectConversionError(.notConvertible, naming: Int32.self) { try Converters.shared.decode(.real(real), as: Int32.self) }
        expectConversionError(.notConvertible, naming: UInt8.self) { try IntegerConverter<UInt8>().decode(.real(real)) }
    }

    @Test("TEXT holding an integer decodes", arguments: [(" 42 ", 42), ("-7", -7), ("0", 0), ("+5", 5),
                                                          ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
                                                          ("3.0", 3), ("1e3", 1000)])
    func numericTextDecodes(text: String, expected: Int64) throws {
        #expect(try Converters.shared.decode(.text(text), as: Int64.self) == expected)
        #expect(try Converters.shared.decode(.text(text), as: Int.self) == Int(expected))
        #expect(try IntegerConverter<Int64>().decode(.text(text)) == expected)
    }

    @Test("TEXT beyond Double's precision never decodes to a nearby integer",
          arguments: ["-9223372036854775809", "9007199254740993.5", "1234567890123456789.4", "9223372036854775807.5",
                      "-9223372036854775808.25"])
    func textNeverRoundsThroughDouble(text: String) {
        // Each text is out of Int64's range or not a whole number, but a Double parse would round it
        // to a representable whole number (e.g. "-9223372036854775809" becomes Int64.min).
        expectConversionError(.notConvertible, naming: Int64.self) { try Converters.shared.decode(.text(text), as: Int64.self) }
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.text(text), as: Int.self) }
        expectConversionError(.notConvertible, naming: Int64.self) { try IntegerConverter<Int64>().decode(.text(text)) }
    }

    @Test("TEXT into narrow types: in range decodes, out of range and negative-into-unsigned throw")
    func numericTextIntoNarrowTypes() throws {
        #expect(try Converters.shared.decode(.text(" 42 "), as: Int8.self) == 42)
        #expect(try Converters.shared.decode(.text("-7"), as: Int16.self) == -7)
        #expect(try Converters.shared.decode(.text("255"), as: UInt8.self) == 255)
        expectConversionError(.notConvertible, naming: UInt32.self) { try Converters.shared.decode(.text("-7"), as: UInt32.self) }
        expectConversionError(.notConvertible, naming: UInt8.self) { try Converters.shared.decode(.text("256"), as: UInt8.self) }
    }

    @Test("TEXT that is not an integer throws", arguments: ["abc", "", "  ", "4 2", "12abc", "3.5", "--1", "½"])
    func nonNumericTextThrows(text: String) {
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.text(text), as: Int.self) }
        expectConversionError(.notConvertible, naming: Int64.self) { try Converters.shared.decode(.text(text), as: Int64.self) }
        expectConversionError(.notConvertible, naming: Int16.self) { try Converters.shared.decode(.text(text), as: Int16.self) }
        expectConversionError(.notConvertible, naming: UInt.self) { try IntegerConverter<UInt>().decode(.text(text)) }
    }

    @Test("BLOB throws")
    func blobThrows() {
        let blob = DatabaseValue.blob(Data([0, 0, 0, 42]))
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(blob, as: Int.self) }
        expectConversionError(.notConvertible, naming: Int32.self) { try Converters.shared.decode(blob, as: Int32.self) }
        expectConversionError(.notConvertible, naming: UInt64.self) { try IntegerConverter<UInt64>().decode(blob) }
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.blob(Data()), as: Int.self) }
    }

    @Test("NULL into a non-optional integer throws; into an optional gives nil")
    func nullDecoding() throws {
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.null, as: Int.self) }
        expectConversionError(.notConvertible, naming: Int64.self) { try Converters.shared.decode(.null, as: Int64.self) }
        expectConversionError(.notConvertible, naming: UInt8.self) { try Converters.shared.decode(.null, as: UInt8.self) }
        #expect(try Converters.shared.decode(.null, as: Int?.self) == nil)
        #expect(try Converters.shared.decode(.null, as: UInt8?.self) == nil)
        #expect(try Converters.shared.decode(.integer(7), as: Int?.self) == 7)
    }
}
