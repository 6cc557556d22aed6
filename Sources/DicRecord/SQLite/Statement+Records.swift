import CSQLite
import Foundation

// Reading a result into records: the one loop of `find` that reads every value of every row,
// straight from SQLite's values into the compact blocks of `RowStorage` (see RowValues.swift).
// It lives in the SQLite layer because it calls SQLite's value readers.

extension Statement {
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
                            guard let value = sqlite3_column_value(handle, i) else {
                                tagBuffer[tagCount] = .null
                                payloadBuffer[payloadCount] = 0
                                tagCount += 1
                                payloadCount += 1
                                continue
                            }
                            let type = sqlite3_value_type(value)
                            switch type {
                            case SQLITE_INTEGER:
                                tagBuffer[tagCount] = .integer
                                payloadBuffer[payloadCount] = UInt64(bitPattern: sqlite3_value_int64(value))
                            case SQLITE_FLOAT:
                                tagBuffer[tagCount] = .real
                                payloadBuffer[payloadCount] = sqlite3_value_double(value).bitPattern
                            case SQLITE_NULL:
                                tagBuffer[tagCount] = .null
                                payloadBuffer[payloadCount] = 0
                            default:
                                tagBuffer[tagCount] = .object
                                payloadBuffer[payloadCount] = UInt64(objects.count)
                                objects.append(decode(value, type: type, column: Int(i)))
                                objectBytes += Int(sqlite3_value_bytes(value))
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
