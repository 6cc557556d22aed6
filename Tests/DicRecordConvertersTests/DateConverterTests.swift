import Testing
import Foundation
@testable import DicRecordConverters

@Suite("Date converter")
struct DateConverterTests {
    @Test("the expected values used below agree with hand-computed Unix times")
    func calendarSanity() {
        // Independent checks of the helper itself: well-known Unix times.
        #expect(utcSeconds(1970, 1, 1) == 0)
        #expect(utcSeconds(2009, 2, 13, 23, 31, 30) == 1_234_567_890)
        #expect(utcSeconds(1930, 11, 18, 0, 28, 30) == -1_234_567_890)
        #expect(utcSeconds(2024, 2, 29, 13, 45, 30) == 1_709_214_330)
        #expect(utcSeconds(9999, 12, 31, 23, 59, 59) == 253_402_300_799)
    }

    @Test("Date stores as REAL seconds since 1970",
          arguments: [0, 1_709_214_330.25, 1_234_567_890, -1_234_567_890.5, -0.5, 978_307_200])
    func realSeconds(seconds: Double) throws {
        #expect(DateConverter().storageType == .real)
        #expect(Converters.shared.storageType(for: Date.self) == .real)
        let date = Date(timeIntervalSince1970: seconds)
        #expect(try Converters.shared.encode(date) == .real(seconds))
        #expect(try DateConverter().encode(date) == .real(seconds))
        #expect(try Converters.shared.decode(.real(seconds), as: Date.self) == date)
        #expect(try DateConverter().decode(.real(seconds)) == date)
    }

    @Test("a date before 1970 keeps its fraction: 1930-11-18 00:28:29.5 UTC")
    func before1970() throws {
        let expected = utcSeconds(1930, 11, 18, 0, 28, 30) - 0.5
        let date = Date(timeIntervalSince1970: -1_234_567_890.5)
        #expect(try Converters.shared.encode(date) == .real(expected))
        let decoded = try Converters.shared.decode(.real(-1_234_567_890.5), as: Date.self)
        #expect(decoded.timeIntervalSince1970 == expected)
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: decoded)
        #expect([parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second] == [1930, 11, 18, 0, 28, 29])
    }

    @Test("9999-12-31 23:59:59.999 UTC round-trips")
    func year9999() throws {
        let expected = utcSeconds(9999, 12, 31, 23, 59, 59) + 0.999
        // Date keeps seconds since 2001, so Date(timeIntervalSince1970:) subtracts 978307200 and
        // timeIntervalSince1970 adds it back: each step may round to the nearest Double, so the
        // value read back may be one ulp off. 1e-6 s is the tolerance; near 2.5e11 s one ulp is
        // 2^-15 s (about 3e-5 s), so the bound is the larger of the two.
        let tolerance = max(1e-6, expected.ulp)
        let date = Date(timeIntervalSince1970: expected)
        let stored = try #require(realValue(try Converters.shared.encode(date)))
        #expect(abs(stored - expected) <= tolerance)
        let decoded = try Converters.shared.decode(.real(stored), as: Date.self)
        #expect(abs(decoded.timeIntervalSince1970 - expected) <= tolerance)
        #expect(abs(decoded.timeIntervalSince(date)) <= tolerance)
        let parts = utcCalendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: decoded)
        #expect([parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second] == [9999, 12, 31, 23, 59, 59])
    }

    @Test("INTEGER seconds decode", arguments: [(Int64(0), [1970, 1, 1, 0, 0, 0]), (1_700_000_000, [2023, 11, 14, 22, 13, 20]),
                                                 (-86_400, [1969, 12, 31, 0, 0, 0])] as [(Int64, [Int])])
    func integerSeconds(seconds: Int64, utc: [Int]) throws {
        let expected = Date(timeIntervalSince1970: utcSeconds(utc[0], utc[1], utc[2], utc[3], utc[4], utc[5]))
        #expect(try Converters.shared.decode(.integer(seconds), as: Date.self) == expected)
        #expect(try DateConverter().decode(.integer(seconds)) == expected)
    }

    /// Text forms and their expected Unix time, computed with Calendar (UTC), not with the parser under test.
    static let textCases: [(String, Double)] = [
        ("2024-02-29 13:45:30", utcSeconds(2024, 2, 29, 13, 45, 30)),
        ("2024-02-29 13:45:30.123", utcSeconds(2024, 2, 29, 13, 45, 30) + 0.123),
        ("2024-02-29", utcSeconds(2024, 2, 29)),
        ("2024-02-29T13:45:30Z", utcSeconds(2024, 2, 29, 13, 45, 30)),
        ("2024-02-29T13:45:30.5+08:00", utcSeconds(2024, 2, 29, 5, 45, 30) + 0.5),
        ("2024-02-29 13:45", utcSeconds(2024, 2, 29, 13, 45)),
        ("2024-02-29T13:45:30-05:30", utcSeconds(2024, 2, 29, 19, 15, 30)),
        ("2024-02-29T23:30:00-01:00", utcSeconds(2024, 3, 1, 0, 30)),
        ("1969-12-31T23:59:59Z", -1),
        ("2000-02-29 00:00:00", utcSeconds(2000, 2, 29)),
        ("1900-03-01", utcSeconds(1900, 3, 1)),
    ]

    @Test("SQLite and ISO 8601 TEXT forms decode", arguments: DateConverterTests.textCases)
    func textDecodes(text: String, expected: Double) throws {
        // Whole and half seconds are exact in a Double; ".123" is not, so allow a microsecond.
        let decoded = try Converters.shared.decode(.text(text), as: Date.self)
        #expect(abs(decoded.timeIntervalSince1970 - expected) <= 1e-6, "\(decoded.timeIntervalSince1970) vs \(expected)")
        let direct = try DateConverter().decode(.text(text))
        #expect(abs(direct.timeIntervalSince1970 - expected) <= 1e-6)
        if expected.rounded() == expected || (expected * 2).rounded() == expected * 2 {
            #expect(decoded.timeIntervalSince1970 == expected)
        }
    }

    @Test("invalid date TEXT throws",
          arguments: ["abc", "2023-02-29", "2024-13-01", "2024-01-01 25:00", "", "1900-02-29", "2024-02-30", "2024-04-31",
                      "2024-00-10", "2024-01-00", "2024-1-1", "2024-01-01 12:60", "2024-01-01 12:00:60", "2024-01-01T",
                      "2024-01-01T12:00:00+25:00", "2024-01-01 12:00:00 garbage", "24-01-01", "2024/01/01", "2024-01-01 12"])
    func invalidTextThrows(text: String) {
        expectConversionError(.notConvertible, naming: Date.self) { try Converters.shared.decode(.text(text), as: Date.self) }
        expectConversionError(.notConvertible, naming: Date.self) { try DateConverter().decode(.text(text)) }
    }

    @Test("BLOB, non-finite REAL and NULL throw",
          arguments: [DatabaseValue.blob(Data(repeating: 0, count: 8)), .real(.infinity), .real(-.infinity), .real(.nan), .null])
    func otherBadInput(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Date.self) { try Converters.shared.decode(stored, as: Date.self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: Date.self) { try DateConverter().decode(stored) }
        }
    }
}
