import Testing
import Foundation
@testable import DicRecordConverters

@Suite("Decimal converter")
struct DecimalConverterTests {
    private static let posix = Locale(identifier: "en_US_POSIX")

    @Test("Decimal stores as its exact decimal TEXT and reads back equal",
          arguments: ["12345678901234567890123456789012345678", "-0.000123", "0", "1", "-1", "3.14159265358979323846264338327950288",
                      "0.1", "-98765432109876543210.0123456789"])
    func roundTripsAsText(text: String) throws {
        let value = try #require(Decimal(string: text, locale: Self.posix))
        #expect(DecimalConverter().storageType == .text)
        #expect(Converters.shared.storageType(for: Decimal.self) == .text)
        // Every argument is already in canonical form (no exponent, no trailing zeros), so the
        // stored text must be the very same characters.
        try expectStored(value, as: .text(text))
        try expectConverter(DecimalConverter(), stores: value, as: .text(text))
    }

    @Test("the 38-digit value keeps every digit, not a Double approximation")
    func noDoubleApproximation() throws {
        let decoded = try Converters.shared.decode(.text("12345678901234567890123456789012345678"), as: Decimal.self)
        #expect(decoded.description == "12345678901234567890123456789012345678")
        // One more than the stored value is a different Decimal (a Double could not tell them apart).
        let next = try #require(Decimal(string: "12345678901234567890123456789012345679", locale: Self.posix))
        #expect(decoded != next)
        #expect(try Converters.shared.encode(next) == .text("12345678901234567890123456789012345679"))
    }

    @Test("INTEGER and REAL decode",
          arguments: [(DatabaseValue.integer(42), "42"), (.integer(Int64.min), "-9223372036854775808"),
                      (.integer(Int64.max), "9223372036854775807"), (.real(2.5), "2.5"), (.real(-0.125), "-0.125"),
                      (.text(" 1.5 "), "1.5"), (.text("1e3"), "1000"), (.text("+7"), "7")])
    func lenientDecode(stored: DatabaseValue, expected: String) throws {
        let expectedValue = try #require(Decimal(string: expected, locale: Self.posix))
        #expect(try Converters.shared.decode(stored, as: Decimal.self) == expectedValue)
        #expect(try DecimalConverter().decode(stored) == expectedValue)
    }

    @Test("REAL decodes to the number the Double holds: its shortest decimal text, never other digits",
          arguments: [(0.1, "0.1"), (2.5, "2.5"), (-0.125, "-0.125"), (123.456, "123.456"), (1.0 / 3.0, "0.3333333333333333"),
                      (0.00001, "0.00001"), (6.02214076e23, "602214076000000000000000"), (99.99, "99.99")])
    func realDecodesToItsDecimalDigits(real: Double, expected: String) throws {
        let expectedValue = try #require(Decimal(string: expected, locale: Self.posix))
        let decoded = try Converters.shared.decode(.real(real), as: Decimal.self)
        // At the very least the decoded Decimal must denote the same Double...
        #expect(Double(decoded.description) == real, "REAL \(real) decoded as \(decoded)")
        // ...and it should be the short decimal a user sees for that Double.
        #expect(decoded == expectedValue, "REAL \(real) decoded as \(decoded)")
        #expect(try DecimalConverter().decode(.real(real)) == expectedValue)
    }

    @Test("a REAL that Decimal cannot represent throws instead of giving NaN",
          arguments: [1e300, -1e300, Double.greatestFiniteMagnitude, 1e200, Double.nan])
    func unrepresentableRealThrows(real: Double) {
        expectConversionError(.notConvertible, naming: Decimal.self) { try Converters.shared.decode(.real(real), as: Decimal.self) }
        expectConversionError(.notConvertible, naming: Decimal.self) { try DecimalConverter().decode(.real(real)) }
    }

    @Test("REAL ±infinity into Decimal throws instead of crashing the process")
    func infiniteRealDoesNotCrash() async {
        // Decimal(Double.infinity) traps in Foundation, so run the decode in a child process.
        await #expect(processExitsWith: .success) {
            do {
                _ = try DecimalConverter().decode(.real(.infinity))
                exit(1)
            } catch let error as ConversionError where error.kind == .notConvertible {
            } catch {
                exit(2)
            }
            do {
                _ = try Converters.shared.decode(.real(-.infinity), as: Decimal.self)
                exit(3)
            } catch let error as ConversionError where error.kind == .notConvertible {
                exit(0)
            } catch {
                exit(4)
            }
        }
    }

    @Test("text that is not entirely a number throws (Decimal(string:) would accept a prefix)",
          arguments: ["12abc", "1e", "", "abc", "1.2.3", "--1", "e5", ".", "-", "1,5", "1e+"])
    func invalidTextThrows(text: String) {
        expectConversionError(.notConvertible, naming: Decimal.self) { try Converters.shared.decode(.text(text), as: Decimal.self) }
        expectConversionError(.notConvertible, naming: Decimal.self) { try DecimalConverter().decode(.text(text)) }
    }

    @Test("BLOB and NULL throw; NaN throws on encode")
    func otherBadInput() {
        expectConversionError(.notConvertible, naming: Decimal.self) { try Converters.shared.decode(.blob(Data("1".utf8)), as: Decimal.self) }
        expectConversionError(.notConvertible, naming: Decimal.self) { try Converters.shared.decode(.null, as: Decimal.self) }
        expectConversionError(.invalidValue, naming: Decimal.self) { try Converters.shared.encode(Decimal.nan) }
        expectConversionError(.invalidValue, naming: Decimal.self) { try DecimalConverter().encode(.nan) }
    }
}
