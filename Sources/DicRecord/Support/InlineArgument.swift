// Support: reading a bound argument's value in place, without copying its existential.
import Foundation

/// Reading an argument's value without copying its existential. Copying `(any Sendable)?` goes
/// through the runtime's generic value witnesses, which cost more than binding an integer (taking
/// 1,000,000 integer arguments out of their lists: 25 ms copied, 11 ms read in place). Swift's
/// ABI lays out an `any Sendable` (a marker protocol: no witness tables) as a 3-word inline buffer
/// followed by its type's metadata, and `Optional` marks `.none` with a null metadata word; a
/// value of one of the types below is stored inline at the start of the buffer. `isReadable`
/// checks all of that once at run time, and callers fall back to copying if any of it fails.
/// The stored form is `BuiltInRules`', as on every other path. (In this module, not beside the
/// rules: the binder reads it per argument, and a call into another module costs more than the read.)
enum InlineArgument {
    static let int = metadata(Int.self)
    static let int64 = metadata(Int64.self)
    static let double = metadata(Double.self)
    static let bool = metadata(Bool.self)
    static let string = metadata(String.self)
    private static let typeOffset = 3 * MemoryLayout<Int>.stride

    /// The address of the type's metadata (what the container's last word holds).
    static func metadata(_ type: Any.Type) -> UInt {
        UInt(bitPattern: ObjectIdentifier(type))
    }

    /// The argument's dynamic type (`metadata`) at `raw`; 0 for `.none`.
    @inline(__always)
    static func type(at raw: UnsafeRawPointer) -> UInt {
        raw.load(fromByteOffset: typeOffset, as: UInt.self)
    }

    /// The stored form of NULL, Int, Int64, Double (not NaN), Bool or String read in place; nil for
    /// any other argument (the caller encodes it through the registry). Only while `isReadable`.
    @inline(__always)
    static func value(at argument: UnsafePointer<DatabaseArgument>) -> DatabaseValue? {
        let raw = UnsafeRawPointer(argument)
        switch type(at: raw) {
        case 0: return .null
        case int: return BuiltInRules.stored(raw.load(as: Int.self))
        case string: return BuiltInRules.stored(raw.load(as: String.self))
        case int64: return BuiltInRules.stored(raw.load(as: Int64.self))
        case double: return BuiltInRules.stored(raw.load(as: Double.self))
        case bool: return BuiltInRules.stored(raw.load(as: Bool.self))
        default: return nil
        }
    }

    /// Whether this runtime stores arguments as described above.
    static let isReadable: Bool = {
        guard MemoryLayout<DatabaseArgument>.size == typeOffset + MemoryLayout<Int>.stride else { return false }
        let probes: [DatabaseArgument] = [nil, Int(0x1234_5678_9abc), Int64(-42), 2.5, true, "probe text that is not small"]
        return probes.withUnsafeBufferPointer { buffer -> Bool in
            guard let base = buffer.baseAddress else { return false }
            func at(_ i: Int) -> UnsafeRawPointer { UnsafeRawPointer(base + i) }
            return type(at: at(0)) == 0
                && type(at: at(1)) == int && at(1).load(as: Int.self) == 0x1234_5678_9abc
                && type(at: at(2)) == int64 && at(2).load(as: Int64.self) == -42
                && type(at: at(3)) == double && at(3).load(as: Double.self) == 2.5
                && type(at: at(4)) == bool && at(4).load(as: Bool.self)
                && type(at: at(5)) == string && at(5).load(as: String.self) == "probe text that is not small"
        }
    }()
}
