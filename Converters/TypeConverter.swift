/// Turns one Swift type into a ``DatabaseValue`` and back.
///
/// Register a converter once and every record, argument and model column of that type uses it:
/// ```swift
/// struct Money: Sendable { var cents: Int64 }
/// struct MoneyConverter: TypeConverter {
///     var storageType: StorageType { .integer }
///     func encode(_ value: Money) throws -> DatabaseValue { .integer(value.cents) }
///     func decode(_ value: DatabaseValue) throws -> Money {
///         guard case .integer(let cents) = value else {
///             throw ConversionError.cannotDecode(value, to: Money.self, "expected INTEGER cents")
///         }
///         return Money(cents: cents)
///     }
/// }
/// Converters.register(MoneyConverter())
/// ```
public protocol TypeConverter: Sendable {
    /// The Swift type this converter handles.
    /// ```swift
    /// struct MoneyConverter: TypeConverter { typealias Value = Money; … }
    /// ```
    associatedtype Value
    /// The column type used in `CREATE TABLE` / `ALTER TABLE`.
    /// ```swift
    /// var storageType: StorageType { .integer }
    /// ```
    var storageType: StorageType { get }
    /// Swift value to SQLite value. Throw ``ConversionError`` for a value that cannot be stored.
    /// ```swift
    /// func encode(_ value: Money) throws -> DatabaseValue { .integer(value.cents) }
    /// ```
    func encode(_ value: Value) throws -> DatabaseValue
    /// SQLite value to Swift value. Never called with `.null`.
    /// ```swift
    /// func decode(_ value: DatabaseValue) throws -> Money {
    ///     guard case .integer(let cents) = value else { throw ConversionError.cannotDecode(value, to: Money.self, "expected cents") }
    ///     return Money(cents: cents)
    /// }
    /// ```
    func decode(_ value: DatabaseValue) throws -> Value
}

/// A converter with its `Value` type erased, as the registry keeps it. A class, so that handing
/// one out of the registry costs one retain.
/// ```swift
/// let converter = Converters.shared.converter(for: Date.self)
/// ```
public final class AnyTypeConverter: Sendable {
    /// The column type of the converted type.
    /// ```swift
    /// Converters.shared.converter(for: Date.self)?.storageType   // .real
    /// ```
    public let storageType: StorageType
    /// The converted Swift type's name, for messages.
    /// ```swift
    /// Converters.shared.converter(for: Date.self)?.typeName      // "Foundation.Date"
    /// ```
    public let typeName: String
    private let base: any TypeConverter

    init<C: TypeConverter>(_ converter: C) {
        storageType = converter.storageType
        typeName = String(reflecting: C.Value.self)
        base = converter
    }

    /// Encodes a value of the converter's type.
    /// ```swift
    /// let value = try Converters.shared.converter(for: UUID.self)?.encode(UUID())   // .text("…")
    /// ```
    public func encode(_ value: Any) throws -> DatabaseValue {
        try Self.encode(value, with: base)
    }

    /// Decodes a non-NULL value to the converter's type.
    /// ```swift
    /// let date = try Converters.shared.converter(for: Date.self)?.decode(.real(0)) as? Date
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Any {
        try base.decode(value)
    }

    /// Encodes `value` when it is exactly of the converter's type (no cast, no box).
    func encode<T>(exactly value: T) throws -> DatabaseValue? {
        try Self.encode(exactly: value, with: base)
    }

    /// Decodes to `T` when `T` is exactly the converter's type (no box, no cast); nil otherwise.
    func decode<T>(_ value: DatabaseValue, as type: T.Type) throws -> T? {
        try Self.decode(value, as: T.self, with: base)
    }

    private static func encode<C: TypeConverter>(_ value: Any, with converter: C) throws -> DatabaseValue {
        guard let typed = value as? C.Value else {
            throw ConversionError.cannotEncode(value, "the converter for \(String(reflecting: C.Value.self)) got another type")
        }
        return try converter.encode(typed)
    }

    private static func encode<C: TypeConverter, T>(exactly value: T, with converter: C) throws -> DatabaseValue? {
        guard T.self == C.Value.self else { return nil }
        return try converter.encode(unsafeBitCast(value, to: C.Value.self))
    }

    private static func decode<C: TypeConverter, T>(_ value: DatabaseValue, as type: T.Type, with converter: C) throws -> T? {
        guard T.self == C.Value.self else { return nil }
        return unsafeBitCast(try converter.decode(value), to: T.self)
    }
}
