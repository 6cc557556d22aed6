import Foundation

// Reading a statement's result into records (and a dao's models): the layout the rows share, one
// row's values (findFirst, each), and `find`'s loop that reads every value of every row into the
// compact blocks of `RowStorage`. The SQLite layer hands values over; this file decides how rows
// are held.

extension Statement {
    /// The layout for the current result columns; made once per statement (again after SQLite
    /// re-prepares it) and shared by all its rows. It carries the statement's SQL, the config and
    /// the logger, for the warning of a typed read that misses.
    func rowLayout(_ connection: Connection) -> RowLayout {
        let registry = connection.registry
        return resultShape({ (layout: RowLayout) in layout.registry === registry }) {
            let origin = ReadOrigin(sql: sql, configName: connection.configName, reporter: connection.tracer.reads)
            return RowLayout(names: columnNames(), registry: registry, origin: origin)
        }
    }

    /// The current row's values in column order (with the bytes of TEXT that is not UTF-8).
    /// Written straight into the new buffer: no capacity or uniqueness check per value.
    @inline(__always)
    func rowValues() -> RowValues {
        let row = RowValues(count: Int(columnCount)) { value(at: Int32($0)) }
        if let invalidTexts = takeInvalidTexts() { row.storage.invalidTexts = invalidTexts }
        return row
    }

    /// The current row and every remaining one, as windows on compact blocks, each made into
    /// an element by `make` (a record for `find`, the row itself for a dao). The caller has
    /// stepped to the first row; `check` runs before each row (cancellation).
    @inline(__always)
    func rows<Element>(arguments: Arguments, connection: Connection, check: () throws -> Void,
                       make: (RowValues) -> Element) throws -> [Element] {
        var records: [Element] = []
        let columns = Int(columnCount)
        guard columns > 0 else {
            // Rows without columns: nothing to store, one empty row per row.
            repeat {
                try check()
                records.append(make(RowValues([])))
            } while try connection.step(self, arguments)
            return records
        }
        // Blocks start small (a short result wastes little) and double up to `blockValues`.
        let maxRows = max(1, RowStorage.blockValues / columns)
        var rowsPerBlock = min(8, maxRows)
        var hasRow = true
        // TEXT and BLOB values per row in the previous block: the next block reserves room for
        // as many, instead of growing its list value by value.
        var objectsPerRow = 0
        while hasRow {
            var rows = 0
            var objects = ContiguousArray<DatabaseValue>()
            objects.reserveCapacity(objectsPerRow * rowsPerBlock)
            var invalidTexts: [Int: Data]?
            var tags = ContiguousArray<RowStorage.Tag>()
            let capacity = rowsPerBlock * columns
            // Filled in place: no capacity or uniqueness check per value (tags and payloads are
            // plain bytes, so a throw midway leaves nothing to clean up but `objects`).
            let payloads = try ContiguousArray<UInt64>(unsafeUninitializedCapacity: capacity) { payloadBuffer, payloadCount in
                tags = try ContiguousArray<RowStorage.Tag>(unsafeUninitializedCapacity: capacity) { tagBuffer, tagCount in
                    var objectBytes = 0
                    while hasRow && rows < rowsPerBlock && objectBytes <= RowStorage.blockObjectBytes {
                        try check()
                        for i in 0..<Int32(columns) {
                            let read = compactValue(at: i)
                            switch read.kind {
                            case .integer:
                                tagBuffer[tagCount] = .integer
                                payloadBuffer[payloadCount] = read.bits
                            case .real:
                                tagBuffer[tagCount] = .real
                                payloadBuffer[payloadCount] = read.bits
                            case .null:
                                tagBuffer[tagCount] = .null
                                payloadBuffer[payloadCount] = 0
                            case .object:
                                let object = compactObject(read.value, at: i)
                                tagBuffer[tagCount] = .object
                                payloadBuffer[payloadCount] = UInt64(objects.count)
                                objects.append(object.value)
                                objectBytes += object.bytes
                            }
                            tagCount += 1
                            payloadCount += 1
                        }
                        if let found = takeInvalidTexts() {
                            // By index in the block: the row's first value is `columns` back.
                            let rowStart = tagCount - columns
                            var kept = invalidTexts ?? [:]
                            for (column, bytes) in found { kept[rowStart + column] = bytes }
                            invalidTexts = kept
                        }
                        rows += 1
                        hasRow = try connection.step(self, arguments)
                    }
                }
            }
            objectsPerRow = (objects.count + rows - 1) / rows
            let storage = RowStorage.block(tags: tags, payloads: payloads, objects: objects, invalidTexts: invalidTexts)
            for row in 0..<rows {
                records.append(make(RowValues(storage: storage, start: row * columns, count: columns)))
            }
            // A block that ended on its text and blob bytes sets the size of the next (large
            // values: fewer rows per block, no payload room left unused); others double.
            rowsPerBlock = hasRow && rows < rowsPerBlock ? rows : min(rowsPerBlock * 2, maxRows)
        }
        return records
    }
}

/// What `Db.streamRows` gives back: the elements made from the rows as they were stepped, or
/// the rows (when the layout was not taken, or on another engine).
enum StreamedRows<Element> {
    case streamed(ContiguousArray<Element>)
    case rows(FetchedRows)
}

/// The current row of a statement being stepped, read in place.
struct SteppedRow {
    private let statement: Statement

    init(statement: Statement) {
        self.statement = statement
    }

    /// The storage class of the value at `position` and, for INTEGER and REAL, its bits (an
    /// integer's, or a Double's bit pattern). TEXT and BLOB are `.object`, and are not read.
    @inline(__always)
    func number(at position: Int) -> (tag: RowTag, bits: UInt64) {
        let read = statement.compactValue(at: Int32(position))
        switch read.kind {
        case .integer: return (.integer, read.bits)
        case .real: return (.real, read.bits)
        case .null: return (.null, 0)
        case .object: return (.object, 0)
        }
    }

    /// Every value of the row, as `findFirst` reads them.
    func values() -> RowValues { statement.rowValues() }
}

/// Rows of another engine's result in compact blocks, as `Statement.rows` makes them for
/// SQLite: the engine hands over one row of values at a time (which this does not keep), and
/// the rows of a block share one `RowStorage`.
struct RowBlockBuilder {
    private let columns: Int
    private let maxRows: Int
    private var rowsPerBlock: Int
    private var rows = 0
    private var objectBytes = 0
    private var tags = ContiguousArray<RowStorage.Tag>()
    private var payloads = ContiguousArray<UInt64>()
    private var objects = ContiguousArray<DatabaseValue>()
    private(set) var finished: [RowValues] = []

    init(columns: Int) {
        self.columns = columns
        maxRows = max(1, RowStorage.blockValues / max(1, columns))
        rowsPerBlock = min(8, maxRows)
        reserve()
    }

    var count: Int { finished.count + rows }

    mutating func append(_ values: [DatabaseValue]) {
        assert(values.count == columns, "a row of \(values.count) values for \(columns) columns")
        guard columns > 0 else {
            finished.append(RowValues([]))
            return
        }
        for value in values {
            switch value {
            case .null:
                tags.append(.null)
                payloads.append(0)
            case .integer(let integer):
                tags.append(.integer)
                payloads.append(UInt64(bitPattern: integer))
            case .real(let real):
                tags.append(.real)
                payloads.append(real.bitPattern)
            case .text(let text):
                tags.append(.object)
                payloads.append(UInt64(objects.count))
                objects.append(value)
                objectBytes += text.utf8.count
            case .blob(let blob):
                tags.append(.object)
                payloads.append(UInt64(objects.count))
                objects.append(value)
                objectBytes += blob.count
            }
        }
        rows += 1
        if rows == rowsPerBlock || objectBytes > RowStorage.blockObjectBytes { flush() }
    }

    /// Every row appended.
    mutating func finish() -> [RowValues] {
        if rows > 0 { flush(last: true) }
        return finished
    }

    private mutating func flush(last: Bool = false) {
        let storage = RowStorage.block(tags: tags, payloads: payloads, objects: objects)
        for row in 0..<rows {
            finished.append(RowValues(storage: storage, start: row * columns, count: columns))
        }
        // As in `Statement.rows`: a block that ended on its bytes sets the next one's size, others double.
        rowsPerBlock = rows < rowsPerBlock ? rows : min(rowsPerBlock * 2, maxRows)
        guard !last else { return }
        let objectsPerRow = (objects.count + rows - 1) / rows
        rows = 0
        objectBytes = 0
        tags = []
        payloads = []
        objects = []
        reserve(objectsPerRow: objectsPerRow)
    }

    private mutating func reserve(objectsPerRow: Int = 0) {
        tags.reserveCapacity(rowsPerBlock * columns)
        payloads.reserveCapacity(rowsPerBlock * columns)
        objects.reserveCapacity(objectsPerRow * rowsPerBlock)
    }
}
