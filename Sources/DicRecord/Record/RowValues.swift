import Foundation

/// The stored values of one record: a window on storage that a fetch shares between many rows.
///
/// `find` copies its rows into a few large blocks (`RowStorage`) instead of one array per row:
/// a result of 100,000 rows makes a few hundred allocations, not 100,000. A block is compact: per
/// value one tag byte and a payload (the integer, the double's bits, or where a TEXT or BLOB value
/// sits in the block's list of them) of 4 bytes when every payload of the block fits in 32 bits
/// (integers in `Int32`'s range; a REAL's bits almost never do) and 8 otherwise: 5 or 9 bytes for
/// a number instead of the 24 of a `DatabaseValue`. Each record (or fetched model) views its own window of a block. A block is never written; the
/// first write to a record's values copies its window into storage of its own (an array of
/// `DatabaseValue`, copy on write), so records of one fetch never see each other's writes. A
/// record that outlives the others of its fetch keeps its block alive: at most
/// `RowStorage.blockValues` values (20 KiB, or 36 with 8-byte payloads) and, past
/// `RowStorage.blockObjectBytes` of text and blobs, the rest of the row that crossed it.
@usableFromInline
struct RowValues: RandomAccessCollection, @unchecked Sendable {
    @usableFromInline var storage: RowStorage
    @usableFromInline var start: Int32
    @usableFromInline var length: Int32

    /// A window of `length` values at `start` in `storage`.
    init(storage: RowStorage, start: Int, count: Int) {
        self.storage = storage
        self.start = Int32(start)
        self.length = Int32(count)
    }

    /// Values of their own.
    init(_ values: ContiguousArray<DatabaseValue>) {
        self.init(storage: RowStorage.array(values, capacity: values.capacity), start: 0, count: values.count)
    }

    /// `count` values of their own, each written in place (`value(i)` for the i-th).
    @inline(__always)
    init(count: Int, _ value: (Int) throws -> DatabaseValue) rethrows {
        let storage = RowStorage.array(EmptyCollection(), capacity: count)
        let elements = storage.elements
        for i in 0..<count {
            (elements + i).initialize(to: try value(i))
            // Counted as it goes: a throw leaves the storage holding what was written.
            storage.headerPointer.pointee.count = i + 1
        }
        self.init(storage: storage, start: 0, count: count)
    }

    /// No values: one storage that every empty record starts from (the first write gives a
    /// record storage of its own, as it does a record sharing a fetched block).
    static let empty = RowValues(ContiguousArray())

    init<S: Sequence<DatabaseValue>>(_ values: S) {
        self.init(ContiguousArray(values))
    }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { Int(length) }
    @inlinable var count: Int { Int(length) }

    /// `position` must be in `0..<count`, which the library guarantees: every caller takes it
    /// from the record's own layout (whose names match its values one for one) or checks
    /// `indices` first. The check keeps a wrong position from reading a neighbour's row in a
    /// shared block; an out-of-range array subscript traps the same way.
    @inlinable
    subscript(position: Int) -> DatabaseValue {
        @inline(__always) get {
            precondition(position >= 0 && position < Int(length), "column index out of range")
            return storage.value(at: Int(start) &+ position)
        }
        set {
            precondition(position >= 0 && position < Int(length), "column index out of range")
            makeUnique()
            storage.setValue(newValue, at: position)
            if storage.invalidTexts != nil { storage.invalidTexts![position] = nil }
        }
    }

    /// The stored bytes of the TEXT value at `position` when they are not UTF-8 (the value
    /// itself holds them with U+FFFD replacements); nil for every other value.
    func invalidText(at position: Int) -> Data? {
        guard let invalidTexts = storage.invalidTexts, position >= 0, position < Int(length) else { return nil }
        return invalidTexts[Int(start) &+ position]
    }

    /// The stored bytes of every TEXT value that is not UTF-8, by position; nil when there is
    /// none (as almost always).
    var invalidTexts: [Int: Data]? {
        guard let all = storage.invalidTexts else { return nil }
        var mine: [Int: Data] = [:]
        for (index, bytes) in all where index >= Int(start) && index < Int(start) + Int(length) {
            mine[index - Int(start)] = bytes
        }
        return mine.isEmpty ? nil : mine
    }

    /// `body` given the values as one buffer, read in place, when they are an array (not a
    /// fetch's block); nil, without calling `body`, otherwise.
    @inline(__always)
    func withContiguousValues<R>(_ body: (UnsafeBufferPointer<DatabaseValue>) throws -> R) rethrows -> R? {
        guard storage.isArray else { return nil }
        return try storage.withValues(start: Int(start), count: Int(length), body)
    }

    /// The values as a new array (a copy: the array form's values lie in their storage object,
    /// which no `Array` can share).
    var array: [DatabaseValue] {
        if storage.isArray { return storage.withValues(start: Int(start), count: Int(length)) { Array($0) } }
        return (0..<Int(length)).map { storage.value(at: Int(start) &+ $0) }
    }

    /// The storage class of the value at `position`, read from a block's tag without
    /// materializing the value (a model's load checks every column of every row with it).
    /// `position` is in range by the library's guarantee, as for the subscript: its one caller
    /// takes it from the positions of the record's own layout (`ModelSchema.checkStoredValues`
    /// compares the layouts first).
    @inline(__always)
    func storageClass(at position: Int) -> StorageType? {
        precondition(position >= 0 && position < Int(length), "column index out of range")
        let index = Int(start) &+ position
        if storage.isArray { return storage.value(at: index).storageType }
        switch storage.tags[index] {
        case .null: return nil
        case .integer: return .integer
        case .real: return .real
        case .object:
            if case .text = storage.objects[Int(storage.payload(at: index))] { return .text }
            return .blob
        }
    }

    /// These values without the columns at `positions` (keeping the bytes of non-UTF-8 TEXT).
    func removing(_ positions: Set<Int>) -> RowValues {
        var kept = ContiguousArray<DatabaseValue>()
        var invalidTexts: [Int: Data] = [:]
        for i in 0..<count where !positions.contains(i) {
            if let bytes = invalidText(at: i) { invalidTexts[kept.count] = bytes }
            kept.append(self[i])
        }
        let row = RowValues(kept)
        if !invalidTexts.isEmpty { row.storage.invalidTexts = invalidTexts }
        return row
    }

    /// Appends `value`; when the storage is full, makes room for at least `expected` values.
    mutating func append(_ value: DatabaseValue, expected: @autoclosure () -> Int = 0) {
        if !ownsArray { makeUnique(room: expected()) }
        // A record built one column at a time: room for 8 at once (or as many as expected), not 1, 2, 4, 8.
        if storage.count == storage.arrayCapacity {
            storage = storage.movedOut(capacity: Swift.max(8, storage.count * 2, expected()))
        }
        storage.append(value)
        length += 1
    }

    /// How many values the view's own storage holds before it must grow (its count when the
    /// storage is shared).
    var capacity: Int {
        storage.isArray && start == 0 && storage.count == Int(length) ? storage.arrayCapacity : Int(length)
    }

    /// Overwrites the values in place when they are this view's alone (as `Db.each` refills its
    /// record); otherwise gives the view new storage.
    /// The bytes of non-UTF-8 TEXT of the old values are dropped (`setInvalidTexts(_:)` sets the new ones).
    @inline(__always)
    mutating func overwrite(count: Int, _ value: (Int) -> DatabaseValue) {
        if isKnownUniquelyReferenced(&storage), storage.isArray, start == 0, storage.count == count {
            storage.overwrite(count: count, value)
            length = Int32(count)
        } else {
            self = RowValues(count: count, value)
        }
        if storage.invalidTexts != nil { storage.invalidTexts = nil }
    }

    /// Sets the bytes of the values' non-UTF-8 TEXT, by position, on storage of this view's own
    /// (a refilled record's, see `overwrite`). Guaranteed by the library: its one caller,
    /// `Record.reloaded(invalidTexts:)`, runs right after `overwrite` gave the view an array of
    /// its own; the check keeps bytes from landing on a block other records share.
    func setInvalidTexts(_ invalidTexts: [Int: Data]) {
        precondition(storage.isArray && start == 0, "invalid texts are kept on a view's own storage")
        storage.invalidTexts = invalidTexts
    }

    /// Whether the view has an array of its own holding exactly its values (it may write them).
    private var ownsArray: Bool {
        mutating get { isKnownUniquelyReferenced(&storage) && storage.isArray && start == 0 && storage.count == Int(length) }
    }

    /// Gives the view an array of its own (holding exactly its values, with room for `room`)
    /// unless it has it already.
    @usableFromInline
    mutating func makeUnique(room: Int = 0) {
        if ownsArray { return }
        // Room for two more: the first write to a record often adds a column (a generated key).
        let old = storage, first = Int(start)
        let copy = RowStorage.array((0..<Int(length)).lazy.map { old.value(at: first &+ $0) }, capacity: Swift.max(Int(length) + 2, room))
        let invalidTexts = storage.invalidTexts.map { all in
            all.compactMap { (index: Int, bytes: Data) in
                index >= Int(start) && index < Int(start) + Int(length) ? (index - Int(start), bytes) : nil
            }
        }
        self = RowValues(storage: copy, start: 0, count: Int(length))
        if let invalidTexts, !invalidTexts.isEmpty { storage.invalidTexts = Dictionary(uniqueKeysWithValues: invalidTexts) }
    }
}

/// The kinds of value a block stores (`RowStorage.Tag`).
@usableFromInline
enum RowTag: UInt8, Sendable {
    case null, integer, real, object
}

/// A block's payloads: 4 bytes each, sign-extended when read, when every one of the block fits in
/// 32 bits (`RowStorage.block`); else 8.
@usableFromInline
enum BlockPayloads {
    case narrow(ContiguousArray<UInt32>)
    case wide(ContiguousArray<UInt64>)

    /// Whether the payloads are kept in 4 bytes each.
    var isNarrow: Bool {
        if case .narrow = self { return true }
        return false
    }
}

/// What a `RowStorage` holds besides its array form's values (which follow it in the same
/// allocation).
@usableFromInline
struct RowStorageHeader {
    /// The array form: how many values are initialized, and room for how many.
    @usableFromInline var count: Int
    @usableFromInline var capacity: Int
    /// The array form (kept in the object itself: telling the forms apart loads nothing more).
    @usableFromInline let isArray: Bool
    /// The stored bytes of TEXT values that are not UTF-8, by value index (as `value(at:)`
    /// counts); nil when there is none, as almost always. Set once when the storage is filled,
    /// or by the view that owns an array storage.
    @usableFromInline var invalidTexts: [Int: Data]?
    /// The block form, one entry per value; empty in the array form (a block is never empty).
    @usableFromInline let tags: ContiguousArray<RowTag>
    /// The block form's payloads, one per value, in one of two widths (one reference: the header
    /// is no larger than with one width, `RowStorageHeader`'s size is pinned by a test).
    @usableFromInline let payloads: BlockPayloads
    /// A block's TEXT and BLOB values; their payload is their position here.
    @usableFromInline let objects: ContiguousArray<DatabaseValue>
}

/// Values viewed by `RowValues`: either an array of `DatabaseValue` that one view owns and may
/// write, or a compact block of many rows that a fetch fills once and no one writes after.
/// The array form's values lie in the storage object itself, after its header: a record built
/// or written is one allocation fewer than with an array of its own. The sole-reference rule
/// makes every write exclusive (`RowValues.ownsArray`), so sharing a storage between threads is
/// safe (`RowValues` says so for it: `ManagedBuffer` declares no `Sendable`).
@usableFromInline
final class RowStorage: ManagedBuffer<RowStorageHeader, DatabaseValue> {
    @usableFromInline typealias Tag = RowTag

    /// The most values a fetch puts in one block (4,096 × 5 or 9 bytes).
    static let blockValues = 4096
    /// A block ends after the row that brings its TEXT and BLOB bytes past this, so that a record
    /// kept from a large result keeps little of its neighbours' text alive.
    static let blockObjectBytes = 64 * 1024

    /// A storage of `header`, with room for `capacity` values.
    ///
    /// Unsafe, fenced: `create` allocates an instance of the class it is called on (`ManagedBuffer`'s
    /// documented contract), typed as its superclass; the downcast only restores the type.
    /// `FetchStorageTests.theStorageIsItsOwnClass` fails if an instance of another class comes back.
    private static func make(_ header: RowStorageHeader, capacity: Int) -> RowStorage {
        unsafeDowncast(create(minimumCapacity: capacity) { _ in header }, to: RowStorage.self)
    }

    /// An array storage holding `values`, with room for at least `capacity`.
    static func array<C: Collection<DatabaseValue>>(_ values: C, capacity: Int = 0) -> RowStorage {
        let room = Swift.max(values.count, capacity)
        let storage = make(RowStorageHeader(count: 0, capacity: room, isArray: true, invalidTexts: nil,
                                            tags: [], payloads: .wide([]), objects: []), capacity: room)
        let elements = storage.elements
        var i = 0
        for value in values {
            // A collection's count is its length; this guards one that lies (past it is not ours).
            precondition(i < room, "a collection of values longer than its count")
            (elements + i).initialize(to: value)
            i += 1
            storage.headerPointer.pointee.count = i
        }
        return storage
    }

    /// A block of rows a fetch filled: `payloads` are kept 4 bytes each when they all fit (a
    /// copy, made while the block is still in the cache), else as they are.
    static func block(tags: ContiguousArray<Tag>, payloads: ContiguousArray<UInt64>, objects: ContiguousArray<DatabaseValue>,
                      invalidTexts: [Int: Data]? = nil) -> RowStorage {
        precondition(tags.count == payloads.count, "a tag for each payload")
        let narrow = fitNarrow(payloads)
        return make(RowStorageHeader(count: 0, capacity: 0, isArray: false, invalidTexts: invalidTexts, tags: tags,
                                     payloads: narrow.map(BlockPayloads.narrow) ?? .wide(payloads), objects: objects), capacity: 0)
    }

    /// `payloads` as 32-bit values that sign-extend back to the same 64 bits, or nil when one
    /// would not. Only the bits matter, whatever the tag: integers in `Int32`'s range, a NULL's
    /// 0, an object's position in a block of at most `blockValues`, and the rare REAL whose bits
    /// fit (0.0) come back the same. (The inner loops are branch-free, and vectorize.)
    private static func fitNarrow(_ payloads: ContiguousArray<UInt64>) -> ContiguousArray<UInt32>? {
        let fits = payloads.withUnsafeBufferPointer { payloads in
            // In range when adding 2^31 leaves the value under 2^32. By 64 values: a block of
            // REALs stops at its first.
            var start = 0
            while start < payloads.count {
                let end = min(start + 64, payloads.count)
                var over: UInt64 = 0
                for i in start..<end { over |= (payloads[i] &+ 0x8000_0000) >> 32 }
                if over != 0 { return false }
                start = end
            }
            return true
        }
        guard fits else { return nil }
        return ContiguousArray(unsafeUninitializedCapacity: payloads.count) { narrow, count in
            payloads.withUnsafeBufferPointer { payloads in
                for i in payloads.indices { narrow[i] = UInt32(truncatingIfNeeded: payloads[i]) }
            }
            count = payloads.count
        }
    }

    deinit {
        // One by one, in code specialized for `DatabaseValue`: `deinitialize(count:)` goes through
        // the runtime's generic array destroy, about 40 instructions a value, where a number here
        // is a tag test (7). Only TEXT and BLOB values hold anything to release.
        let elements = self.elements
        for i in 0..<fields.count {
            switch elements[i] {
            case .null, .integer, .real: continue
            case .text, .blob: _ = (elements + i).move()
            }
        }
    }

    /// The header and the values, reached without `ManagedBuffer`'s accessors: each of those
    /// begins a dynamically checked access to its stored `header` (`swift_beginAccess`, about
    /// 200 instructions), where the fields this replaced were read with the checks off.
    ///
    /// Unsafe, fenced: an object starts with the runtime's two-word object header, and
    /// `ManagedBuffer`'s one stored property, `header`, follows at its alignment; the values
    /// follow the instance at theirs. `FetchStorageTests.theHeaderAndValuesLieWhereTheBufferPutsThem`
    /// compares both addresses with the ones `ManagedBuffer` gives.
    @inlinable static var headerOffset: Int {
        let alignment = MemoryLayout<RowStorageHeader>.alignment
        return (2 * MemoryLayout<Int>.size + alignment - 1) & ~(alignment - 1)
    }
    @inlinable static var elementsOffset: Int {
        let alignment = MemoryLayout<DatabaseValue>.alignment
        return (headerOffset + MemoryLayout<RowStorageHeader>.size + alignment - 1) & ~(alignment - 1)
    }
    /// The header (`ManagedBuffer.header` without its checked access).
    @inlinable var fields: RowStorageHeader {
        @inline(__always) _read { yield headerPointer.pointee }
    }
    @inlinable var headerPointer: UnsafeMutablePointer<RowStorageHeader> {
        @inline(__always) get {
            (UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque()) + Self.headerOffset)
                .assumingMemoryBound(to: RowStorageHeader.self)
        }
    }
    @inlinable var elements: UnsafeMutablePointer<DatabaseValue> {
        @inline(__always) get {
            (UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque()) + Self.elementsOffset)
                .assumingMemoryBound(to: DatabaseValue.self)
        }
    }

    @inlinable var isArray: Bool { fields.isArray }
    @inlinable var tags: ContiguousArray<Tag> { _read { yield fields.tags } }
    /// The payload of the block form's value at `index`, whichever its width.
    @inlinable @inline(__always)
    func payload(at index: Int) -> UInt64 {
        switch fields.payloads {
        case .narrow(let payloads): return UInt64(bitPattern: Int64(Int32(bitPattern: payloads[index])))
        case .wide(let payloads): return payloads[index]
        }
    }
    @inlinable var objects: ContiguousArray<DatabaseValue> { _read { yield fields.objects } }
    /// The array form's values: how many there are, and room for how many.
    @inlinable var count: Int { fields.count }
    var arrayCapacity: Int { fields.capacity }
    @usableFromInline var invalidTexts: [Int: Data]? {
        _read { yield fields.invalidTexts }
        _modify { yield &headerPointer.pointee.invalidTexts }
    }

    @inlinable @inline(__always)
    func value(at index: Int) -> DatabaseValue {
        if isArray {
            // The array form's bounds, as an array's subscript checks them.
            precondition(index >= 0 && index < fields.count, "value index out of range")
            return elements[index]
        }
        switch tags[index] {
        case .integer: return .integer(Int64(bitPattern: payload(at: index)))
        case .real: return .real(Double(bitPattern: payload(at: index)))
        case .object: return objects[Int(payload(at: index))]
        case .null: return .null
        }
    }

    /// Writes the array form's value at `index` (the caller owns the storage).
    @usableFromInline func setValue(_ value: DatabaseValue, at index: Int) {
        precondition(isArray && index >= 0 && index < fields.count, "value index out of range")
        elements[index] = value
    }

    /// Appends to the array form, which has room (the caller owns the storage).
    func append(_ value: DatabaseValue) {
        let header = headerPointer
        precondition(header.pointee.isArray && header.pointee.count < header.pointee.capacity, "no room to append")
        (elements + header.pointee.count).initialize(to: value)
        header.pointee.count += 1
    }

    /// The array form's values moved into a new storage with room for `capacity`; this one is
    /// left empty (the caller owns it and drops it).
    func movedOut(capacity: Int) -> RowStorage {
        let room = Swift.max(capacity, count)
        let grown = RowStorage.make(RowStorageHeader(count: 0, capacity: room, isArray: true, invalidTexts: invalidTexts,
                                                     tags: [], payloads: .wide([]), objects: []), capacity: room)
        grown.elements.moveInitialize(from: elements, count: fields.count)
        grown.headerPointer.pointee.count = fields.count
        headerPointer.pointee.count = 0
        return grown
    }

    /// The array form's values `start..<start + count` as a buffer, for `body`.
    @inline(__always)
    func withValues<R>(start: Int, count: Int, _ body: (UnsafeBufferPointer<DatabaseValue>) throws -> R) rethrows -> R {
        precondition(isArray && start >= 0 && count >= 0 && start + count <= fields.count, "values out of range")
        return try body(UnsafeBufferPointer(start: elements + start, count: count))
    }

    /// Overwrites the array form's values `0..<count` in place (the caller owns the storage).
    @inline(__always)
    func overwrite(count: Int, _ value: (Int) -> DatabaseValue) {
        precondition(isArray && count <= fields.count, "values out of range")
        let elements = self.elements
        for i in 0..<count { elements[i] = value(i) }
    }
}

/// The rows of a query as windows on compact blocks, with the layout they share (nil when there
/// are no rows): what a dao makes its models of (and `find` its records, on another engine).
struct FetchedRows {
    let layout: RowLayout?
    let rows: [RowValues]
}
