import Foundation

/// The built-in conversion rules of the common types, written once: what each type stores as,
/// and which stored values it reads without further thought. The built-in converters take their
/// canonical cases from here; every fast path (the registry's, a record's typed reads, `Decodable`
/// records, arguments bound in place) asks here and goes to the converter when the answer is nil,
/// so a changed rule changes everywhere. `ConversionPathsTests` walks each path for every type.
///
/// Used only while no converter replaces a built-in one for these types (`Converters.fastPathEnabled`).
@usableFromInline package enum BuiltInRules {
    /// The types with a rule here (a converter registered for one of them turns the fast paths off).
    package static let types: Set<ObjectIdentifier> = [
        ObjectIdentifier(Int.self), ObjectIdentifier(Int64.self), ObjectIdentifier(Double.self),
        ObjectIdentifier(String.self), ObjectIdentifier(Data.self), ObjectIdentifier(Bool.self),
        ObjectIdentifier(Date.self), ObjectIdentifier(URL.self),
    ]

    // MARK: Writing: the stored form; nil where the converter must answer (with its error)

    @inlinable @inline(__always) package static func stored(_ value: Int) -> DatabaseValue { .integer(Int64(value)) }
    @inlinable @inline(__always) package static func stored(_ value: Int64) -> DatabaseValue { .integer(value) }
    @inlinable @inline(__always) package static func stored(_ value: Bool) -> DatabaseValue { .integer(value ? 1 : 0) }
    @inlinable @inline(__always) package static func stored(_ value: String) -> DatabaseValue { .text(value) }
    @inlinable @inline(__always) package static func stored(_ value: Data) -> DatabaseValue { .blob(value) }
    /// REAL, infinities included; NaN has no SQLite form (it would become NULL).
    @inlinable @inline(__always) package static func stored(_ value: Double) -> DatabaseValue? { value.isNaN ? nil : .real(value) }
    /// REAL seconds since 1970; a NaN or infinite date has none.
    @inlinable @inline(__always) package static func stored(_ value: Date) -> DatabaseValue? {
        let seconds = value.timeIntervalSince1970
        return seconds.isFinite ? .real(seconds) : nil
    }

    // MARK: Reading: the value of the canonical storage; nil where the converter must decide

    /// An INTEGER that fits.
    @inlinable @inline(__always) package static func integer<I: FixedWidthInteger>(_ stored: DatabaseValue, as: I.Type = I.self) -> I? {
        if case .integer(let v) = stored { return I(exactly: v) }
        return nil
    }
    /// REAL, or INTEGER widened.
    @inlinable @inline(__always) package static func double(_ stored: DatabaseValue) -> Double? {
        switch stored {
        case .real(let d): return d
        case .integer(let i): return Double(i)
        default: return nil
        }
    }
    /// INTEGER, non-zero is true (as in SQL).
    @inlinable @inline(__always) package static func bool(_ stored: DatabaseValue) -> Bool? {
        if case .integer(let v) = stored { return v != 0 }
        return nil
    }
    @inlinable @inline(__always) package static func string(_ stored: DatabaseValue) -> String? {
        if case .text(let s) = stored { return s }
        return nil
    }
    @inlinable @inline(__always) package static func data(_ stored: DatabaseValue) -> Data? {
        if case .blob(let d) = stored { return d }
        return nil
    }
    /// Finite REAL or INTEGER seconds since 1970 (dates as TEXT are the converter's to parse).
    @inlinable @inline(__always) package static func date(_ stored: DatabaseValue) -> Date? {
        switch stored {
        case .real(let seconds) where seconds.isFinite: return Date(timeIntervalSince1970: seconds)
        case .integer(let seconds): return Date(timeIntervalSince1970: TimeInterval(seconds))
        default: return nil
        }
    }

    // MARK: By storage class: what a rule reads whatever the value

    /// A common type's rule by the storage classes it reads without looking at the value; a
    /// model's load checks every column of every row with it. A date's REAL is read only when
    /// finite (`date(_:)` looks at the number).
    package enum Reads: Sendable {
        case integer, real, date, text, blob, none

        /// Whether the rule reads every value of class `storage` (nil: NULL, which reads as nil).
        @inline(__always)
        package func takesAll(_ storage: StorageType?) -> Bool {
            switch (self, storage) {
            case (_, nil), (.integer, .integer), (.text, .text), (.blob, .blob), (.real, .real), (.real, .integer),
                 (.date, .integer):
                true
            default:
                false
            }
        }
    }

    /// What `type`'s rule reads (`.none`: no rule, the converter decides each value).
    package static func reads(_ type: Any.Type) -> Reads {
        switch ObjectIdentifier(type) {
        case ObjectIdentifier(Int.self): intReads
        case ObjectIdentifier(Int64.self), ObjectIdentifier(Bool.self): .integer
        case ObjectIdentifier(Double.self): .real
        case ObjectIdentifier(Date.self): .date
        case ObjectIdentifier(String.self): .text
        case ObjectIdentifier(Data.self): .blob
        default: .none
        }
    }

    // Every INTEGER fits a 64-bit Int; a 32-bit Int (arm64_32 watches) checks each value.
    #if _pointerBitWidth(_64)
    private static let intReads = Reads.integer
    #else
    private static let intReads = Reads.none
    #endif

    // MARK: The table: a value of any type to its rule, by metatype comparison (no dynamic cast)

    /// The stored form when `T` has a rule that answers, nil otherwise. Called with an opened
    /// existential or a generic value, so the type test is a metatype comparison.
    @inlinable @inline(__always)
    package static func encode<T>(_ value: T) -> DatabaseValue? {
        if T.self == Int.self { return stored(unsafeBitCast(value, to: Int.self)) }
        if T.self == String.self { return stored(unsafeBitCast(value, to: String.self)) }
        if T.self == Int64.self { return stored(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Double.self { return stored(unsafeBitCast(value, to: Double.self)) }
        if T.self == Data.self { return stored(unsafeBitCast(value, to: Data.self)) }
        if T.self == Bool.self { return stored(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Date.self { return stored(unsafeBitCast(value, to: Date.self)) }
        return nil
    }

    /// The value when `T` has a rule that answers for `stored`, nil otherwise (not NULL: the
    /// callers handle NULL, which means nil or an error depending on the read).
    @inlinable @inline(__always)
    package static func decode<T>(_ stored: DatabaseValue, as: T.Type) -> T? {
        if T.self == Int.self { return integer(stored, as: Int.self).map { unsafeBitCast($0, to: T.self) } }
        if T.self == String.self { return string(stored).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Double.self { return double(stored).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Int64.self { return integer(stored, as: Int64.self).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Bool.self { return bool(stored).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Data.self { return data(stored).map { unsafeBitCast($0, to: T.self) } }
        if T.self == Date.self { return date(stored).map { unsafeBitCast($0, to: T.self) } }
        return nil
    }
}
