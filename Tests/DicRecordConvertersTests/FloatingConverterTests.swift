import Testing
import Foundation
@testable import DicRecordConverters

@Suite("Double and Float converters")
struct FloatingConverterTests {
    // MARK: Double

    @Test("Double values store as exactly that REAL",
          arguments: [0.0, 1.0, -2.5, Double.pi, Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude,
                      Double.leastNonzeroMagnitude, Double.leastNormalMagnitude, 1e-300, 123_456_789.012_345_6,
                      Double.infinity, -Double.infinity])
    func doubleRoundTrips(value: Double) throws {
        #expect(DoubleConverter().storageType == .real)
        #expect(Converters.shared.storageType(for: Double.self) == .real)
        for stored in [try Converters.shared.encode(value), try DoubleConverter().encode(value)] {
            #expect(realValue(stored)?.bitPattern == value.bitPattern, "\(stored)")
        }
        #expect(try Converters.shared.decode(.real(value), as: Double.self).bitPattern == value.bitPattern)
        #expect(try DoubleConverter().decode(.real(value)).bitPattern == value.bitPattern)
    }

    @Test("-0.0 keeps its sign both ways")
    func negativeZeroKeepsSign() throws {
        // .real(-0.0) == .real(0.0) (Double equality), so check the sign itself.
        let stored = try Converters.shared.encode(-0.0)
        #expect(realValue(stored)?.sign == .minus)
        #expect(realValue(try DoubleConverter().encode(-0.0))?.sign == .minus)
        #expect(try Converters.shared.decode(.real(-0.0), as: Double.self).sign == .minus)
        #expect(try DoubleConverter().decode(.real(-0.0)).sign == .minus)
    }

    @Test("NaN throws .invalidValue on encode (SQLite would store NULL)")
    func doubleNaNThrows() {
        expectConversionError(.invalidValue, naming: Double.self) { try Converters.shared.encode(Double.nan) }
        expectConversionError(.invalidValue, naming: Double.self) { try DoubleConverter().encode(.nan) }
        expectConversionError(.invalidValue, naming: Double.self) { try Converters.shared.encode(-Double.signalingNaN) }
    }

    @Test("INTEGER and numeric TEXT decode into Double",
          arguments: [(DatabaseValue.integer(42), 42.0), (.integer(-9_007_199_254_740_992), -9_007_199_254_740_992.0),
                      (.text("2.5"), 2.5), (.text(" -1e3 "), -1000.0), (.text("0"), 0.0)])
    func doubleLenientDecode(stored: DatabaseValue, expected: Double) throws {
        #expect(try Converters.shared.decode(stored, as: Double.self) == expected)
        #expect(try DoubleConverter().decode(stored) == expected)
    }

    @Test("non-numeric TEXT, BLOB and NULL throw for Double",
          arguments: [DatabaseValue.text("abc"), .text(""), .text("2.5kg"), .text("nan"), .blob(Data(repeating: 0, count: 8)), .null])
    func doubleBadInputThrows(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Double.self) { try Converters.shared.decode(stored, as: Double.self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: Double.self) { try DoubleConverter().decode(stored) }
        }
    }

    // MARK: Float

    @Test("Float 0.1 stores as REAL 0.1 exactly, not 0.100000001490116")
    func floatShortestDecimal() throws {
        #expect(FloatConverter().storageType == .real)
        #expect(Converters.shared.storageType(for: Float.self) == .real)
        let viaRegistry = try Converters.shared.encode(Float(0.1))
        #expect(viaRegistry == .real(0.1))
        #expect(realValue(viaRegistry)?.bitPattern == (0.1 as Double).bitPattern)
        #expect(viaRegistry != .real(Double(Float(0.1))))
        #expect(try FloatConverter().encode(0.1) == .real(0.1))
        #expect(try FloatConverter().encode(1.1) == .real(1.1))
        #expect(try FloatConverter().encode(-3.14159) == .real(-3.14159))
        #expect(try Converters.shared.decode(.real(0.1), as: Float.self) == Float(0.1))
    }

    @Test("Float values round-trip bit for bit",
          arguments: [Float(0.1), 1.1, -3.14159, 16_777_216, Float.greatestFiniteMagnitude, -Float.greatestFiniteMagnitude,
                      Float.leastNonzeroMagnitude, Float.leastNormalMagnitude, -0.0, Float.infinity, -Float.infinity])
    func floatRoundTrips(value: Float) throws {
        let stored = try Converters.shared.encode(value)
        #expect(try FloatConverter().encode(value) == stored)
        #expect(try Converters.shared.decode(stored, as: Float.self).bitPattern == value.bitPattern, "\(stored)")
        #expect(try FloatConverter().decode(stored).bitPattern == value.bitPattern)
    }

    @Test("Float NaN throws .invalidValue on encode")
    func floatNaNThrows() {
        expectConversionError(.invalidValue, naming: Float.self) { try Converters.shared.encode(Float.nan) }
        expectConversionError(.invalidValue, naming: Float.self) { try FloatConverter().encode(.nan) }
    }

    @Test("a REAL beyond Float's range throws", arguments: [1e300, -1e300, 3.5e38, Double.greatestFiniteMagnitude])
    func floatOutOfRangeThrows(real: Double) {
        expectConversionError(.notConvertible, naming: Float.self) { try Converters.shared.decode(.real(real), as: Float.self) }
        expectConversionError(.notConvertible, naming: Float.self) { try FloatConverter().decode(.real(real)) }
        expectConversionError(.notConvertible, naming: Float.self) { try Converters.shared.decode(.text(String(real)), as: Float.self) }
    }

    @Test("TEXT and INTEGER decode into Float")
    func floatLenientDecode() throws {
        #expect(try Converters.shared.decode(.text("2.5"), as: Float.self) == 2.5)
        #expect(try FloatConverter().decode(.text(" 0.1 ")) == Float(0.1))
        #expect(try Converters.shared.decode(.integer(-7), as: Float.self) == -7)
        #expect(try Converters.shared.decode(.real(.infinity), as: Float.self) == .infinity)
    }

    @Test("non-numeric TEXT, BLOB and NULL throw for Float, naming Float",
          arguments: [DatabaseValue.text("abc"), .text(""), .blob(Data([1, 2, 3, 4])), .null])
    func floatBadInputThrows(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Float.self) { try Converters.shared.decode(stored, as: Float.self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: Float.self) { try FloatConverter().decode(stored) }
        }
    }
}
