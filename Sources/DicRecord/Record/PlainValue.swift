import DicRecordConverters
import Foundation

/// A value of one of the common types, read out of an `Any?` where it lies: building a record
/// from a literal and `record.name = value` take these without copying the existential (a copy,
/// a type test and a destroy cost about 35 ns a value, more than the rest of storing it).
enum PlainValue {
    case int(Int)
    case int64(Int64)
    case double(Double)
    case bool(Bool)
    case string(String)

    /// Byte offset of the type metadata pointer in an `Any` (and an `Any?`).
    @inline(__always) static var metadataOffset: Int { 3 * MemoryLayout<UnsafeRawPointer>.size }

    /// The common value held by the `Any?` at `pointer`, or nil (nil too for NULL and any other type).
    ///
    /// Unsafe, fenced: an `Any` is an opaque existential container, three words of inline buffer
    /// and then the type's metadata pointer, which `Optional<Any>` sets to zero for nil (the
    /// Swift ABI's layout); these five types fit the buffer and are stored at its start.
    /// `PlainValueTests` fails if either changes. Only the metadata word is read before the type
    /// is known, and it is compared with the metadata of the five types, nothing else.
    @inline(__always)
    static func peek(_ pointer: UnsafeRawPointer) -> PlainValue? {
        let metadata = pointer.load(fromByteOffset: metadataOffset, as: UInt.self)
        if metadata == 0 { return nil }
        if metadata == UInt(bitPattern: ObjectIdentifier(Int.self)) { return .int(pointer.load(as: Int.self)) }
        if metadata == UInt(bitPattern: ObjectIdentifier(String.self)) { return .string(pointer.load(as: String.self)) }
        if metadata == UInt(bitPattern: ObjectIdentifier(Double.self)) { return .double(pointer.load(as: Double.self)) }
        if metadata == UInt(bitPattern: ObjectIdentifier(Int64.self)) { return .int64(pointer.load(as: Int64.self)) }
        if metadata == UInt(bitPattern: ObjectIdentifier(Bool.self)) { return .bool(pointer.load(as: Bool.self)) }
        return nil
    }

    /// The common value `value` holds (read in place, not copied).
    @inline(__always)
    static func peek(_ value: borrowing Any?) -> PlainValue? {
        withUnsafePointer(to: value) { (container: UnsafePointer<Any?>) in peek(UnsafeRawPointer(container)) }
    }

    /// The common value `value` holds (read in place, not copied). An `Any` is laid out as the
    /// `Any` an `Any?` wraps (its metadata word is never zero).
    @inline(__always)
    static func peek(_ value: borrowing Any) -> PlainValue? {
        // The pointer's type spelled out: it is the container's address, never the value's
        // (Swift 6 opens an `Any` passed where the closure does not mention its type).
        withUnsafePointer(to: value) { (container: UnsafePointer<Any>) in peek(UnsafeRawPointer(container)) }
    }

    /// The stored value by the built-in rules, and the kind a record's cell notes to rebuild the
    /// value from it; nil when the rules give none (NaN), for the general path to report.
    @inline(__always)
    var encoded: (stored: DatabaseValue, kind: PlainKind)? {
        switch self {
        case .int(let v): return (BuiltInRules.stored(v), .int)
        case .int64(let v): return (BuiltInRules.stored(v), .int64)
        case .bool(let v): return (BuiltInRules.stored(v), .bool)
        case .string(let v): return (BuiltInRules.stored(v), .string)
        case .double(let v):
            guard let stored = BuiltInRules.stored(v) else { return nil }
            return (stored, .double)
        }
    }
}

/// The common type a written value had, when its stored value gives it back exactly: a cell
/// notes this instead of keeping the value in an `Any` (copying an `Any` costs a call through
/// its type's witnesses, each time the cell is copied or destroyed).
enum PlainKind: UInt8 {
    case none, int, int64, double, bool, string

    /// The written value, from the value the built-in rules stored for it.
    func value(from stored: DatabaseValue) -> Any? {
        switch (self, stored) {
        case (.int, .integer(let v)): Int(v)
        case (.int64, .integer(let v)): v
        case (.bool, .integer(let v)): v != 0
        case (.double, .real(let v)): v
        case (.string, .text(let v)): v
        default: nil
        }
    }
}

/// The columns of a record being built: names, and values encoded with what the record keeps.
protocol BuildingPairs {
    var count: Int { get }
    func name(at index: Int) -> String
    /// Whether the name at `index` is `expected`, with the same UTF-8 bytes' length (for ASCII
    /// names, the same bytes: see `Record.LayoutReuse`).
    func name(at index: Int, is expected: String) -> Bool
    /// The value at `index` when it is of a common type, read in place and encoded by the
    /// built-in rules, with its kind (nothing of it kept as an `Any`); nil otherwise.
    func plain(at index: Int) -> (stored: DatabaseValue, kind: PlainKind)?
    /// The value at `index` encoded by the registry, with what the record keeps of it: the value,
    /// or what a written Optional wraps.
    func encoded(at index: Int, registry: Converters) throws -> Encoded
}

/// A value encoded for a record's cell.
struct Encoded {
    let stored: DatabaseValue
    let kept: Any?
    let kind: PlainKind
}

extension BuildingPairs {
    /// The general path: the registry encodes the value.
    @inline(__always)
    static func encodedGenerally(_ value: Any?, registry: Converters) throws -> Encoded {
        let stored = try registry.encode(value)
        return Encoded(stored: stored, kept: value.flatMap { Record.isPlainValue($0) ? $0 : ($0 as? any OptionalProtocol)?.unwrapped ?? $0 },
                       kind: .none)
    }
}

/// Pairs in an array (a dictionary's, sorted; a JSON object's).
struct ArrayPairs: BuildingPairs {
    let pairs: [(key: String, value: Any?)]
    var count: Int { pairs.count }
    func name(at index: Int) -> String { pairs[index].key }
    func name(at index: Int, is expected: String) -> Bool {
        pairs[index].key.utf8.count == expected.utf8.count && pairs[index].key == expected
    }
    func plain(at index: Int) -> (stored: DatabaseValue, kind: PlainKind)? {
        PlainValue.peek(pairs[index].value)?.encoded
    }
    func encoded(at index: Int, registry: Converters) throws -> Encoded {
        try Self.encodedGenerally(pairs[index].value, registry: registry)
    }
}

/// The elements of a record literal, read where they lie (see `Record.init(_:)`).
struct LiteralPairs: BuildingPairs {
    let elements: UnsafeBufferPointer<(key: String, value: Any?)>
    /// Where an element's value starts.
    @inline(__always) static var valueOffset: Int {
        MemoryLayout<(key: String, value: Any?)>.offset(of: \(key: String, value: Any?).value) ?? MemoryLayout<String>.stride
    }
    var count: Int { elements.count }
    /// Where an element's name starts.
    @inline(__always) static var keyOffset: Int { MemoryLayout<(key: String, value: Any?)>.offset(of: \(key: String, value: Any?).key) ?? 0 }
    /// (Read through a pointer: `elements[index].key` copied the whole element, its `Any?` too.)
    @inline(__always)
    func name(at index: Int) -> String {
        guard let base = elements.baseAddress else { return elements[index].key }
        precondition(index >= 0 && index < elements.count, "element index out of range")
        return (UnsafeRawPointer(base + index) + Self.keyOffset).load(as: String.self)
    }
    /// (Compared where it lies, through a typed pointer: a loaded copy is retained and released.)
    @inline(__always)
    func name(at index: Int, is expected: String) -> Bool {
        guard let base = elements.baseAddress else { return elements[index].key == expected }
        precondition(index >= 0 && index < elements.count, "element index out of range")
        let name = (UnsafeRawPointer(base + index) + Self.keyOffset).assumingMemoryBound(to: String.self)
        return name.pointee.utf8.count == expected.utf8.count && name.pointee == expected
    }
    @inline(__always)
    func plain(at index: Int) -> (stored: DatabaseValue, kind: PlainKind)? {
        guard let base = elements.baseAddress else { return nil }
        precondition(index >= 0 && index < elements.count, "element index out of range")
        return PlainValue.peek(UnsafeRawPointer(base + index) + Self.valueOffset)?.encoded
    }
    func encoded(at index: Int, registry: Converters) throws -> Encoded {
        try Self.encodedGenerally(elements[index].value, registry: registry)
    }
}
