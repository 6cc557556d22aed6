import Foundation

/// Encoding and decoding of the most common types without a registry lookup or boxing.
///
/// Used only while no converter replaces a built-in one for these types (`Converters.fastPathEnabled`),
/// so its results are always exactly those of the built-in converters it calls.
enum FastPath {
    static let types: Set<ObjectIdentifier> = [
        ObjectIdentifier(Int.self), ObjectIdentifier(Int64.self), ObjectIdentifier(Double.self),
        ObjectIdentifier(String.self), ObjectIdentifier(Data.self), ObjectIdentifier(Bool.self),
        ObjectIdentifier(Date.self), ObjectIdentifier(URL.self),
    ]

    /// The encoding of a fast-type value, or nil for any other type. Called with an opened
    /// existential, so the type test is a metatype comparison, not a dynamic cast.
    @inline(__always)
    static func encode<T>(_ value: T) throws -> DatabaseValue? {
        if T.self == Int.self { return .integer(Int64(unsafeBitCast(value, to: Int.self))) }
        if T.self == String.self { return .text(unsafeBitCast(value, to: String.self)) }
        if T.self == Int64.self { return .integer(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Double.self { return try DoubleConverter().encode(unsafeBitCast(value, to: Double.self)) }
        if T.self == Data.self { return .blob(unsafeBitCast(value, to: Data.self)) }
        if T.self == Bool.self { return .integer(unsafeBitCast(value, to: Bool.self) ? 1 : 0) }
        if T.self == Date.self { return try DateConverter().encode(unsafeBitCast(value, to: Date.self)) }
        if T.self == DatabaseValue.self { return unsafeBitCast(value, to: DatabaseValue.self) }
        return nil
    }

    /// The decoded value when `T` is a fast type, nil otherwise.
    @inline(__always)
    static func decode<T>(_ value: DatabaseValue, as: T.Type) throws -> T? {
        if T.self == Int.self {
            return unsafeBitCast(try IntegerConverter<Int>().decodeNonNull(value), to: T.self)
        }
        if T.self == String.self {
            return unsafeBitCast(try StringConverter().decodeNonNull(value), to: T.self)
        }
        if T.self == Int64.self {
            return unsafeBitCast(try IntegerConverter<Int64>().decodeNonNull(value), to: T.self)
        }
        if T.self == Double.self {
            return unsafeBitCast(try DoubleConverter().decodeNonNull(value), to: T.self)
        }
        if T.self == Data.self {
            return unsafeBitCast(try DataConverter().decodeNonNull(value), to: T.self)
        }
        if T.self == Bool.self {
            return unsafeBitCast(try BoolConverter().decodeNonNull(value), to: T.self)
        }
        return nil
    }
}

extension TypeConverter {
    /// `decode`, with the NULL check the registry does before calling a converter.
    @inline(__always)
    func decodeNonNull(_ value: DatabaseValue) throws -> Value {
        if case .null = value {
            throw ConversionError.cannotDecode(value, to: Value.self, "the value is NULL")
        }
        return try decode(value)
    }
}
