import Foundation

/// Encoding and decoding of the most common types without a registry lookup or boxing.
///
/// Used only while no converter replaces a built-in one for these types (`Converters.fastPathEnabled`),
/// so its results are always exactly those of the built-in converters it calls.
enum FastPath {
    static let types: Set<ObjectIdentifier> = [
        ObjectIdentifier(Int.self), ObjectIdentifier(Int64.self), ObjectIdentifier(Double.self),
        ObjectIdentifier(String.self), ObjectIdentifier(Data.self), ObjectIdentifier(Bool.self),
        ObjectIdentifier(Date.self),
    ]

    /// The encoding of a fast-type value, or nil for any other type.
    @inline(__always)
    static func encode(_ value: Any) throws -> DatabaseValue? {
        switch value {
        case let v as Int: .integer(Int64(v))
        case let v as String: .text(v)
        case let v as Int64: .integer(v)
        case let v as Double: try DoubleConverter().encode(v)
        case let v as Data: .blob(v)
        case let v as Bool: .integer(v ? 1 : 0)
        case let v as Date: .real(v.timeIntervalSince1970)
        default: nil
        }
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
