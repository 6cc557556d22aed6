import Foundation

/// Date as REAL seconds since 1970 (PSDicRecord's format, and SQLite's `unixepoch` unit).
///
/// Decodes INTEGER and REAL seconds, and TEXT in SQLite's `YYYY-MM-DD[ HH:MM[:SS[.SSS]]]` form
/// (UTC, as SQLite's date functions write it) and in ISO 8601 (`T` separator, `Z` or `±HH:MM`).
/// ```swift
/// try Db.update("insert into person (born) values (?)", Date())   // stored as REAL seconds since 1970
/// let born = try record.get("born", as: Date.self)               // also reads TEXT '2024-05-01 12:00:00'
/// ```
public struct DateConverter: TypeConverter {
    /// Creates the converter; it is registered for `Date` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(DateConverter())   // puts the built-in back after another Date converter
    /// ```
    public init() {}
    /// REAL, the column type for `Date` properties.
    /// ```swift
    /// DateConverter().storageType   // .real
    /// ```
    public var storageType: StorageType { .real }

    /// Stores the date as REAL seconds since 1970-01-01 00:00:00 UTC, fractions of a second included.
    /// A date of NaN or infinite seconds throws ``ConversionError``: SQLite would store NaN as
    /// NULL, and an infinite date could not be read back as a `Date`.
    /// ```swift
    /// try DateConverter().encode(Date(timeIntervalSince1970: 1.5))   // .real(1.5)
    /// try DateConverter().encode(Date(timeIntervalSince1970: .infinity))   // throws
    /// ```
    public func encode(_ value: Date) throws -> DatabaseValue {
        if let stored = BuiltInRules.stored(value) { return stored }
        // Not `cannotEncode(value, …)`: Foundation's description of such a date traps.
        throw ConversionError(kind: .invalidValue, value: "Date(timeIntervalSince1970: \(value.timeIntervalSince1970))",
                              targetType: String(reflecting: Date.self),
                              reason: "a date must be a finite number of seconds since 1970 (NaN would be stored as NULL, an infinity could not be read back)")
    }

    /// Reads finite REAL or INTEGER seconds since 1970, or TEXT in SQLite's or ISO 8601's form; anything else (NaN, infinity, other text, BLOB) throws ``ConversionError``.
    /// ```swift
    /// try DateConverter().decode(.text("1970-01-02 00:00:00"))         // Date(timeIntervalSince1970: 86400)
    /// try DateConverter().decode(.text("1970-01-02T02:00:00+02:00"))   // Date(timeIntervalSince1970: 86400)
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Date {
        if let date = BuiltInRules.date(value) { return date }
        switch value {
        case .text(let text):
            if let seconds = DateText.parse(text) { return Date(timeIntervalSince1970: seconds) }
            throw ConversionError.cannotDecode(value, to: Date.self, "not a date (expected seconds since 1970, 'YYYY-MM-DD HH:MM:SS' or ISO 8601)")
        case .real, .integer, .null, .blob:
            throw ConversionError.cannotDecode(value, to: Date.self, "expected REAL seconds since 1970")
        }
    }
}

/// A hand-written parser for the date texts SQLite and ISO 8601 use: no formatter, no calendar.
enum DateText {
    /// Seconds since 1970 for `text`, or nil when it is not one of the accepted forms.
    static func parse(_ text: String) -> Double? {
        var s = Scanner(Array(text.utf8))
        s.skipSpaces()
        guard let year = s.digits(exactly: 4), s.take("-"),
              let month = s.digits(exactly: 2), s.take("-"),
              let day = s.digits(exactly: 2),
              (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day) else { return nil }
        var seconds = Double(daysFromCivil(year: year, month: month, day: day) * 86_400)
        if s.take(" ") || s.take("T") || s.take("t") {
            guard let hour = s.digits(exactly: 2), s.take(":"), let minute = s.digits(exactly: 2),
                  hour < 24, minute < 60 else { return nil }
            seconds += Double(hour * 3600 + minute * 60)
            if s.take(":") {
                guard let second = s.digits(exactly: 2), second < 60 else { return nil }
                seconds += Double(second)
                if s.take(".") || s.take(",") {
                    guard let fraction = s.fraction() else { return nil }
                    seconds += fraction
                }
            }
            if s.take("Z") || s.take("z") {
                // UTC
            } else if let sign = s.sign() {
                guard let offsetHours = s.digits(exactly: 2), offsetHours < 24 else { return nil }
                _ = s.take(":")
                let offsetMinutes = s.digits(exactly: 2) ?? 0
                seconds -= Double(sign * (offsetHours * 3600 + offsetMinutes * 60))
            }
        }
        s.skipSpaces()
        return s.atEnd ? seconds : nil
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 for a proleptic Gregorian date (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    struct Scanner {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func skipSpaces() {
            while index < bytes.count, bytes[index] == UInt8(ascii: " ") { index += 1 }
        }

        mutating func take(_ c: Unicode.Scalar) -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: c) else { return false }
            index += 1
            return true
        }

        mutating func sign() -> Int? {
            if take("+") { return 1 }
            if take("-") { return -1 }
            return nil
        }

        mutating func digits(exactly count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for b in bytes[index..<index + count] {
                guard b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(b - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        mutating func fraction() -> Double? {
            var value = 0.0, scale = 1.0, count = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if count < 9 {
                    scale /= 10
                    value += Double(bytes[index] - UInt8(ascii: "0")) * scale
                }
                count += 1
                index += 1
            }
            return count > 0 ? value : nil
        }
    }
}
