/// A value that could not be converted between Swift and SQLite.
///
/// The message names the column (when known), the stored value and type, and the Swift type:
/// `cannot convert TEXT 'abc' to Date in column "born": not a date`.
/// ```swift
/// do { let born = try record.get("born", as: Date.self) }
/// catch let error as ConversionError { print(error) }   // cannot convert TEXT 'abc' to Foundation.Date in column "born": …
/// ```
public struct ConversionError: Error, Sendable, CustomStringConvertible {
    /// ```swift
    /// if error.kind == .noConverter { Converters.register(MoneyConverter()) }
    /// ```
    public enum Kind: Sendable, Equatable {
        /// The stored value does not fit the requested Swift type.
        /// ```swift
        /// error.kind == .notConvertible
        /// ```
        case notConvertible
        /// No converter is registered for the Swift type.
        /// ```swift
        /// error.kind == .noConverter
        /// ```
        case noConverter
        /// The Swift value cannot be stored (NaN, UInt64 above Int64.max, a color component out of range).
        /// ```swift
        /// error.kind == .invalidValue
        /// ```
        case invalidValue
    }

    /// What went wrong, as a case to switch on.
    /// ```swift
    /// switch error.kind { case .noConverter: print("register a converter"); default: print(error) }
    /// ```
    public let kind: Kind
    /// The column involved, when the conversion was for a column.
    /// ```swift
    /// error.column   // "born"
    /// ```
    public var column: String?
    /// The model class whose row held the value, when a model was being loaded.
    /// ```swift
    /// error.model    // "Student"
    /// ```
    public var model: String?
    /// The key of that row, as `column = value` pairs.
    /// ```swift
    /// error.rowKey   // "id = 3"
    /// ```
    public var rowKey: String?
    /// The stored value (decoding) or the Swift value (encoding), summarized.
    /// ```swift
    /// error.value    // "TEXT 'abc'"
    /// ```
    public let value: String
    /// The Swift type's name.
    /// ```swift
    /// error.targetType   // "Foundation.Date"
    /// ```
    public let targetType: String
    /// Why, in a few words.
    /// ```swift
    /// error.reason   // "not a date"
    /// ```
    public let reason: String

    /// An error made of its parts; converters usually use `cannotDecode`, `cannotEncode` or `noConverter` instead.
    /// ```swift
    /// throw ConversionError(kind: .invalidValue, value: "-5", targetType: "Money", reason: "negative amount")
    /// ```
    public init(kind: Kind, column: String? = nil, value: String, targetType: String, reason: String) {
        self.kind = kind
        self.column = column
        self.value = value
        self.targetType = targetType
        self.reason = reason
    }

    /// A decoding failure: `stored` does not convert to `target`.
    /// ```swift
    /// throw ConversionError.cannotDecode(value, to: Money.self, "expected INTEGER cents")
    /// ```
    public static func cannotDecode(_ stored: DatabaseValue, to target: Any.Type, _ reason: String) -> ConversionError {
        // NULL is its own storage class and its own text: said once.
        let summary = stored == .null ? "NULL" : "\(stored.storageName) \(stored)"
        return ConversionError(kind: .notConvertible, value: summary, targetType: String(reflecting: target), reason: reason)
    }

    /// An encoding failure: `value` cannot be stored.
    /// ```swift
    /// throw ConversionError.cannotEncode(value, "negative amounts cannot be stored")
    /// ```
    public static func cannotEncode(_ value: Any, _ reason: String) -> ConversionError {
        ConversionError(kind: .invalidValue, value: String(describing: value),
                        targetType: String(reflecting: type(of: value)), reason: reason)
    }

    /// No converter is registered for `type`.
    /// ```swift
    /// throw ConversionError.noConverter(for: Money.self)
    /// ```
    public static func noConverter(for type: Any.Type) -> ConversionError {
        ConversionError(kind: .noConverter, value: "", targetType: String(reflecting: type),
                        reason: "no converter is registered for this type; register one with Converters.register(_:)")
    }

    /// The same error, naming `target` as the type that was asked for (converters built on others).
    /// ```swift
    /// catch let error as ConversionError { throw error.retargeted(to: Celsius.self) }   // in a converter built on Double's
    /// ```
    public func retargeted(to target: Any.Type) -> ConversionError {
        ConversionError(kind: kind, column: column, value: value, targetType: String(reflecting: target), reason: reason)
    }

    /// The same error, naming `column`.
    /// ```swift
    /// catch let error as ConversionError { throw error.inColumn("born") }
    /// ```
    public func inColumn(_ column: String) -> ConversionError {
        var copy = self
        copy.column = column
        return copy
    }

    /// The same error, naming the model being loaded and the key of its row.
    /// ```swift
    /// catch let error as ConversionError { throw error.inModel("Student", rowKey: "id = 3") }
    /// ```
    public func inModel(_ model: String, rowKey: String?) -> ConversionError {
        var copy = self
        copy.model = model
        copy.rowKey = rowKey
        return copy
    }

    /// One sentence naming the type, the value, the column when known, and the reason.
    /// ```swift
    /// print(error)   // cannot convert TEXT 'abc' to Foundation.Date in column "born": not a date
    /// print(error)   // cannot convert TEXT 'abc' to Swift.Int in column "age" of Student (row id = 3): not an integer
    /// ```
    public var description: String {
        var place = column.map { " in column \"\($0)\"" } ?? ""
        if let model { place += " of \(model)" + (rowKey.map { " (row \($0))" } ?? "") }
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
