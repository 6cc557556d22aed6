import Foundation

/// A declared column of a ``Model``: its value lives in the model's record and converts lazily,
/// exactly as a ``Record`` column does (a model a SQLite fetch streamed holds it in this wrapper
/// until it makes its record).
///
/// ```swift
/// final class Student: Model {
///     @Column var name: String?            // TEXT, NULL allowed
///     @Column var age: Int = 10            // INTEGER NOT NULL DEFAULT 10
///     @Column var born: Date?              // REAL seconds
///     @Column var tags: [String]?          // Codable with no converter: JSON TEXT
/// }
/// ```
/// The column is named after the property. A non-optional column needs an initial value: it is
/// the column's `DEFAULT`, and what the property reads while the row has no value for it (or
/// NULL). A stored value that does not convert to the property's type makes the model's load throw.
/// The column type comes from the converter of the property's type; a `Codable` type with no
/// converter is stored as JSON text with no registration.
@propertyWrapper
public struct Column<Value>: ModelField {
    /// What a new model reads before the column is set; the DEFAULT of a non-optional column. A
    /// streamed fetch stores the fetched value here until the model makes its record
    /// (`Model.valuesInWrappers`), and then puts the initial value back.
    @usableFromInline let initialValue: Value

    // Inlinable so that a model's init builds its columns without generic metadata lookups.

    /// A nullable column, NULL until it is set.
    /// ```swift
    /// @Column var name: String?
    /// ```
    @inlinable
    public init() where Value: ExpressibleByNilLiteral {
        initialValue = nil
    }

    /// A column with an initial value: NOT NULL, with the value as its DEFAULT.
    /// ```swift
    /// @Column var age: Int = 10
    /// ```
    @inlinable
    public init(wrappedValue: Value) {
        initialValue = wrappedValue
    }

    /// Unavailable: `@Column` works only on properties of a `Model`, which read and write the model's record.
    /// ```swift
    /// @Column var name: String?     // inside `final class Student: Model { … }`
    /// ```
    @available(*, unavailable, message: "@Column is only available on properties of a Model")
    public var wrappedValue: Value {
        get { fatalError("unreachable: wrappedValue is @available(*, unavailable); models reach the value through subscript(_enclosingInstance:)") }
        set { fatalError("unreachable: wrappedValue is @available(*, unavailable); models reach the value through subscript(_enclosingInstance:)") }
    }

    /// Reads and writes of the property, which read the wrapper of a streamed model and otherwise
    /// go to the model's record (through the converters).
    /// ```swift
    /// student.name = "张三"           // marks "name" modified
    /// let age = student.age
    /// ```
    @inlinable
    public static subscript<M: Model>(_enclosingInstance model: M,
                                      wrapped wrappedKeyPath: ReferenceWritableKeyPath<M, Value>,
                                      storage storageKeyPath: ReferenceWritableKeyPath<M, Column<Value>>) -> Value {
        // The column is found by where its wrapper lies in the model object (`Model.columnOffset`:
        // the same in every instance of the class, however the wrapper was made). The key path
        // is used only to reach the wrapper, which compiles to address arithmetic: its object is
        // never made. (Handing the key path to a call, even on a slow path, would make it on
        // every access: a runtime call, a retain and a release.)
        @inline(__always) get {
            // A fetched model whose wrappers hold its values, or a new model's written ones
            // (`Model.valuesInWrappers`).
            if model.valuesInWrappers {
                if model.readsWrappers { return model[keyPath: storageKeyPath].initialValue }
                // A converter replaced a built-in conversion: the general read below asks it,
                // through the record. The record is made first, which gives the wrappers their
                // initial values back: the fallback copied next is the initial value, not the
                // fetched one (helper-62).
                model.leaveWrappersForGeneralRead()
            }
            let offset = withUnsafeMutablePointer(to: &model[keyPath: storageKeyPath]) { Model.columnOffset($0, in: model) }
            // Copied out here: a closure reading it would carry the key path into the call.
            let initialValue = model[keyPath: storageKeyPath].initialValue
            if case .value(let value) = model.readColumn(offset: offset, initialValue: initialValue) {
                return value
            }
            // The first access to this property of its class: which column it is is found once,
            // by the offset (`FieldResolver.learn`).
            model.learnColumn(offset: offset)
            if case .value(let value) = model.readColumn(offset: offset, initialValue: initialValue) {
                return value
            }
            return initialValue
        }
        @inline(__always) set {
            let offset = withUnsafeMutablePointer(to: &model[keyPath: storageKeyPath]) { Model.columnOffset($0, in: model) }
            // A new model keeps what is written to a numeric column in the wrapper, until it
            // makes its record or is saved (`Model.keepsInWrapper`).
            if model.keepsInWrapper(offset: offset, newValue) {
                model[keyPath: storageKeyPath] = Column(wrappedValue: newValue)
                return
            }
            if model.writeColumn(offset: offset, newValue) { return }
            model.learnColumn(offset: offset)
            model.writeColumn(offset: offset, newValue)
        }
    }

    func describe(name: String) -> FieldDescription {
        .column(ColumnInfo.make(name: name, type: Value.self, initialValue: initialValue))
    }

    /// Always false: a column is found by where its wrapper lies (`FieldResolver.learn`), so it
    /// carries no mark. (A mark would be a byte that pads an `Int` column to 16 bytes: a
    /// model of ten `Int` columns would be 80 bytes larger, in every instance.)
    var probe: Bool {
        get { false }
        set {}
    }
}

/// The property wrappers a model's schema is read from (through `Mirror`).
protocol ModelField {
    /// Set for an instant on the instance at hand to find which property a reference is (by
    /// its key path); always false for a column, which is found by its offset.
    var probe: Bool { get set }
    func describe(name: String) -> FieldDescription
}

enum FieldDescription {
    case column(ColumnInfo)
    case reference(ReferenceInfo)
    case children
}

/// One declared column of a model class. Immutable and shared by every instance.
@usableFromInline
final class ColumnInfo: Sendable {
    @usableFromInline let name: String
    /// Position among the model's declared columns.
    @usableFromInline let slot: Int
    /// The property's type, and the type without its Optional.
    let valueType: Any.Type
    let wrappedType: Any.Type
    let isOptional: Bool
    /// The DEFAULT of a non-optional column (its initial value, encoded).
    let defaultValue: DatabaseValue?
    /// Stored as JSON text: a Codable type that had no converter when the schema was read.
    let json: JSONCodec?
    /// Whether `json` is set (a plain flag, cheap to test on the read path).
    @usableFromInline let isJSON: Bool
    /// A value assigned untyped (subscript, JSON) as the declared type would store it, and the
    /// decoded value; throws when it is not one (refused at save). Nil for NULL.
    let coerce: @Sendable (DatabaseValue, Converters) throws -> (DatabaseValue, Any)?
    /// Which stored values the property's fast read takes as they are (see `accepts`).
    let fastKind: BuiltInRules.Reads
    /// Decodes a stored non-NULL value as the property's type (through the registry, or as
    /// JSON), throwing when it does not convert: how a load checks what `fastKind` does not vouch for.
    let decodes: @Sendable (DatabaseValue, Converters) throws -> Void
    /// The property's type takes no bytes (an empty struct, a one-case enum): its wrapper has no
    /// place of its own in the object, where a column is found (refused by the schema).
    let isEmptyType: Bool
    /// How a fetch may store this column's value in the model's own wrapper (`WrapperKind`),
    /// with the initial value the wrapper gets back when the model stops reading from it.
    let wrapper: WrapperSlot?

    init(name: String, slot: Int, valueType: Any.Type, wrappedType: Any.Type, isOptional: Bool,
         defaultValue: DatabaseValue?, json: JSONCodec?, coerce: @escaping @Sendable (DatabaseValue, Converters) throws -> (DatabaseValue, Any)?,
         fastKind: BuiltInRules.Reads, decodes: @escaping @Sendable (DatabaseValue, Converters) throws -> Void,
         isEmptyType: Bool, wrapper: WrapperSlot?) {
        self.name = name
        self.slot = slot
        self.valueType = valueType
        self.wrappedType = wrappedType
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.json = json
        self.isJSON = json != nil
        self.coerce = coerce
        self.fastKind = fastKind
        self.decodes = decodes
        self.isEmptyType = isEmptyType
        self.wrapper = wrapper
    }

    func with(slot: Int) -> ColumnInfo {
        ColumnInfo(name: name, slot: slot, valueType: valueType, wrappedType: wrappedType, isOptional: isOptional,
                   defaultValue: defaultValue, json: json, coerce: coerce, fastKind: fastKind, decodes: decodes,
                   isEmptyType: isEmptyType, wrapper: wrapper)
    }

    /// Throws when `stored`, non-NULL, does not convert to the property's type (a load refuses
    /// it); NULL is fine (nil, or the initial value). Values of the storage class the fast read
    /// takes pass without a decode, when the fast read applies (`fast`).
    func check(_ stored: DatabaseValue, registry: Converters, fast: Bool) throws {
        if stored == .null { return }
        if fast {
            if fastKind == .date, BuiltInRules.date(stored) != nil { return }
            if fastKind.takesAll(stored.storageType) { return }
        }
        do {
            try decodes(stored, registry)
        } catch let error as ConversionError {
            throw error.inColumn(name)
        } catch {
            throw ConversionError(kind: .notConvertible, column: name, value: "\(stored.storageName) \(stored)",
                                  targetType: String(reflecting: valueType), reason: "\(error)")
        }
    }

    /// The column type for CREATE/ALTER TABLE.
    func storageType(in registry: Converters) -> StorageType? {
        json != nil ? .text : registry.storageType(for: wrappedType)
    }

    static func make<Value>(name: String, type: Value.Type, initialValue: Value) -> ColumnInfo {
        let optional = Value.self as? any OptionalProtocol.Type
        let wrapped = optional?.wrappedType ?? Value.self
        let json = Converters.shared.converter(for: wrapped) == nil
            ? (wrapped as? any Codable.Type).map { JSONCodec($0) } : nil
        var defaultValue: DatabaseValue?
        if optional == nil {
            defaultValue = json.flatMap { try? $0.encode(initialValue) } ?? (try? Converters.shared.encode(initialValue))
        }
        let declaredStorage = json != nil ? StorageType.text : Converters.shared.storageType(for: wrapped)
        let coerce: @Sendable (DatabaseValue, Converters) throws -> (DatabaseValue, Any)? = { raw, registry in
            if raw == .null { return nil }
            // Scalars convert among themselves as the converters allow; bytes never pass for a scalar.
            let isBlob = { if case .blob = raw { return true } else { return false } }()
            if let declaredStorage, isBlob != (declaredStorage == .blob) {
                throw ConversionError.cannotDecode(raw, to: wrapped, "a \(isBlob ? "BLOB" : "non-BLOB") value for a \(declaredStorage.rawValue) column")
            }
            if let json {
                let decoded = try json.decode(raw)
                return (try json.encode(decoded), decoded)
            }
            let decoded: Value = try registry.decode(raw, as: Value.self)
            let unwrapped = (decoded as? any OptionalProtocol)?.unwrapped ?? decoded
            return (try registry.encode(unwrapped), unwrapped)
        }
        let decodes: @Sendable (DatabaseValue, Converters) throws -> Void = { raw, registry in
            if let json {
                _ = try json.decode(raw)
            } else {
                _ = try registry.decode(raw, as: Value.self) as Value
            }
        }
        return ColumnInfo(name: name, slot: 0, valueType: Value.self, wrappedType: wrapped, isOptional: optional != nil,
                          defaultValue: defaultValue, json: json, coerce: coerce,
                          fastKind: json == nil ? BuiltInRules.reads(wrapped) : .none, decodes: decodes,
                          isEmptyType: MemoryLayout<Value>.size == 0,
                          wrapper: json == nil ? WrapperSlot(initialValue) : nil)
    }
}

/// Encodes and decodes one Codable type as JSON text (LYFMDBManager's JSON columns).
@usableFromInline
struct JSONCodec: Sendable {
    private let coder: any JSONCoding

    init<C: Codable>(_ type: C.Type) {
        coder = JSONCoder<C>()
    }

    func encode(_ value: Any) throws -> DatabaseValue { try coder.encode(value) }
    func decode(_ raw: DatabaseValue) throws -> Any { try coder.decode(raw) }
}

private protocol JSONCoding: Sendable {
    func encode(_ value: Any) throws -> DatabaseValue
    func decode(_ raw: DatabaseValue) throws -> Any
}

private struct JSONCoder<C: Codable>: JSONCoding {
    let converter = CodableConverter<C>()

    func encode(_ value: Any) throws -> DatabaseValue {
        let unwrapped = (value as? any OptionalProtocol)?.unwrapped ?? value
        guard let typed = unwrapped as? C else {
            throw ConversionError(kind: .invalidValue, column: nil, value: String(describing: value),
                                  targetType: "\(C.self)", reason: "expected a \(C.self) for this JSON column")
        }
        return try converter.encode(typed)
    }

    func decode(_ raw: DatabaseValue) throws -> Any { try converter.decode(raw) }
}


/// The types whose `@Column` wrapper a fetch can fill with the row's value, so that a read of
/// the property is a load from the model itself: those a stored value converts to exactly, by
/// its storage class (INTEGER for the integers, REAL for Double), and back (the model's record,
/// when it needs one, is made from its wrappers).
enum WrapperKind: UInt8, Sendable {
    case int, optionalInt, int64, optionalInt64, double, optionalDouble

    var isOptional: Bool { self == .optionalInt || self == .optionalInt64 || self == .optionalDouble }

    /// The wrapper's type: a fetch fills a wrapper only where the class's own field records say
    /// a field of exactly this type lies (`ModelSchema.fieldTypes`).
    var columnType: Any.Type {
        switch self {
        case .int: Column<Int>.self
        case .optionalInt: Column<Int?>.self
        case .int64: Column<Int64>.self
        case .optionalInt64: Column<Int64?>.self
        case .double: Column<Double>.self
        case .optionalDouble: Column<Double?>.self
        }
    }
}

/// One column's wrapper kind and initial value (as the schema's prototype model held it).
struct WrapperSlot: Sendable {
    let kind: WrapperKind
    /// The initial value's bits (an integer's, or a Double's bit pattern), and whether it is nil.
    let initialBits: UInt64
    let initialIsNil: Bool

    init?<Value>(_ initialValue: Value) {
        let found: (WrapperKind, UInt64, Bool)?
        if let value = initialValue as? Int, Value.self == Int.self {
            found = (.int, UInt64(bitPattern: Int64(value)), false)
        } else if let value = initialValue as? Int64, Value.self == Int64.self {
            found = (.int64, UInt64(bitPattern: value), false)
        } else if let value = initialValue as? Double, Value.self == Double.self {
            found = (.double, value.bitPattern, false)
        } else if let value = initialValue as? Int?, Value.self == Int?.self {
            found = (.optionalInt, UInt64(bitPattern: Int64(value ?? 0)), value == nil)
        } else if let value = initialValue as? Int64?, Value.self == Int64?.self {
            found = (.optionalInt64, UInt64(bitPattern: value ?? 0), value == nil)
        } else if let value = initialValue as? Double?, Value.self == Double?.self {
            found = (.optionalDouble, (value ?? 0).bitPattern, value == nil)
        } else {
            found = nil
        }
        guard let found else { return nil }
        (kind, initialBits, initialIsNil) = found
    }

    /// Whether a stored value of `tag` goes into the wrapper and comes back out as it was. NULL
    /// does for an optional (nil); a non-optional property reads its initial value for NULL,
    /// which the record made from the wrapper would then hold instead of NULL.
    @inline(__always)
    func takes(_ tag: RowTag) -> Bool {
        switch tag {
        case .null: kind.isOptional
        case .integer: kind == .int || kind == .optionalInt || kind == .int64 || kind == .optionalInt64
        case .real: kind == .double || kind == .optionalDouble
        case .object: false
        }
    }

    // Unsafe, fenced: `wrapper` is where this column's `@Column` property lies in a model (the
    // schema matched the offset with the property, and checked against the class's own field
    // records that a field of exactly `kind.columnType` lies there, which a custom mirror cannot
    // change: `ModelSchema.fieldTypes`), so the memory there is a `Column` of exactly that type.
    // `ModelWrapperLoadTests.everyKindReadsBackThroughItsPropertyAndItsRecord` reads every kind
    // back through its property and through the record made from the wrappers.

    /// The stored value the wrapper at `wrapper` holds (what `replaceInitialValue` put there).
    func value(in wrapper: UnsafeRawPointer) -> DatabaseValue {
        switch kind {
        case .int: .integer(Int64(wrapper.assumingMemoryBound(to: Column<Int>.self).pointee.initialValue))
        case .optionalInt: wrapper.assumingMemoryBound(to: Column<Int?>.self).pointee.initialValue.map { .integer(Int64($0)) } ?? .null
        case .int64: .integer(wrapper.assumingMemoryBound(to: Column<Int64>.self).pointee.initialValue)
        case .optionalInt64: wrapper.assumingMemoryBound(to: Column<Int64?>.self).pointee.initialValue.map { .integer($0) } ?? .null
        case .double: .real(wrapper.assumingMemoryBound(to: Column<Double>.self).pointee.initialValue)
        case .optionalDouble: wrapper.assumingMemoryBound(to: Column<Double?>.self).pointee.initialValue.map { .real($0) } ?? .null
        }
    }

    /// Stores the value of `tag` and `bits` (a tag this slot `takes`) in the wrapper at
    /// `wrapper`, when the wrapper holds the slot's initial value; false, storing nothing, when
    /// it holds another (an init that gives each instance its own keeps it).
    @inline(__always)
    func replaceInitialValue(with tag: RowTag, bits: UInt64, in wrapper: UnsafeMutableRawPointer) -> Bool {
        guard holdsInitialValue(in: wrapper) else { return false }
        switch kind {
        case .int: wrapper.assumingMemoryBound(to: Column<Int>.self).pointee = Column(wrappedValue: Int(Int64(bitPattern: bits)))
        case .int64: wrapper.assumingMemoryBound(to: Column<Int64>.self).pointee = Column(wrappedValue: Int64(bitPattern: bits))
        case .double: wrapper.assumingMemoryBound(to: Column<Double>.self).pointee = Column(wrappedValue: Double(bitPattern: bits))
        case .optionalInt:
            wrapper.assumingMemoryBound(to: Column<Int?>.self).pointee = Column(wrappedValue: tag == .null ? nil : Int(Int64(bitPattern: bits)))
        case .optionalInt64:
            wrapper.assumingMemoryBound(to: Column<Int64?>.self).pointee = Column(wrappedValue: tag == .null ? nil : Int64(bitPattern: bits))
        case .optionalDouble:
            wrapper.assumingMemoryBound(to: Column<Double?>.self).pointee = Column(wrappedValue: tag == .null ? nil : Double(bitPattern: bits))
        }
        return true
    }

    /// Whether the wrapper at `wrapper` holds the slot's initial value (the schema's prototype's).
    @inline(__always)
    func holdsInitialValue(in wrapper: UnsafeRawPointer) -> Bool {
        switch kind {
        case .int: UInt64(bitPattern: Int64(wrapper.assumingMemoryBound(to: Column<Int>.self).pointee.initialValue)) == initialBits
        case .int64: UInt64(bitPattern: wrapper.assumingMemoryBound(to: Column<Int64>.self).pointee.initialValue) == initialBits
        case .double: wrapper.assumingMemoryBound(to: Column<Double>.self).pointee.initialValue.bitPattern == initialBits
        case .optionalInt: holds(wrapper.assumingMemoryBound(to: Column<Int?>.self).pointee.initialValue.map { UInt64(bitPattern: Int64($0)) })
        case .optionalInt64: holds(wrapper.assumingMemoryBound(to: Column<Int64?>.self).pointee.initialValue.map { UInt64(bitPattern: $0) })
        case .optionalDouble: holds(wrapper.assumingMemoryBound(to: Column<Double?>.self).pointee.initialValue.map(\.bitPattern))
        }
    }

    /// Writes the value the wrapper at `wrapper` holds to `column` of `model`'s record
    /// (`Model.moveWrite`), and gives the wrapper its initial value back: a new model's write kept
    /// in its wrapper moves to the record it makes.
    func moveWrite(in wrapper: UnsafeMutableRawPointer, to column: ColumnInfo, of model: Model) {
        switch kind {
        case .int: model.moveWrite(column, wrapper.assumingMemoryBound(to: Column<Int>.self).pointee.initialValue)
        case .optionalInt: model.moveWrite(column, wrapper.assumingMemoryBound(to: Column<Int?>.self).pointee.initialValue)
        case .int64: model.moveWrite(column, wrapper.assumingMemoryBound(to: Column<Int64>.self).pointee.initialValue)
        case .optionalInt64: model.moveWrite(column, wrapper.assumingMemoryBound(to: Column<Int64?>.self).pointee.initialValue)
        case .double: model.moveWrite(column, wrapper.assumingMemoryBound(to: Column<Double>.self).pointee.initialValue)
        case .optionalDouble: model.moveWrite(column, wrapper.assumingMemoryBound(to: Column<Double?>.self).pointee.initialValue)
        }
        restore(in: wrapper)
    }

    /// Whether an optional's value, as bits (nil for nil), is the initial one.
    @inline(__always)
    private func holds(_ bits: UInt64?) -> Bool {
        if let bits { !initialIsNil && bits == initialBits } else { initialIsNil }
    }

    /// Gives the wrapper at `wrapper` its initial value back.
    func restore(in wrapper: UnsafeMutableRawPointer) {
        switch kind {
        case .int: wrapper.assumingMemoryBound(to: Column<Int>.self).pointee = Column(wrappedValue: Int(Int64(bitPattern: initialBits)))
        case .optionalInt: wrapper.assumingMemoryBound(to: Column<Int?>.self).pointee = Column(wrappedValue: initialIsNil ? nil : Int(Int64(bitPattern: initialBits)))
        case .int64: wrapper.assumingMemoryBound(to: Column<Int64>.self).pointee = Column(wrappedValue: Int64(bitPattern: initialBits))
        case .optionalInt64: wrapper.assumingMemoryBound(to: Column<Int64?>.self).pointee = Column(wrappedValue: initialIsNil ? nil : Int64(bitPattern: initialBits))
        case .double: wrapper.assumingMemoryBound(to: Column<Double>.self).pointee = Column(wrappedValue: Double(bitPattern: initialBits))
        case .optionalDouble: wrapper.assumingMemoryBound(to: Column<Double?>.self).pointee = Column(wrappedValue: initialIsNil ? nil : Double(bitPattern: initialBits))
        }
    }
}
