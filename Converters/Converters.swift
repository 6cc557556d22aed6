import Foundation
import Synchronization

/// The converter registry: which ``TypeConverter`` handles which Swift type.
///
/// `Converters.shared` is the global registry and starts with every built-in converter. Each
/// `DbContext` has a child registry whose own registrations win inside that context and which
/// falls back to the global one. Registration is thread-safe and takes effect immediately.
/// ```swift
/// Converters.register(MoneyConverter())                 // everywhere
/// context.register(converter: LegacyDateConverter())    // in one context only
/// ```
public final class Converters: Sendable {
    /// The global registry.
    /// ```swift
    /// let storage = Converters.shared.storageType(for: Date.self)   // .real
    /// ```
    public static let shared = Converters(parent: nil, converters: BuiltInConverters.all)

    private let parent: Converters?
    /// The current table, an immutable snapshot read without a lock. Registration (rare) builds a
    /// new snapshot under `writers` and publishes it; superseded snapshots are kept in `history`,
    /// never freed, so a reader that loaded one can use it without retaining it.
    private let current: Atomic<Unmanaged<Table>>
    private let writers: Mutex<[Table]>

    private final class Table: Sendable {
        let converters: [ObjectIdentifier: AnyTypeConverter]
        init(_ converters: [ObjectIdentifier: AnyTypeConverter]) { self.converters = converters }
    }
    /// Set once a converter is registered here for one of the types that have a built-in fast path.
    private let replacesFastPathType = Atomic<Bool>(false)
    /// Set once any registry replaces a fast-path type: until then no registry needs the chain walk,
    /// and records may decode those types inline.
    @usableFromInline package static let anyReplacesFastPathType = Atomic<Bool>(false)

    /// A registry whose own converters win and which asks `parent` (the global registry by default) otherwise.
    /// ```swift
    /// let local = Converters()
    /// local.register(MoneyConverter())   // Converters.shared is unchanged
    /// ```
    public convenience init(parent: Converters = .shared) {
        self.init(parent: parent, converters: [:])
    }

    private init(parent: Converters?, converters: [ObjectIdentifier: AnyTypeConverter]) {
        self.parent = parent
        let first = Table(converters)
        current = Atomic(Unmanaged.passUnretained(first))
        writers = Mutex([first])
    }

    /// Registers `converter` in the global registry, replacing any earlier converter for the same type.
    /// ```swift
    /// Converters.register(MoneyConverter())
    /// ```
    public static func register<C: TypeConverter>(_ converter: C) {
        shared.register(converter)
    }

    /// Registers `converter` in this registry, replacing any earlier converter for the same type here.
    /// ```swift
    /// context.converters.register(MoneyConverter())
    /// ```
    public func register<C: TypeConverter>(_ converter: C) {
        let key = ObjectIdentifier(C.Value.self)
        let erased = AnyTypeConverter(converter)
        writers.withLock { history in
            var converters = current.load(ordering: .acquiring).takeUnretainedValue().converters
            converters[key] = erased
            let next = Table(converters)
            history.append(next)   // keeps it alive for good
            current.store(Unmanaged.passUnretained(next), ordering: .releasing)
        }
        if BuiltInRules.types.contains(key) {
            replacesFastPathType.store(true, ordering: .releasing)
            Self.anyReplacesFastPathType.store(true, ordering: .releasing)
        }
    }

    /// The converter for `type` (an `Optional` is looked up by its wrapped type), or nil.
    /// ```swift
    /// let converter = Converters.shared.converter(for: Int?.self)   // the Int converter
    /// ```
    public func converter(for type: Any.Type) -> AnyTypeConverter? {
        if let found = registered(ObjectIdentifier(type)) { return found }
        if let optional = type as? any OptionalMarker.Type {
            return converter(for: optional.wrappedType)
        }
        return nil
    }

    /// The converter registered for exactly this type, here or in a parent.
    private func registered(_ key: ObjectIdentifier) -> AnyTypeConverter? {
        if let found = current.load(ordering: .acquiring).takeUnretainedValue().converters[key] { return found }
        return parent?.registered(key)
    }

    /// The column type for `type`, or nil when no converter is registered.
    /// ```swift
    /// Converters.shared.storageType(for: Bool.self)   // .integer
    /// ```
    public func storageType(for type: Any.Type) -> StorageType? {
        converter(for: type)?.storageType
    }

    /// True while Int, Int64, Double, String, Data, Bool, Date and URL use the built-in converters here.
    package var fastPathEnabled: Bool {
        guard Self.anyReplacesFastPathType.load(ordering: .acquiring) else { return true }
        return !replacesFastPathType.load(ordering: .acquiring) && (parent?.fastPathEnabled ?? true)
    }

    /// Types whose conversion costs less than keeping the converted value (records don't cache them).
    package func isCheap<T>(_ type: T.Type) -> Bool {
        fastPathEnabled && (T.self == Int.self || T.self == Int64.self || T.self == Double.self
            || T.self == String.self || T.self == Bool.self)
    }

    /// Encodes any value: nil and `Optional.none` give NULL, a `DatabaseValue` passes through,
    /// anything else goes through the converter registered for its runtime type.
    /// ```swift
    /// let value = try Converters.shared.encode(Date(timeIntervalSince1970: 0))   // .real(0.0)
    /// ```
    public func encode(_ value: Any?) throws -> DatabaseValue {
        guard let value else { return .null }
        return try encodeOpened(value)
    }

    /// `encode` for an argument as DicRecord receives it, without re-boxing it as `Any`.
    package func encode(argument: (any Sendable)?) throws -> DatabaseValue {
        guard let argument else { return .null }
        return try encodeOpened(argument)
    }

    private func encodeOpened<T>(_ value: T) throws -> DatabaseValue {
        if fastPathEnabled, let fast = BuiltInRules.encode(value) { return fast }
        if T.self == DatabaseValue.self { return unsafeBitCast(value, to: DatabaseValue.self) }
        if let optional = value as? any OptionalMarker {
            return try encode(optional.wrappedAny)
        }
        if let converter = registered(ObjectIdentifier(T.self)), let encoded = try converter.encode(exactly: value) {
            return encoded
        }
        let dynamicType = type(of: value as Any)
        guard let converter = converter(for: dynamicType) else {
            throw ConversionError.noConverter(for: dynamicType)
        }
        return try converter.encode(value)
    }

    /// Decodes a non-NULL `value` to `T` through the converter registered for exactly `T`;
    /// nil when there is none (an Optional `T`, or no converter: use `decode` for those).
    package func decodeRegistered<T>(_ value: DatabaseValue, as type: T.Type) throws -> T? {
        if fastPathEnabled, let fast = BuiltInRules.decode(value, as: T.self) { return fast }
        guard let converter = registered(ObjectIdentifier(T.self)) else { return nil }
        return try converter.decode(value, as: T.self)
    }

    /// Decodes `value` to `T`. NULL decodes to nil when `T` is an Optional and throws otherwise.
    /// ```swift
    /// let born = try Converters.shared.decode(.real(0), as: Date.self)
    /// let nick = try Converters.shared.decode(.null, as: String?.self)   // nil
    /// ```
    public func decode<T>(_ value: DatabaseValue, as type: T.Type = T.self) throws -> T {
        if fastPathEnabled, let fast = BuiltInRules.decode(value, as: T.self) { return fast }
        if T.self == DatabaseValue.self { return unsafeBitCast(value, to: T.self) }
        if let optional = T.self as? any OptionalMarker.Type {
            if case .null = value { return try optional.none(as: T.self) }
            return try optional.decodeWrapped(value, in: self, as: T.self)
        }
        if case .null = value {
            throw ConversionError.cannotDecode(value, to: T.self, "the value is NULL")
        }
        guard let converter = converter(for: T.self) else {
            throw ConversionError.noConverter(for: T.self)
        }
        if let typed = try converter.decode(value, as: T.self) { return typed }
        let decoded = try converter.decode(value)
        guard let typed = decoded as? T else {
            throw ConversionError.cannotDecode(value, to: T.self, "the registered converter returned \(Swift.type(of: decoded))")
        }
        return typed
    }
}

/// Lets the registry see through `Optional` without knowing its wrapped type statically.
protocol OptionalMarker {
    static var wrappedType: Any.Type { get }
    var wrappedAny: Any? { get }
    static func none<T>(as: T.Type) throws -> T
    static func decodeWrapped<T>(_ value: DatabaseValue, in registry: Converters, as: T.Type) throws -> T
}

extension Optional: OptionalMarker {
    static var wrappedType: Any.Type { Wrapped.self }
    var wrappedAny: Any? { self.map { $0 as Any } }

    static func none<T>(as: T.Type) throws -> T {
        guard let none = Optional<Wrapped>.none as? T else {
            throw ConversionError.cannotDecode(.null, to: T.self, "cannot build an empty Optional")
        }
        return none
    }

    static func decodeWrapped<T>(_ value: DatabaseValue, in registry: Converters, as: T.Type) throws -> T {
        let wrapped: Wrapped = try registry.decode(value)
        guard let result = Optional(wrapped) as? T else {
            throw ConversionError.cannotDecode(value, to: T.self, "cannot wrap \(Wrapped.self)")
        }
        return result
    }
}
