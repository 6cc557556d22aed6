import Foundation

// Reading a statement's result into records: the layout the rows share, one row's values
// (findFirst, each), and `find`'s loop that reads every value of every row into the compact
// blocks of `RowStorage`. The SQLite layer hands values over; this file decides how records
// hold them.

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
        let count = columnCount
        let values = ContiguousArray<DatabaseValue>(unsafeUninitializedCapacity: Int(count)) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            for i in 0..<count { (base + Int(i)).initialize(to: value(at: i)) }
            initialized = Int(count)
        }
        let row = RowValues(values)
        if let invalidTexts = takeInvalidTexts() { row.storage.invalidTexts = invalidTexts }
        return row
    }

    /// The current row and every remaining one, as records sharing compact blocks. The caller
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
            let storage = RowStorage(tags: tags, payloads: payloads, objects: objects, invalidTexts: invalidTexts)
            for row in 0..<rows {
                records.append(Record(layout: layout, values: RowValues(storage: storage, start: row * columns, count: columns)))
            }
            // A block that ended on its text and blob bytes sets the size of the next (large
            // values: fewer rows per block, no payload room left unused); others double.
            rowsPerBlock = hasRow && rows < rowsPerBlock ? rows : min(rowsPerBlock * 2, maxRows)
        }
        return records
    }
}
