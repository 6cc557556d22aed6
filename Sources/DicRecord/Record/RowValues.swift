/// The stored values of one record: a window on storage that a fetch shares between many rows.
///
/// `find` copies its rows into a few large blocks of values (`RowStorage`) instead of one array
/// per row: a result of 100,000 rows makes a few hundred allocations, not 100,000, and frees
/// them as fast. Each record views its own window of a block. A block is never written while it
/// is shared; the first write to a record's values copies its window into storage of its own
/// (copy on write), so records of one fetch never see each other's writes. A record that outlives
/// the others of its fetch keeps its block alive (at most `RowStorage.blockValues` values, 96 KiB).
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

    init<S: Sequence<DatabaseValue>>(_ values: S) {
        self.init(ContiguousArray(values))
    }

    @inlinable var startIndex: Int { 0 }
    @inlinable var endIndex: Int { Int(length) }
    @inlinable var count: Int { Int(length) }

    @inlinable
    subscript(position: Int) -> DatabaseValue {
        get {
            precondition(position >= 0 && position < Int(length), "column index out of range")
            return storage.values[Int(start) &+ position]
        }
        set {
            precondition(position >= 0 && position < Int(length), "column index out of range")
            makeUnique()
            storage.values[position] = newValue
        }
    }

    mutating func append(_ value: DatabaseValue) {
        makeUnique()
        storage.values.append(value)
        length += 1
    }

    /// Overwrites the values in place when they are this view's alone (as `Db.each` refills its
    /// record); otherwise gives the view new storage.
    @inline(__always)
    mutating func overwrite(count: Int, _ value: (Int) -> DatabaseValue) {
        if isKnownUniquelyReferenced(&storage), start == 0, storage.values.count == count {
            storage.values.withUnsafeMutableBufferPointer { buffer in
                for i in 0..<count { buffer[i] = value(i) }
            }
            length = Int32(count)
        } else {
            self = RowValues(ContiguousArray((0..<count).map(value)))
        }
    }

    /// Gives the view storage of its own (holding exactly its values) unless it has it already.
    @usableFromInline
    mutating func makeUnique() {
        if isKnownUniquelyReferenced(&storage), start == 0, storage.values.count == Int(length) { return }
        self = RowValues(ContiguousArray(self))
    }
}

/// A block of stored values shared by the records of one fetch (see `RowValues`). Written only by
/// the view that holds the sole reference to it, so sharing it between threads is safe.
@usableFromInline
final class RowStorage: @unchecked Sendable {
    /// (The sole-reference rule makes access exclusive, so the runtime's dynamic exclusivity
    /// checks, which cost more than the reads, are turned off.)
    @usableFromInline @exclusivity(unchecked) var values: ContiguousArray<DatabaseValue>

    /// The most values a fetch puts in one block (4,096 × 24 bytes: 96 KiB, under the size at
    /// which the C allocator maps memory for each allocation).
    static let blockValues = 4096

    init(_ values: ContiguousArray<DatabaseValue>) {
        self.values = values
    }
}

extension Statement {
    /// The current row and every remaining one, as records sharing blocks of values. The caller
    /// has stepped to the first row; `check` runs before each row (cancellation).
    func records(layout: RowLayout, arguments: Arguments, connection: Connection,
                 check: () throws -> Void) throws -> [Record] {
        var records: [Record] = []
        let columns = Int(columnCount)
        guard columns > 0 else {
            // Rows without columns: nothing to store, one empty record per row.
            repeat {
                try check()
                records.append(Record(layout: layout, values: RowValues([])))
            } while try connection.step(self, arguments)
            return records
        }
        // Blocks start small (a short result wastes little) and double up to `blockValues`.
        let maxRows = max(1, RowStorage.blockValues / columns)
        var rowsPerBlock = min(8, maxRows)
        var hasRow = true
        while hasRow {
            var rows = 0
            // Filled in place: no capacity or uniqueness check per value. The count of
            // initialized values is kept exact, so a throw (cancellation, an I/O error in step)
            // frees exactly what was copied.
            let block = try ContiguousArray<DatabaseValue>(unsafeUninitializedCapacity: rowsPerBlock * columns) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                while hasRow && rows < rowsPerBlock {
                    try check()
                    for i in 0..<columns {
                        (base + initialized).initialize(to: value(at: Int32(i)))
                        initialized += 1
                    }
                    rows += 1
                    hasRow = try connection.step(self, arguments)
                }
            }
            let storage = RowStorage(block)
            for row in 0..<rows {
                records.append(Record(layout: layout, values: RowValues(storage: storage, start: row * columns, count: columns)))
            }
            rowsPerBlock = min(rowsPerBlock * 2, maxRows)
        }
        return records
    }
}
