import Foundation
import Synchronization

// Typed reads. They are inlinable so that, at a call site where `T` is known, reading an Int,
// Int64, Double, String, Bool, Data or Date compiles down to an atomic load, an array load and a switch:
// no registry lookup, no boxing, no generic metadata. Every other type, every stored value that
// needs a lenient conversion, and any process where a fast type's converter was replaced, take
// the general path (`get(_:as:)`), whose results the fast path reproduces exactly. Date is here
// too: it marks its column in `flags`, so that untyped reads and `toJSON` show a Date afterwards,
// as a kept conversion would. URL, slow to parse, is parsed here without the registry's lookup
// and casts and kept as the general path keeps it (`fastURL`).
extension Record {
    /// A typed read: `let name: String? = record.name`. Nil for NULL, a missing column or a
    /// value that does not convert; the last two also log a warning naming the column, the
    /// stored value, the type and the SQL (once per column name and statement), or stop the process
    /// under `Options.strictReads`. `get(_:as:)` throws instead.
    /// ```swift
    /// let name: String? = record.name
    /// let age: Int? = record.age
    /// ```
    @inlinable
    public subscript<T>(dynamicMember column: String) -> T? {
        self[column]
    }

    /// A typed read by name: `let n: String? = record["t_name"]`.
    /// ```swift
    /// let teacherName: String? = record["t_name"]
    /// ```
    @inlinable
    public subscript<T>(column: String) -> T? {
        // The common case, always inlined: an unwritten record, decoded where the value lies (a
        // Date read marks its column, see `keepDate`). The rest is out of line (`read`).
        @inline(__always) get {
            if T.self != URL.self && !isMutated && fastPathAllowed {
                guard let index = baseLayout.position(of: column) else { return read(column, as: T.self) }
                if case .value(let value) = Self.fastDecode(value: baseValues[index], as: T.self),
                   T.self != Date.self || value == nil || keepDate(at: index) {
                    return value
                }
            }
            return read(column, as: T.self)
        }
    }

    /// Every other typed read by name (written records, Date, URL, conversions): specialized
    /// for `T` in the caller's module, but kept out of line so that call sites stay small.
    @inlinable @inline(never)
    func read<T>(_ column: String, as type: T.Type) -> T? {
        // A missing column goes on to the general read, which reports it.
        if fastPathAllowed, let found = storedValueForFastRead(column) {
            if case .value(let value) = Self.fastDecode(value: found.value, as: T.self) {
                guard T.self == Date.self, value != nil else { return value }
                // Read from the base without the lock: marked inline; else under the lock.
                let kept = if let layout = found.layout {
                    keepDate(at: found.index, ifStill: found.value, readIn: layout)
                } else {
                    keepDate(at: found.index)
                }
                if kept { return value }
            } else if T.self == URL.self, let url = fastURL(at: found.index, stored: found.value) {
                return unsafeBitCast(url, to: T.self)
            }
        }
        return readReportingMiss(column, as: T.self)
    }

    /// A typed read by position in column order.
    /// Nil also for an index out of range.
    /// ```swift
    /// let name: String? = record[1]      // the second column
    /// ```
    @inlinable
    public subscript<T>(index: Int) -> T? {
        @inline(__always) get {
            if T.self != URL.self && !isMutated && fastPathAllowed {
                guard baseValues.indices.contains(index) else { return read(index, as: T.self) }
                if case .value(let value) = Self.fastDecode(value: baseValues[index], as: T.self),
                   T.self != Date.self || value == nil || keepDate(at: index) {
                    return value
                }
            }
            return read(index, as: T.self)
        }
    }

    /// Every other typed read by position (see `read(_:as:)` by name).
    @inlinable @inline(never)
    func read<T>(_ index: Int, as type: T.Type) -> T? {
        if fastPathAllowed, let found = storedValueForFastRead(index) {
            if case .value(let value) = Self.fastDecode(value: found.value, as: T.self) {
                guard T.self == Date.self, value != nil else { return value }
                let kept = if let layout = found.layout {
                    keepDate(at: index, ifStill: found.value, readIn: layout)
                } else {
                    keepDate(at: index)
                }
                if kept { return value }
            } else if T.self == URL.self, let url = fastURL(at: index, stored: found.value) {
                return unsafeBitCast(url, to: T.self)
            }
        }
        return readReportingMiss(index, as: T.self)
    }

    /// Marks column `index`, read as a Date from the base of a record no one had written, as
    /// read so (see `flags`); false for a column past the 60 the marks cover, which then keeps its
    /// Date the general way. The mark is set without the lock. A first write sets the written bit
    /// before it clears the marks of what it writes (under the lock): a mark set after that bit (the
    /// write came between this read and its mark) is checked again under the lock.
    @inlinable
    func keepDate(at index: Int) -> Bool {
        guard index < Self.dateMarkCount else { return false }
        let bit = UInt64(1) << UInt64(index)
        if flags.load(ordering: .relaxed) & bit == 0 {
            flags.bitwiseOr(bit, ordering: .relaxed)
            if isMutated { recheckBaseDate(bit: bit, at: index) }
        }
        return true
    }

    /// Under the lock: keeps the mark of column `index`, set for a value read from the base,
    /// only if the record still has the base's columns and the column still holds that value.
    /// (A mark another read set for a new value may go too: a mark lost, never a wrong one.)
    @usableFromInline @inline(never)
    func recheckBaseDate(bit: UInt64, at index: Int) {
        lock.withLock { _ in
            guard layout !== baseLayout || index >= values.count || values[index] != baseValues[index] else { return }
            flags.bitwiseAnd(~bit, ordering: .relaxed)
        }
    }

    /// `keepDate(at:)` for a value read under the lock in `layout`: the mark is set under the
    /// lock, only if the record still has that layout and
    /// the column still holds `stored` (else the Date read is returned, not kept).
    @usableFromInline @inline(never)
    func keepDate(at index: Int, ifStill stored: DatabaseValue, readIn layout: RowLayout) -> Bool {
        guard index < Self.dateMarkCount else { return false }
        let bit = UInt64(1) << UInt64(index)
        if flags.load(ordering: .relaxed) & bit != 0 { return true }
        lock.withLock { _ in
            guard self.layout === layout, index < values.count, values[index] == stored else { return }
            flags.bitwiseOr(bit, ordering: .relaxed)
        }
        return true
    }

    /// False when this record's converters replace a fast-path type. One relaxed load while no
    /// registry anywhere does; otherwise the record's own registry chain decides.
    @inlinable
    var fastPathAllowed: Bool {
        !Converters.anyReplacesFastPathType.load(ordering: .relaxed) || registryAllowsFastPath
    }

    @usableFromInline
    var registryAllowsFastPath: Bool { registry.fastPathEnabled }

    /// A stored value found for a fast read: its position, the value, and the layout it was
    /// read in when read under the lock (nil: read from the base, without it). A struct, not an
    /// optional tuple: the optional of a tuple holding a class reference was destroyed through
    /// the runtime's generic value witnesses (about 250 instructions a read, fetch_mixed 3% slower).
    @usableFromInline
    struct StoredRead {
        @usableFromInline let index: Int
        @usableFromInline let value: DatabaseValue
        @usableFromInline let layout: RowLayout?

        @inlinable
        init(index: Int, value: DatabaseValue, layout: RowLayout?) {
            self.index = index
            self.value = value
            self.layout = layout
        }
    }

    /// The position and stored value of `column` (see `StoredRead`).
    @inlinable
    func storedValueForFastRead(_ column: String) -> StoredRead? {
        if !isMutated {
            guard let index = baseLayout.position(of: column) else { return nil }
            return StoredRead(index: index, value: baseValues[index], layout: nil)
        }
        return lock.withLock { _ in
            let current = layout
            guard let index = current.position(of: column) else { return nil }
            return StoredRead(index: index, value: values[index], layout: current)
        }
    }

    /// The stored value at `index` (see `StoredRead`).
    @inlinable
    func storedValueForFastRead(_ index: Int) -> StoredRead? {
        if !isMutated {
            return baseValues.indices.contains(index) ? StoredRead(index: index, value: baseValues[index], layout: nil) : nil
        }
        return lock.withLock { _ in
            values.indices.contains(index) ? StoredRead(index: index, value: values[index], layout: layout) : nil
        }
    }

    /// The decoded value when the fast path applies (`.miss` otherwise). A missing column and
    /// NULL read as nil, as on the general path.
    @inlinable @inline(__always)
    static func fastDecode<T>(_ stored: DatabaseValue?, as type: T.Type) -> FastRead<T> {
        guard let stored else { return .value(nil) }
        return fastDecode(value: stored, as: T.self)
    }

    /// `fastDecode` of a value that is there (borrowed: a stored value is not copied to decode it).
    /// The rules are `BuiltInRules`' (Converters/BuiltIn/BuiltInRules.swift).
    @inlinable @inline(__always)
    static func fastDecode<T>(value stored: DatabaseValue, as type: T.Type) -> FastRead<T> {
        if case .null = stored { return .value(nil) }
        if let value = BuiltInRules.decode(stored, as: T.self) { return .value(value) }
        return .miss
    }
}

extension Record {
    /// `fastDecode` for a model column, whose type may be Optional: `.value(nil)` means NULL for a
    /// non-optional type (the caller reads its default); an Optional type reads NULL as `.none`.
    @inlinable @inline(__always)
    static func fastColumnDecode<Value>(_ stored: DatabaseValue, as type: Value.Type) -> FastRead<Value> {
        @inline(__always)
        func optional<W>(_ wrapped: W.Type) -> FastRead<Value> {
            guard case .value(let value) = fastDecode(stored, as: W.self) else { return .miss }
            return .value(unsafeBitCast(value, to: Value.self))
        }
        // The plain types first: specialized for one of them, the comparisons fold away (an
        // Optional's metadata, which the ones below compare with, is fetched at run time).
        if Value.self == Int.self || Value.self == String.self || Value.self == Double.self || Value.self == Int64.self
            || Value.self == Bool.self || Value.self == Date.self || Value.self == Data.self {
            return fastDecode(stored, as: Value.self)
        }
        if Value.self == Int?.self { return optional(Int.self) }
        if Value.self == String?.self { return optional(String.self) }
        if Value.self == Double?.self { return optional(Double.self) }
        if Value.self == Int64?.self { return optional(Int64.self) }
        if Value.self == Bool?.self { return optional(Bool.self) }
        if Value.self == Date?.self { return optional(Date.self) }
        if Value.self == Data?.self { return optional(Data.self) }
        return fastDecode(stored, as: Value.self)
    }
}

extension Record {
    /// The stored form of a value of a common type (and its Optional), with the value to keep,
    /// by `BuiltInRules`, without the registry's dynamic casts; nil for any other type and where
    /// the rule leaves the answer to the converter (its error). The caller checks `fastPathAllowed`.
    static func fastEncode<V>(_ value: V) -> Encoded? {
        // A common value is kept as its kind (`PlainKind`: rebuilt from the stored value, nothing
        // boxed); Date and Data as themselves (boxing a generic `W` as `Any` costs a runtime call).
        func plain<W>(_ value: W) -> Encoded? {
            if W.self == Int.self { return Encoded(stored: BuiltInRules.stored(unsafeBitCast(value, to: Int.self)), kept: nil, kind: .int) }
            if W.self == String.self { return Encoded(stored: BuiltInRules.stored(unsafeBitCast(value, to: String.self)), kept: nil, kind: .string) }
            if W.self == Double.self {
                return BuiltInRules.stored(unsafeBitCast(value, to: Double.self)).map { Encoded(stored: $0, kept: nil, kind: .double) }
            }
            if W.self == Int64.self { return Encoded(stored: BuiltInRules.stored(unsafeBitCast(value, to: Int64.self)), kept: nil, kind: .int64) }
            if W.self == Bool.self { return Encoded(stored: BuiltInRules.stored(unsafeBitCast(value, to: Bool.self)), kept: nil, kind: .bool) }
            if W.self == Date.self { let v = unsafeBitCast(value, to: Date.self); return BuiltInRules.stored(v).map { Encoded(stored: $0, kept: v, kind: .none) } }
            if W.self == Data.self { let v = unsafeBitCast(value, to: Data.self); return Encoded(stored: BuiltInRules.stored(v), kept: v, kind: .none) }
            return nil
        }
        func optional<W>(_ type: W.Type) -> Encoded? {
            guard let wrapped = unsafeBitCast(value, to: W?.self) else { return Encoded(stored: .null, kept: nil, kind: .none) }
            return plain(wrapped)
        }
        if V.self == Int?.self { return optional(Int.self) }
        if V.self == String?.self { return optional(String.self) }
        if V.self == Double?.self { return optional(Double.self) }
        if V.self == Int64?.self { return optional(Int64.self) }
        if V.self == Bool?.self { return optional(Bool.self) }
        if V.self == Date?.self { return optional(Date.self) }
        if V.self == Data?.self { return optional(Data.self) }
        return plain(value)
    }
}

/// The outcome of a fast typed read.
@usableFromInline
enum FastRead<T> {
    case value(T?)
    case miss
}
