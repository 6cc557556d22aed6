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
    associatedtype Value
    /// The column type used in `CREATE TABLE` / `ALTER TABLE`.
    var storageType: StorageType { get }
    /// Swift value to SQLite value. Throw ``ConversionError`` for a value that cannot be stored.
    func encode(_ value: Value) throws -> DatabaseValue
    /// SQLite value to Swift value. Never called with `.null`.
    func decode(_ value: DatabaseValue) throws -> Value
}

/// A converter with its `Value` type erased, as the registry keeps it. A class, so that handing
/// one out of the registry costs one retain.
public final class AnyTypeConverter: Sendable {
    /// The column type of the converted type.
    public let storageType: StorageType
    /// The converted Swift type's name, for messages.
    public let typeName: String
    let encodeAny: @Sendable (Any) throws -> DatabaseValue
    let decodeAny: @Sendable (DatabaseValue) throws -> Any

    init<C: TypeConverter>(_ converter: C) {
        storageType = converter.storageType
        typeName = String(reflecting: C.Value.self)
        encodeAny = { value in
            guard let typed = value as? C.Value else {
                throw ConversionError.cannotEncode(value, "the converter for \(String(reflecting: C.Value.self)) got another type")
            }
            return try converter.encode(typed)
        }
        decodeAny = { value in try converter.decode(value) }
    }

    /// Encodes a value of the converter's type.
    public func encode(_ value: Any) throws -> DatabaseValue { try encodeAny(value) }

    /// Decodes a non-NULL value to the converter's type.
    public func decode(_ value: DatabaseValue) throws -> Any { try decodeAny(value) }
}
