/// A value that could not be converted between Swift and SQLite.
///
/// The message names the column (when known), the stored value and type, and the Swift type:
/// `cannot convert TEXT 'abc' to Date in column "born": not a date`.
public struct ConversionError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The stored value does not fit the requested Swift type.
        case notConvertible
        /// No converter is registered for the Swift type.
        case noConverter
        /// The Swift value cannot be stored (NaN, UInt64 above Int64.max, a color component out of range).
        case invalidValue
    }

    public let kind: Kind
    /// The column involved, when the conversion was for a column.
    public var column: String?
    /// The stored value (decoding) or the Swift value (encoding), summarized.
    public let value: String
    /// The Swift type's name.
    public let targetType: String
    /// Why, in a few words.
    public let reason: String

    public init(kind: Kind, column: String? = nil, value: String, targetType: String, reason: String) {
        self.kind = kind
        self.column = column
        self.value = value
        self.targetType = targetType
        self.reason = reason
    }

    /// A decoding failure: `stored` does not convert to `target`.
    public static func cannotDecode(_ stored: DatabaseValue, to target: Any.Type, _ reason: String) -> ConversionError {
        ConversionError(kind: .notConvertible, value: "\(stored.storageName) \(stored)",
                        targetType: String(reflecting: target), reason: reason)
    }

    /// An encoding failure: `value` cannot be stored.
    public static func cannotEncode(_ value: Any, _ reason: String) -> ConversionError {
        ConversionError(kind: .invalidValue, value: String(describing: value),
                        targetType: String(reflecting: type(of: value)), reason: reason)
    }

    /// No converter is registered for `type`.
    public static func noConverter(for type: Any.Type) -> ConversionError {
        ConversionError(kind: .noConverter, value: "", targetType: String(reflecting: type),
                        reason: "no converter is registered for this type; register one with Converters.register(_:)")
    }

    /// The same error, naming `target` as the type that was asked for (converters built on others).
    public func retargeted(to target: Any.Type) -> ConversionError {
        ConversionError(kind: kind, column: column, value: value, targetType: String(reflecting: target), reason: reason)
    }

    /// The same error, naming `column`.
    public func inColumn(_ column: String) -> ConversionError {
        var copy = self
        copy.column = column
        return copy
    }

    public var description: String {
        let place = column.map { " in column \"\($0)\"" } ?? ""
        switch kind {
        case .noConverter:
            return "no converter for type \(targetType)\(place): \(reason)"
        case .notConvertible:
            return "cannot convert \(value) to \(targetType)\(place): \(reason)"
        case .invalidValue:
            return "cannot store \(targetType) value \(value)\(place): \(reason)"
        }
    }
}
