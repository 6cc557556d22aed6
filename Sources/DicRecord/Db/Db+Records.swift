/// Implementations of the table helpers, batches and pagination (transactions: Transactions.swift).
extension Db {
    func saveRecord(_ table: String, _ record: Record, primaryKey: String) throws -> Bool {
        var plan = InsertPlan(table: table, primaryKey: primaryKey)
        let context = try context()
        if let engine = try context.externalPool() {
            return try engine.write { try engineSave([record], plan: plan, on: $0, namingFailedItem: false)[0] > 0 }
        }
        return try context.pool().write { try saveRecord(record, plan: &plan, on: $0) }
    }

    /// The INSERT for one set of columns, kept while consecutive records share it (a batch).
    struct InsertPlan {
        let table: String
        let keys: [String]
        var columns: [String] = []
        var sql = ""
        var keyIsColumn: Bool?

        init(table: String, primaryKey: String) {
            self.table = table
            self.keys = SqlText.keyColumns(primaryKey)
        }

        mutating func sql(for columns: [String]) -> String {
            // By bytes: Swift's == takes the Kelvin sign for "K", which SQLite does not.
            if !sql.isEmpty && RowLayout.sameSpelling(columns, self.columns) { return sql }
            self.columns = columns
            sql = SqlText.insert(into: table, columns: columns)
            return sql
        }

    }

    func saveRecord(_ record: Record, plan: inout InsertPlan, on connection: Connection) throws -> Bool {
        try saveRecords([record], plan: &plan, on: connection)[0] > 0
    }

    /// Inserts `records` in order; consecutive records with the same columns share one prepared
    /// statement, rebound per record. A NULL key is left out so that SQLite generates it, and the
    /// generated key is written back where the table has that column. Returns the rows inserted by each.
    /// With `namingFailedItem` (a batch), an error says which record failed.
    func saveRecords(_ records: [Record], plan: inout InsertPlan, on connection: Connection,
                     namingFailedItem: Bool = false) throws -> [Int] {
        let key = plan.keys.count == 1 ? plan.keys[0] : nil
        var counts: [Int] = []
        counts.reserveCapacity(records.count)
        var next = 0
        guard namingFailedItem else { return try saveRecords(records, key: key, plan: &plan, on: connection, counts: &counts, next: &next) }
        do {
            return try saveRecords(records, key: key, plan: &plan, on: connection, counts: &counts, next: &next)
        } catch {
            // `next` is the record being saved when it threw.
            return try batchItem(next, of: records.count) { throw error }
        }
    }

    private func saveRecords(_ records: [Record], key: String?, plan: inout InsertPlan, on connection: Connection,
                             counts: inout [Int], next: inout Int) throws -> [Int] {
        while next < records.count {
            var pending: InsertRow? = try records[next].insertSnapshot(key: key)
            // (The shape only: holding the first row's values would make writing its key copy them.)
            let first = pending!.shape
            let sql = plan.sql(for: first.names)
            try connection.withStatement(sql, .none, bind: false) { statement in
                while next < records.count {
                    let record = records[next]
                    let row: InsertRow
                    if let taken = pending {
                        row = taken
                        pending = nil
                    } else {
                        row = try record.insertSnapshot(key: key, like: first)
                        guard row.shape.hasColumns(of: first) else { break }
                    }
                    let shape = row.shape
                    let rawTexts = row.rawTexts
                    counts.append(try row.withBoundValues { try connection.runPrepared(statement, $0, $1, rawTexts: rawTexts) }
                        ?? connection.runPrepared(statement, count: row.count, row.value(at:), rawTexts: rawTexts))
                    // The row's view of the values ends here: writing the key back then finds
                    // them unshared and copies nothing.
                    _ = consume row
                    var writtenKey: String?
                    if let key, shape.keyIsMissing {
                        if plan.keyIsColumn == nil { plan.keyIsColumn = connection.tableHasColumn(plan.table, key) }
                        if plan.keyIsColumn == true { writtenKey = key }
                    }
                    RollbackUndo.finishSave(record, key: writtenKey, generated: writtenKey.map { _ in .integer(connection.lastInsertRowid) },
                                            at: shape, on: connection)
                    next += 1
                }
            }
        }
        return counts
    }

    func updateRecord(_ table: String, _ record: Record, primaryKey: String) throws -> Bool {
        let keys = SqlText.keyColumns(primaryKey)
        let keyValues = try keyValues(of: record, keys: keys, table: table)
        let changes = try record.modifiedStoredColumnsWithBytes().filter { column in
            !keys.contains { RowLayout.sameColumn($0, column.name) }
        }
        guard !changes.isEmpty else { return false }
        let sql = "UPDATE \(SqlText.quote(table)) SET \(changes.map { "\(SqlText.quote($0.name)) = ?" }.joined(separator: ", ")) WHERE \(whereKeys(keys))"
        var arguments = StoredValues()
        for change in changes { arguments.append(change.name, change.value, bytes: change.bytes) }
        arguments.append(contentsOf: keyValues)
        let context = try context()
        if let engine = try context.externalPool() {
            return try engine.write { connection in
                let changed = try connection.execute(sql, arguments.encoded, row: nil).changes
                if changed > 0 { RollbackUndo.finishSave(record, key: nil, generated: nil, on: connection) }
                return changed > 0
            }
        }
        return try context.pool().write { connection in
            let changed = try connection.run(sql, .stored(arguments))
            // No row matched (deleted meanwhile?): the edits stay marked, not silently dropped.
            if changed > 0 {
                RollbackUndo.finishSave(record, key: nil, generated: nil, on: connection)
            }
            return changed > 0
        }
    }

    func deleteRecord(_ table: String, _ record: Record, primaryKey: String) throws -> Bool {
        let keys = SqlText.keyColumns(primaryKey)
        let values = try keyValues(of: record, keys: keys, table: table)
        return try deleteByKeys(table, keys: keys, values: .stored(values))
    }

    func deleteByKeys(_ table: String, keys: [String], values: Arguments) throws -> Bool {
        let sql = "DELETE FROM \(SqlText.quote(table)) WHERE \(whereKeys(keys))"
        return try updateRows(sql, values) > 0
    }

    func findByKeys(_ table: String, keys: [String], values: Arguments, columns: String) throws -> Record? {
        try findFirstRecord("SELECT \(columns) FROM \(SqlText.quote(table)) WHERE \(whereKeys(keys)) LIMIT 1", values)
    }

    /// `findById`'s SELECT. Its text is remembered per thread for the last (table, key, columns),
    /// so that a loop of lookups does not rebuild it each time.
    func findRecordById(_ table: String, _ id: DatabaseArgument, primaryKey: String, columns: String) throws -> Record? {
        let last = Self.lastFindById.current
        let sql: String
        if let known = last.value, known.table == table, known.key == primaryKey, known.columns == columns {
            sql = known.sql
        } else {
            sql = "SELECT \(columns) FROM \(SqlText.quote(table)) WHERE \(whereKeys([primaryKey])) LIMIT 1"
            last.value = (table, primaryKey, columns, sql)
        }
        return try findFirstRecord(sql, .positional([id]))
    }
    /// The last `findById` statement this thread built.
    private static let lastFindById = ThreadSlot<(table: String, key: String, columns: String, sql: String)>()

    private func whereKeys(_ keys: [String]) -> String {
        keys.map { "\(SqlText.quote($0)) = ?" }.joined(separator: " AND ")
    }

    /// The record's values of `keys`, as stored (TEXT that is not UTF-8 by its bytes: the
    /// replacement characters would match another row, or none).
    private func keyValues(of record: Record, keys: [String], table: String) throws -> StoredValues {
        guard !keys.isEmpty else {
            throw DicRecordError(.missingPrimaryKey, "no primary key column given for table '\(table)'", configName: configName)
        }
        var values = StoredValues()
        for (key, stored) in zip(keys, record.storedValues(of: keys)) {
            guard let stored, stored.value != .null else {
                throw DicRecordError(.missingPrimaryKey,
                    "the record has no value for primary key column '\(key)' of table '\(table)'", configName: configName)
            }
            values.append(key, stored)
        }
        return values
    }

    // MARK: Batches (each in a transaction: `inTransaction`, Transactions.swift)

    /// Runs `statements` atomically (joining an enclosing transaction); returns rows changed by each.
    func runBatch(_ statements: [Sql]) throws -> [Int] {
        guard !statements.isEmpty else { return [] }
        let context = try context()
        if let engine = try context.externalPool() { return try engineBatch(engine, context, statements.map { ($0.sql, $0.arguments) }) }
        return try context.pool().write { connection in
            try inTransaction(connection, {
                try statements.enumerated().map { index, statement in
                    try batchItem(index, of: statements.count) { try connection.run(statement.sql, statement.arguments) }
                }
            }, commit: { _ in true })
        }
    }

    func runBatch(_ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        guard !rows.isEmpty else { return [] }
        let context = try context()
        if let engine = try context.externalPool() { return try engineBatch(engine, context, sql, rows) }
        return try context.pool().write { connection in
            try inTransaction(connection, {
                try connection.runEach(sql, rows.map { .positional($0) })
            }, commit: { _ in true })
        }
    }

    func runBatchSave(_ table: String, _ records: [Record], primaryKey: String) throws -> [Int] {
        guard !records.isEmpty else { return [] }
        let context = try context()
        if let engine = try context.externalPool() {
            let plan = InsertPlan(table: table, primaryKey: primaryKey)
            return try engine.write { connection in
                try inTransaction(connection, { try engineSave(records, plan: plan, on: connection, namingFailedItem: true) }, commit: { _ in true })
            }
        }
        return try context.pool().write { connection in
            var plan = InsertPlan(table: table, primaryKey: primaryKey)
            return try inTransaction(connection, {
                try saveRecords(records, plan: &plan, on: connection, namingFailedItem: true)
            }, commit: { _ in true })
        }
    }

    func runBatchUpdate(_ table: String, _ records: [Record], primaryKey: String) throws -> [Int] {
        guard !records.isEmpty else { return [] }
        let context = try context()
        if let engine = try context.externalPool() {
            return try engine.write { connection in
                try inTransaction(connection, {
                    try records.enumerated().map { index, record in
                        try batchItem(index, of: records.count) { try updateRecord(table, record, primaryKey: primaryKey) ? 1 : 0 }
                    }
                }, commit: { _ in true })
            }
        }
        return try context.pool().write { connection in
            try inTransaction(connection, {
                try records.enumerated().map { index, record in
                    try batchItem(index, of: records.count) { try updateRecord(table, record, primaryKey: primaryKey) ? 1 : 0 }
                }
            }, commit: { _ in true })
        }
    }

    // MARK: Pagination

    func paginateRecords(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ arguments: Arguments, totalRow: Int? = nil) throws -> Page<Record> {
        if let totalRow, totalRow < 0 {
            throw DicRecordError(.invalidArgument, "totalRow must not be negative (got \(totalRow))", configName: configName)
        }
        return try paginate(pageNumber, pageSize, select, sqlExceptSelect, arguments, totalRow: totalRow) { sql in
            try findRecords(sql, arguments)
        }
    }

    func paginateRecords(after key: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ arguments: [DatabaseArgument], keyColumn: String, descending: Bool) throws -> KeysetPage<Record> {
        try paginateAfter(key, pageSize, select, sqlExceptSelect, arguments, keyColumn: keyColumn, descending: descending) { sql, args in
            try findRecords(sql, args)
        }
    }

    /// Keyset pagination: `SELECT * FROM (<query>) WHERE key > ? ORDER BY key LIMIT n + 1`.
    /// SQLite flattens the sub-query, so an index on the key serves the seek directly.
    func paginateAfter(_ key: DatabaseArgument, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                       _ arguments: [DatabaseArgument], keyColumn: String, descending: Bool,
                       fetch: (String, Arguments) throws -> [Record]) throws -> KeysetPage<Record> {
        guard pageSize >= 1, pageSize < Int.max else {
            throw DicRecordError(.invalidArgument, "pageSize must be at least 1 (got \(pageSize))", configName: configName)
        }
        let quotedKey = SqlText.quote(keyColumn)
        let inner = "\(select) \(SqlText.removingTrailingOrderBy(sqlExceptSelect))"
        // Line breaks, so that a trailing `--` comment in the caller's SQL ends where it should.
        var sql = "SELECT * FROM (\(inner)\n) AS dicrecord_page"   // PostgreSQL wants the sub-query named
        var args = arguments
        if key != nil {
            sql += " WHERE \(quotedKey) \(descending ? "<" : ">") ?"
            args.append(key)
        }
        sql += " ORDER BY \(quotedKey)\(descending ? " DESC" : "") LIMIT \(pageSize + 1)"
        var rows = try fetch(sql, .positional(args))
        guard rows.count > pageSize else { return KeysetPage(list: rows, nextKey: nil) }
        rows.removeLast()
        guard let last = rows.last?.storedValueWithBytes(keyColumn) else {
            throw DicRecordError(.missingColumn, "the key column '\(keyColumn)' is not in the selected columns", sql: sql, configName: configName)
        }
        // `nextKey` (a DatabaseValue) would hold such TEXT as its replacement characters, which
        // sort elsewhere: the next page would skip or repeat rows.
        guard last.bytes == nil else {
            throw DicRecordError(.unsupportedArgument,
                "the key column \"\(keyColumn)\" of the page's last row holds TEXT that is not UTF-8 (read from SQLite): as a next key it reads as U+FFFD replacement characters and would misplace the next page, so no page was returned (page by number, or select the key as a BLOB: CAST(\(SqlText.quote(keyColumn)) AS BLOB) AS \(SqlText.quote(keyColumn)))",
                sql: sql, configName: configName)
        }
        return KeysetPage(list: rows, nextKey: last.value)
    }

    /// JFinal's algorithm, fixed: a count that wraps the query (right for DISTINCT and GROUP BY),
    /// no data query past the last page, count and page read in one read transaction, on one
    /// connection (everything `fetch` reads, a dao's `didLoad` hooks included, sees that snapshot).
    func paginate<T>(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                     _ arguments: Arguments, totalRow knownTotal: Int? = nil, fetch: (String) throws -> [T]) throws -> Page<T> {
        guard pageNumber >= 1, pageSize >= 1 else {
            throw DicRecordError(.invalidArgument, "pageNumber and pageSize must be at least 1 (got \(pageNumber), \(pageSize))",
                                 sql: "\(select) \(sqlExceptSelect)", configName: configName)
        }
        // PostgreSQL wants a name for the sub-query; SQLite takes one too.
        let countSql = "SELECT count(*) FROM (\(select) \(SqlText.removingTrailingOrderBy(sqlExceptSelect))\n) AS dicrecord_count"
        let context = try context()
        if let engine = try context.externalPool() {
            // Count and page in one REPEATABLE READ snapshot, so they agree (on a replica, if one serves).
            return try engine.read(route) { connection in
                let own = connection.transactionDepth == 0 && !connection.isInTransaction
                if own { try connection.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", .positional([]), row: nil) }
                defer { if own { try? connection.executeRollback("COMMIT") } }
                return try pageOf(pageNumber, pageSize, select, sqlExceptSelect, arguments, countSql, knownTotal, fetch)
            }
        }
        return try context.pool().readSnapshot { connection in
            let ownTransaction = !connection.isInTransaction
            if ownTransaction { _ = try connection.run("BEGIN DEFERRED", .none) }
            defer { if ownTransaction { _ = try? connection.run("COMMIT", .none) } }
            return try pageOf(pageNumber, pageSize, select, sqlExceptSelect, arguments, countSql, knownTotal, fetch)
        }
    }

    private func pageOf<T>(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String, _ arguments: Arguments,
                           _ countSql: String, _ knownTotal: Int?, _ fetch: (String) throws -> [T]) throws -> Page<T> {
        do {
            let totalRow = try knownTotal ?? queryValues(countSql, arguments, as: Int.self, limit: 1).first.flatMap { $0 } ?? 0
            let totalPage = totalRow == 0 ? 0 : (totalRow - 1) / pageSize + 1
            guard pageNumber <= totalPage else {
                return Page(list: [], pageNumber: pageNumber, pageSize: pageSize, totalPage: totalPage, totalRow: totalRow)
            }
            let (offset, overflow) = (pageNumber - 1).multipliedReportingOverflow(by: pageSize)
            guard !overflow else {
                throw DicRecordError(.invalidArgument, "page \(pageNumber) of size \(pageSize) is out of range", configName: configName)
            }
            let list = try fetch("\(select) \(sqlExceptSelect)\nLIMIT \(pageSize) OFFSET \(offset)")
            return Page(list: list, pageNumber: pageNumber, pageSize: pageSize, totalPage: totalPage, totalRow: totalRow)
        }
    }
}
