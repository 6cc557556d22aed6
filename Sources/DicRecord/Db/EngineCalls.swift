// Db on a context of another engine (Engine/Engine.swift): the same behaviours as the SQLite
// paths in Db.swift, Db+Records.swift and Transactions.swift, written once for every such
// engine. Rows come back as values and become records here; the joining rules are the pool's.
extension Db {
    /// The rows of a query as records (at most `limit`).
    @inline(never)
    func engineFind(_ context: DbContext, _ sql: String, _ arguments: Arguments, limit: Int?) throws -> [Record] {
        let found = try engineFindRows(context, sql, arguments, limit: limit)
        guard let layout = found.layout else { return [] }
        return found.rows.map { Record(layout: layout, values: $0) }
    }

    /// The rows of a query in compact blocks, with their layout (at most `limit`).
    @inline(never)
    func engineFindRows(_ context: DbContext, _ sql: String, _ arguments: Arguments, limit: Int?) throws -> FetchedRows {
        let engine = try context.externalPool()!
        var builder: RowBlockBuilder?
        var shared: RowLayout?
        try engineRows(engine, context, sql, arguments) { layout, values in
            if builder == nil {
                builder = RowBlockBuilder(columns: layout.names.count)
                shared = layout
            }
            builder!.append(values)
            return limit.map { builder!.count < $0 } ?? true
        }
        return FetchedRows(layout: shared, rows: builder?.finish() ?? [])
    }

    @inline(never)
    func engineEach(_ context: DbContext, _ sql: String, _ arguments: Arguments, _ body: (Record) throws -> Bool) throws {
        let engine = try context.externalPool()!
        try engineRows(engine, context, sql, arguments, streaming: true) { layout, values in
            try body(Record(layout: layout, values: RowValues(ContiguousArray(values))))
        }
    }

    @inline(never)
    func engineQueryValues<T>(_ context: DbContext, _ sql: String, _ arguments: Arguments, as type: T.Type, limit: Int?) throws -> [T?] {
        let engine = try context.externalPool()!
        var values: [T?] = []
        let columns = try engineRows(engine, context, sql, arguments) { layout, row in
            let raw = row[0]
            if case .null = raw {
                values.append(nil)
            } else {
                do {
                    values.append(try context.converters.decode(raw, as: T.self))
                } catch let error as ConversionError {
                    throw error.inColumn(layout.names[0])
                }
            }
            return limit.map { values.count < $0 } ?? true
        }
        guard columns.count == 1 else {
            throw DicRecordError(.multipleColumns, "a single-column query returned \(columns.count) columns; select exactly one",
                                 sql: sql, configName: context.configName)
        }
        return values
    }

    @inline(never)
    func engineUpdate(_ context: DbContext, _ sql: String, _ arguments: Arguments) throws -> Int {
        let engine = try context.externalPool()!
        return try engine.write { try $0.execute(sql, arguments.encoded(context.converters, sql: sql, configName: context.configName), row: nil).changes }
    }

    /// Runs a query on the engine (a reader unless it may write), handing each row to `row` with
    /// the layout the rows share; returns the column names.
    @discardableResult
    private func engineRows(_ engine: any EnginePool, _ context: DbContext, _ sql: String, _ arguments: Arguments,
                            streaming: Bool = false, _ row: (RowLayout, [DatabaseValue]) throws -> Bool) throws -> [String] {
        let encoded = try arguments.encoded(context.converters, sql: sql, configName: context.configName)
        let cancellation = ThreadLeases.current.cancellation
        func run(_ connection: any EngineConnection) throws -> [String] {
            // The engine's row callback is optional, hence escaping in type; it is called only during `execute`.
            try withoutActuallyEscaping(row) { row in
                var layout: RowLayout?
                func each(_ columns: [String], _ values: [DatabaseValue]) throws -> Bool {
                    try cancellation?.checkNow()
                    // The first row makes the layout the rest share.
                    let shared = layout ?? RowLayout(names: columns, registry: context.converters,
                                                     origin: ReadOrigin(sql: sql, configName: context.configName, reporter: context.tracer.reads))
                    layout = shared
                    return try row(shared, values)
                }
                // Only a query that reads can stream (PostgreSQL's cursors take SELECT and VALUES).
                if streaming, SqlText.access(sql) == .read { return try connection.stream(sql, encoded, row: each) }
                return try connection.execute(sql, encoded, row: each).columns
            }
        }
        switch SqlText.access(sql) {
        case .read: return try engine.read(route, run)
        case .write, .ask: return try engine.write(run)
        }
    }

    // MARK: Transactions and batches

    /// `tx`/`transaction` on the engine: BEGIN or a SAVEPOINT on the connection this thread holds.
    func engineTransaction<T>(_ engine: any EnginePool, _ context: DbContext, _ body: (Db) throws -> T, commit: (T) -> Bool) throws -> T {
        let db = bound(to: context)
        return try engine.write { connection in
            try inTransaction(connection, { try body(db) }, commit: commit)
        }
    }

    func engineBatch(_ engine: any EnginePool, _ context: DbContext, _ statements: [(sql: String, arguments: Arguments)]) throws -> [Int] {
        try engine.write { connection in
            try inTransaction(connection, {
                try statements.enumerated().map { index, statement in
                    try batchItem(index, of: statements.count) {
                        try connection.execute(statement.sql, statement.arguments.encoded(context.converters, sql: statement.sql, configName: context.configName),
                                               row: nil).changes
                    }
                }
            }, commit: { _ in true })
        }
    }

    /// One statement run once per argument list, sent together where the engine can.
    func engineBatch(_ engine: any EnginePool, _ context: DbContext, _ sql: String, _ rows: [[DatabaseArgument]]) throws -> [Int] {
        let encoded = try rows.enumerated().map { index, row in
            try batchItem(index, of: rows.count) {
                try Arguments.positional(row).encoded(context.converters, sql: sql, configName: context.configName)
            }
        }
        return try engine.write { connection in
            try inTransaction(connection, {
                do {
                    return try connection.executeBatch(sql, encoded, row: nil)
                } catch let failure as EngineBatchFailure {
                    return try batchItem(failure.index, of: rows.count) { throw failure.error }
                }
            }, commit: { _ in true })
        }
    }

    /// Inserts `records`; a missing single key is left for the database to generate and comes
    /// back by `RETURNING`, written into the record. Consecutive records with the same columns go
    /// to the engine together (one pipeline on PostgreSQL, not a round trip each); their keys and
    /// flags are written back once all of them are in. With `namingFailedItem` (a batch), an
    /// error says which record failed.
    func engineSave(_ records: [Record], plan: InsertPlan, on connection: any EngineConnection, namingFailedItem: Bool) throws -> [Int] {
        let key = plan.keys.count == 1 ? plan.keys[0] : nil
        func item<T>(_ index: Int, _ body: () throws -> T) throws -> T {
            namingFailedItem ? try batchItem(index, of: records.count, body) : try body()
        }
        func insert(_ row: InsertRow) -> String {
            // RETURNING * rather than the key: a table need not have the key column it is saved by.
            SqlText.insert(into: plan.table, columns: row.names) + (key != nil && row.keyIsMissing ? " RETURNING *" : "")
        }
        func generatedKey(_ columns: [String], _ values: [DatabaseValue]) -> DatabaseValue? {
            guard let key, let position = columns.firstIndex(where: { RowLayout.sameColumn($0, key) }) else { return nil }
            return values[position]
        }
        var supplied = false
        // One at a time: a single record, or a list that holds a record twice (its second insert
        // must carry the key the first wrote back, and fail on it, as on SQLite).
        guard records.count > 1, Set(records.map(ObjectIdentifier.init)).count == records.count else {
            let counts = try records.enumerated().map { index, record in
                try item(index) {
                    let row = try record.insertSnapshot(key: key)
                    if !row.keyIsMissing { supplied = true }
                    var generated: DatabaseValue?
                    let changes = try connection.execute(insert(row), .positional(row.storedValues.utf8Values(configName: configName))) { columns, values in
                        generated = generatedKey(columns, values)
                        return false
                    }.changes
                    RollbackUndo.finishSave(record, key: generated == nil ? nil : key, generated: generated, on: connection)
                    return changes
                }
            }
            if supplied, let key { try connection.keysWereSupplied(table: plan.table, key: key) }
            return counts
        }
        let rows = try records.indices.map { index in try item(index) { try records[index].insertSnapshot(key: key) } }
        let values = try rows.indices.map { index in try item(index) { try rows[index].storedValues.utf8Values(configName: configName) } }
        let statements = rows.map(insert)
        var generated = [DatabaseValue?](repeating: nil, count: records.count)
        var counts: [Int] = []
        counts.reserveCapacity(records.count)
        var start = 0
        while start < records.count {
            var end = start + 1
            while end < records.count && statements[end] == statements[start] { end += 1 }
            let sql = statements[start]
            do {
                counts += try connection.executeBatch(sql, (start..<end).map { .positional(values[$0]) }) { index, columns, values in
                    generated[start + index] = generatedKey(columns, values)
                }
            } catch let failure as EngineBatchFailure {
                try item(start + failure.index) { throw failure.error }
            }
            start = end
        }
        for (index, record) in records.enumerated() {
            RollbackUndo.finishSave(record, key: generated[index] == nil ? nil : key, generated: generated[index], on: connection)
        }
        if let key, rows.contains(where: { !$0.keyIsMissing }) { try connection.keysWereSupplied(table: plan.table, key: key) }
        return counts
    }
}
