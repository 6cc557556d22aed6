import Foundation

/// The stored values of one record: a window on storage that a fetch shares between many rows.
///
/// `find` copies its rows into a few large blocks (`RowStorage`) instead of one array per row:
/// a result of 100,000 rows makes a few hundred allocations, not 100,000. A block is compact: per
/// value one tag byte and 8 bytes (the integer, the double's bits, or where a TEXT or BLOB value
/// sits in the block's list of them), 9 bytes for a number instead of the 24 of a
/// `DatabaseValue`. Each record (or fetched model) views its own window of a block. A block is never written; the
/// first write to a record's values copies its window into storage of its own (an array of
/// `DatabaseValue`, copy on write), so records of one fetch never see each other's writes. A
/// record that outlives the others of its fetch keeps its block alive: at most
/// `RowStorage.blockValues` values (36 KiB) and, past `RowStorage.blockObjectBytes` of text and
/// blobs, the rest of the row that crossed it.
@usableFromInline
struct RowValues: RandomAccessCollection, Sendable {
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
        self.init(storage: RowStorage(values), start: 0, count: values.count)
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
            storage.values[position] = newValue
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
        return try storage.values.withUnsafeBufferPointer { all in
            try body(UnsafeBufferPointer(rebasing: all[Int(start) ..< Int(start) + Int(length)]))
        }
    }

    /// The values as an array: the storage's own (shared, no copy) when the view covers all of
    /// it, else a copy.
    var array: [DatabaseValue] {
        if storage.isArray, start == 0, storage.values.count == Int(length) { return Array(storage.values) }
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
        if storage.isArray { return storage.values[index].storageType }
        switch storage.tags[index] {
        case .null: return nil
        case .integer: return .integer
        case .real: return .real
        case .object:
            if case .text = storage.objects[Int(storage.payloads[index])] { return .text }
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
        if storage.values.count == storage.values.capacity {
            storage.values.reserveCapacity(Swift.max(8, storage.values.count * 2, expected()))
        }
        storage.values.append(value)
        length += 1
    }

    /// How many values the view's own storage holds before it must grow (its count when the
    /// storage is shared).
    var capacity: Int {
        storage.isArray && start == 0 && storage.values.count == Int(length) ? storage.values.capacity : Int(length)
    }

    /// Overwrites the values in place when they are this view's alone (as `Db.each` refills its
    /// record); otherwise gives the view new storage.
    /// The bytes of non-UTF-8 TEXT of the old values are dropped (`setInvalidTexts(_:)` sets the new ones).
    @inline(__always)
    mutating func overwrite(count: Int, _ value: (Int) -> DatabaseValue) {
        if isKnownUniquelyReferenced(&storage), storage.isArray, start == 0, storage.values.count == count {
            storage.values.withUnsafeMutableBufferPointer { buffer in
                for i in 0..<count { buffer[i] = value(i) }
            }
            length = Int32(count)
        } else {
            self = RowValues(ContiguousArray((0..<count).map(value)))
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
        mutating get { isKnownUniquelyReferenced(&storage) && storage.isArray && start == 0 && storage.values.count == Int(length) }
    }

    /// Gives the view an array of its own (holding exactly its values, with room for `room`)
    /// unless it has it already.
    @usableFromInline
    mutating func makeUnique(room: Int = 0) {
        if ownsArray { return }
        // Room for two more: the first write to a record often adds a column (a generated key).
        var copy = ContiguousArray<DatabaseValue>()
        copy.reserveCapacity(Swift.max(Int(length) + 2, room))
        for i in 0..<Int(length) { copy.append(storage.value(at: Int(start) &+ i)) }
        let invalidTexts = storage.invalidTexts.map { all in
            all.compactMap { (index: Int, bytes: Data) in
                index >= Int(start) && index < Int(start) + Int(length) ? (index - Int(start), bytes) : nil
            }
        }
        self = RowValues(copy)
        if let invalidTexts, !invalidTexts.isEmpty { storage.invalidTexts = Dictionary(uniqueKeysWithValues: invalidTexts) }
    }
}

/// Values viewed by `RowValues`: either an array of `DatabaseValue` that one view owns and may
/// write, or a compact block of many rows that a fetch fills once and no one writes after.
/// (The sole-reference rule makes every write exclusive, so sharing a storage between threads
/// is safe and the runtime's dynamic exclusivity checks, which cost more than the reads, are off.)
@usableFromInline
final class RowStorage: @unchecked Sendable {
    /// The array form; empty in a block.
    @usableFromInline @exclusivity(unchecked) var values: ContiguousArray<DatabaseValue>
    /// The block form, one entry per value; empty in the array form (a block is never empty).
    @usableFromInline let tags: ContiguousArray<Tag>
    @usableFromInline let payloads: ContiguousArray<UInt64>
    /// A block's TEXT and BLOB values; their payload is their position here.
    @usableFromInline let objects: ContiguousArray<DatabaseValue>
    /// The stored bytes of TEXT values that are not UTF-8, by value index (as `value(at:)`
    /// counts); nil when there is none, as almost always. Set once when the storage is filled,
    /// or by the view that owns an array storage.
    @usableFromInline @exclusivity(unchecked) var invalidTexts: [Int: Data]?

    @usableFromInline
    enum Tag: UInt8, Sendable {
        case null, integer, real, object
    }

    /// The most values a fetch puts in one block (4,096 × 9 bytes).
    static let blockValues = 4096
    /// A block ends after the row that brings its TEXT and BLOB bytes past this, so that a record
    /// kept from a large result keeps little of its neighbours' text alive.
    static let blockObjectBytes = 64 * 1024

    /// The array form (kept in the object itself: telling the forms apart loads nothing more).
    @usableFromInline let isArray: Bool

    init(_ values: ContiguousArray<DatabaseValue>) {
        self.values = values
        tags = []
        payloads = []
        objects = []
        isArray = true
    }

    init(tags: ContiguousArray<Tag>, payloads: ContiguousArray<UInt64>, objects: ContiguousArray<DatabaseValue>,
         invalidTexts: [Int: Data]? = nil) {
        self.invalidTexts = invalidTexts
        values = []
        self.tags = tags
        self.payloads = payloads
        self.objects = objects
        isArray = false
    }

    @inlinable @inline(__always)
    func value(at index: Int) -> DatabaseValue {
        if isArray { return values[index] }
        switch tags[index] {
        case .integer: return .integer(Int64(bitPattern: payloads[index]))
        case .real: return .real(Double(bitPattern: payloads[index]))
        case .object: return objects[Int(payloads[index])]
        case .null: return .null
        }
    }
}

/// The rows of a query as windows on compact blocks, with the layout they share (nil when there
/// are no rows): what a dao makes its models of (and `find` its records, on another engine).
struct FetchedRows {
    let layout: RowLayout?
    let rows: [RowValues]
}
