import Foundation

/// Every fixed-width integer type as INTEGER. Out-of-range values throw in both directions,
/// never truncate or wrap; REAL holding a whole number and TEXT holding a number decode.
/// ```swift
/// try Db.update("insert into item (stock) values (?)", UInt8(200))   // stored as INTEGER 200
/// let stock = try record.get("stock", as: Int8.self)                  // throws: 200 is out of Int8's range
/// ```
public struct IntegerConverter<I: FixedWidthInteger & Sendable>: TypeConverter {
    /// Creates the converter; one is registered for each of `Int`, `Int8`…`Int64`, `UInt` and `UInt8`…`UInt64` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(IntegerConverter<Int16>())   // puts the built-in back after another Int16 converter
    /// ```
    public init() {}
    private static var posix: Locale { Locale(identifier: "en_US_POSIX") }
    /// INTEGER, the column type for integer properties.
    /// ```swift
    /// IntegerConverter<UInt8>().storageType   // .integer
    /// ```
    public var storageType: StorageType { .integer }

    /// Stores the value as a 64-bit signed INTEGER; a value above `Int64.max` (from `UInt` or `UInt64`) throws ``ConversionError``.
    /// ```swift
    /// try IntegerConverter<UInt64>().encode(42)     // .integer(42)
    /// try IntegerConverter<UInt64>().encode(.max)   // throws: above Int64.max
    /// ```
    public func encode(_ value: I) throws -> DatabaseValue {
        guard let v = Int64(exactly: value) else {
            throw ConversionError.cannotEncode(value, "above Int64.max; SQLite integers are 64-bit signed")
        }
        return .integer(v)
    }

    /// Reads an INTEGER, a REAL holding a whole number, or TEXT holding an integer (`"42"`, `"3.0"`, `"1e3"`; spaces trimmed) that fits `I`; a fraction, an out-of-range value, other text, NULL or BLOB throws ``ConversionError``.
    /// ```swift
    /// try IntegerConverter<Int8>().decode(.real(3.0))      // 3
    /// try IntegerConverter<Int8>().decode(.integer(300))   // throws: out of range
    /// ```
    public func decode(_ value: DatabaseValue) throws -> I {
        if let i = BuiltInRules.integer(value, as: I.self) { return i }
        switch value {
        case .integer:
            throw ConversionError.cannotDecode(value, to: I.self, "out of range")
        case .real(let d):
            if let i = I(exactly: d) { return i }
            throw ConversionError.cannotDecode(value, to: I.self, d.rounded() == d ? "out of range" : "not a whole number")
        case .text(let s):
            let trimmed = s.trimmingCharacters(in: .whitespaces)
            if let i = I(trimmed) { return i }
            // "3.0" or "1e3": exact decimal arithmetic, never a rounding trip through Double.
            if DecimalConverter.isDecimalLiteral(trimmed), let exact = Decimal(string: trimmed, locale: Self.posix),
               exact.isWholeNumber, let i = I(exact.description) {
                return i
            }
            throw ConversionError.cannotDecode(value, to: I.self, "not an integer in range")
        case .null, .blob:
            throw ConversionError.cannotDecode(value, to: I.self, "expected INTEGER")
        }
    }
}

/// Bool as INTEGER 0/1. Decodes any INTEGER (non-zero is true, as in SQL) and the TEXT
/// `true`/`false`/`yes`/`no`/`1`/`0` in any case.
/// ```swift
/// try Db.update("update user set active = ? where id = ?", true, 1)   // stored as INTEGER 1
/// ```
public struct BoolConverter: TypeConverter {
    /// Creates the converter; it is registered for `Bool` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(BoolConverter())   // puts the built-in back after another Bool converter
    /// ```
    public init() {}
    /// INTEGER, the column type for `Bool` properties.
    /// ```swift
    /// BoolConverter().storageType   // .integer
    /// ```
    public var storageType: StorageType { .integer }

    /// Stores `true` as INTEGER 1 and `false` as INTEGER 0.
    /// ```swift
    /// try BoolConverter().encode(true)   // .integer(1)
    /// ```
    public func encode(_ value: Bool) throws -> DatabaseValue { BuiltInRules.stored(value) }

    /// Reads INTEGER or REAL (non-zero is true) and TEXT `true`/`false`/`yes`/`no`/`1`/`0` in any case, spaces trimmed; other text, NULL and BLOB throw ``ConversionError``.
    /// ```swift
    /// try BoolConverter().decode(.text(" Yes "))   // true
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Bool {
        if let b = BuiltInRules.bool(value) { return b }
        switch value {
        case .real(let d): return d != 0
        case .text(let s):
            switch s.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "yes", "1": return true
            case "false", "no", "0": return false
            default: throw ConversionError.cannotDecode(value, to: Bool.self, "expected true/false/yes/no/1/0")
            }
        default:   // NULL, BLOB (INTEGER is read above)
            throw ConversionError.cannotDecode(value, to: Bool.self, "expected INTEGER 0 or 1")
        }
    }
}

/// Double as REAL. NaN throws on encode (SQLite would store NULL); infinities round-trip.
/// ```swift
/// try Db.update("insert into reading (value) values (?)", 21.5)         // stored as REAL 21.5
/// try Db.update("insert into reading (value) values (?)", Double.nan)   // throws
/// ```
public struct DoubleConverter: TypeConverter {
    /// Creates the converter; it is registered for `Double` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(DoubleConverter())   // puts the built-in back after another Double converter
    /// ```
    public init() {}
    /// REAL, the column type for `Double` properties.
    /// ```swift
    /// DoubleConverter().storageType   // .real
    /// ```
    public var storageType: StorageType { .real }

    /// Stores the value as REAL, infinities included; NaN throws ``ConversionError`` (SQLite would store NULL).
    /// ```swift
    /// try DoubleConverter().encode(.infinity)   // .real(inf)
    /// ```
    public func encode(_ value: Double) throws -> DatabaseValue {
        if let stored = BuiltInRules.stored(value) { return stored }
        throw ConversionError.cannotEncode(value, "NaN has no SQLite representation (it would become NULL)")
    }

    /// Reads REAL, INTEGER, or TEXT holding a number other than NaN (spaces trimmed); other text, NULL and BLOB throw ``ConversionError``.
    /// ```swift
    /// try DoubleConverter().decode(.text(" 2.5 "))   // 2.5
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Double {
        if let d = BuiltInRules.double(value) { return d }
        switch value {
        case .text(let s):
            if let d = Double(s.trimmingCharacters(in: .whitespaces)), !d.isNaN { return d }
            throw ConversionError.cannotDecode(value, to: Double.self, "not a number")
        default:   // NULL, BLOB (REAL and INTEGER are read above)
            throw ConversionError.cannotDecode(value, to: Double.self, "expected REAL")
        }
    }
}

/// Float as REAL, stored through its shortest decimal form so that `0.1` reads back as `0.1`
/// from SQL too (PSDicRecord stored 0.100000001490116). Values beyond Float's range throw on decode.
/// ```swift
/// try Db.update("insert into reading (value) values (?)", Float(0.1))   // stored as REAL 0.1, not 0.100000001490116
/// ```
public struct FloatConverter: TypeConverter {
    /// Creates the converter; it is registered for `Float` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(FloatConverter())   // puts the built-in back after another Float converter
    /// ```
    public init() {}
    /// REAL, the column type for `Float` properties.
    /// ```swift
    /// FloatConverter().storageType   // .real
    /// ```
    public var storageType: StorageType { .real }

    /// Stores the Double nearest the value's shortest decimal form as REAL; infinities are kept and NaN throws ``ConversionError``.
    /// ```swift
    /// try FloatConverter().encode(0.1)   // .real(0.1)
    /// ```
    public func encode(_ value: Float) throws -> DatabaseValue {
        if value.isNaN { throw ConversionError.cannotEncode(value, "NaN has no SQLite representation (it would become NULL)") }
        if !value.isFinite { return .real(Double(value)) }
        return .real(Double(value.description) ?? Double(value))
    }

    /// Reads what ``DoubleConverter`` reads, rounded to `Float`; a finite value beyond Float's range throws ``ConversionError``.
    /// ```swift
    /// try FloatConverter().decode(.real(1e39))   // throws: out of Float's range
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Float {
        let d: Double
        do {
            d = try DoubleConverter().decode(value)
        } catch let error as ConversionError {
            throw error.retargeted(to: Float.self)
        }
        let f = Float(d)
        if f.isInfinite && d.isFinite {
            throw ConversionError.cannotDecode(value, to: Float.self, "out of Float's range")
        }
        return f
    }
}

/// Decimal as TEXT, exactly; INTEGER and REAL decode too.
/// ```swift
/// try Db.update("insert into price (amount) values (?)", Decimal(string: "19.99")!)   // stored as TEXT '19.99'
/// ```
public struct DecimalConverter: TypeConverter {
    /// Creates the converter; it is registered for `Decimal` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(DecimalConverter())   // puts the built-in back after another Decimal converter
    /// ```
    public init() {}
    /// TEXT, the column type for `Decimal` properties.
    /// ```swift
    /// DecimalConverter().storageType   // .text
    /// ```
    public var storageType: StorageType { .text }

    /// Stores the value's exact decimal text; NaN throws ``ConversionError``.
    /// ```swift
    /// try DecimalConverter().encode(Decimal(string: "0.1")!)   // .text("0.1")
    /// ```
    public func encode(_ value: Decimal) throws -> DatabaseValue {
        if value.isNaN { throw ConversionError.cannotEncode(value, "NaN has no SQLite representation") }
        return .text(value.description)
    }

    /// Reads TEXT holding a decimal number (`"12.5"`, `"-1e3"`; spaces trimmed), INTEGER, and REAL through its shortest decimal text; REAL outside Decimal's range, other text, NULL and BLOB throw ``ConversionError``.
    /// ```swift
    /// try DecimalConverter().decode(.real(123.456))   // 123.456, not 123.45599999999997952
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Decimal {
        switch value {
        case .integer(let v): return Decimal(v)
        case .real(let d):
            // Decimal(Double) invents digits (123.456 → 123.45599999999997952) and traps on
            // infinity: go through the shortest decimal text of the Double instead.
            guard d.isFinite, d == 0 || (1e-128...1e125).contains(d.magnitude),
                  let decimal = Decimal(string: String(d), locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN else {
                throw ConversionError.cannotDecode(value, to: Decimal.self, "out of Decimal's range")
            }
            return decimal
        case .text(let s):
            let trimmed = s.trimmingCharacters(in: .whitespaces)
            if Self.isDecimalLiteral(trimmed), let d = Decimal(string: trimmed, locale: Locale(identifier: "en_US_POSIX")) {
                return d
            }
            throw ConversionError.cannotDecode(value, to: Decimal.self, "not a decimal number")
        case .null, .blob:
            throw ConversionError.cannotDecode(value, to: Decimal.self, "expected TEXT")
        }
    }

    /// `Decimal(string:)` accepts a numeric prefix ("12abc" gives 12): check the whole text first.
    static func isDecimalLiteral(_ s: String) -> Bool {
        var bytes = Substring(s).utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        var digits = 0, sawDot = false, sawExponent = false, exponentDigits = 0
        while let b = bytes.first {
            bytes = bytes.dropFirst()
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if sawExponent { exponentDigits += 1 } else { digits += 1 }
            case UInt8(ascii: "."):
                if sawDot || sawExponent { return false }
                sawDot = true
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                if sawExponent || digits == 0 { return false }
                sawExponent = true
                if let sign = bytes.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            default:
                return false
            }
        }
        return digits > 0 && (!sawExponent || exponentDigits > 0)
    }
}

extension Decimal {
    /// True when the value has no fractional part.
    var isWholeNumber: Bool {
        guard isFinite else { return false }
        var source = self
        var rounded = Decimal()
        NSDecimalRound(&rounded, &source, 0, .plain)
        return rounded == self
    }
}
