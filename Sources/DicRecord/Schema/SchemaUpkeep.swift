import Foundation

/// The schema work for the models registered with a context, on the writer, in one transaction:
/// create, rename/drop/add columns, `migrate(from:to:)`, indexes, full-text index. If any of it
/// fails, all of it is rolled back. (The database's own migrations run before it: `DatabaseMigration`.)
/// It runs on any engine's connection: the catalog and the DDL words it differs in are the
/// connection's (`EngineConnection`, `SchemaDialect`); SQLite's table rebuild and FTS5 index are
/// SQLite's own, used where its dialect says so.
struct SchemaUpkeep {
    /// DicRecord's bookkeeping: one row per model table with the version it was brought to.
    static let bookkeepingTable = "dicrecord_schema"

    let connection: any EngineConnection
    let converters: Converters
    let configName: String
    /// Runs `migrate(from:to:)` with a handle on this context (calls join the held writer).
    let db: Db

    /// The context's upkeep of its models (`DbContext.register(_:)` hands it over).
    static let upkeep: DeclarationUpkeep = { added, others, connection, context, db in
        try SchemaUpkeep(connection: connection, converters: context.converters, configName: context.configName, db: db)
            .run(models: added.map(ModelDeclaration.model), registered: others.map(ModelDeclaration.model))
    }

    /// `registered`: the context's other models, checked for a table clash but not upkept.
    func run(models: [Model.Type], registered: [Model.Type]) throws {
        guard !models.isEmpty else { return }
        let schemas = models.map { ModelSchema.of($0) }
        var tables: [String: String] = [:]
        for other in registered.map({ ModelSchema.of($0) }) { tables[other.tableName.lowercased()] = other.typeName }
        for schema in schemas {
            if let error = schema.declarationError { throw error }
            if let other = tables[schema.tableName.lowercased()] {
                throw DicRecordError(.invalidModel, "models \(other) and \(schema.typeName) both use table '\(schema.tableName)'",
                                     configName: configName)
            }
            tables[schema.tableName.lowercased()] = schema.typeName
        }
        for schema in schemas where !schema.searchColumns.isEmpty && !dialect.fullTextSearch {
            throw DicRecordError(.invalidModel,
                "model \(schema.typeName) declares searchColumns: full-text search is SQLite-only (FTS5); on config '\(configName)' search with the engine's own SQL (PostgreSQL: a tsvector column and @@)",
                configName: configName)
        }
        try connection.inSchemaTransaction {
            try connection.perform("""
                CREATE TABLE IF NOT EXISTS \(SqlText.quote(Self.bookkeepingTable)) (
                "table_name" \(dialect.text) PRIMARY KEY\(dialect.caseInsensitiveKey), "model" \(dialect.text) NOT NULL,
                "version" \(dialect.integer) NOT NULL, "updated_at" \(dialect.real) NOT NULL)
                """)
            for schema in schemas { try upkeep(schema) }
        }
    }

    // MARK: One model's table

    private func upkeep(_ schema: ModelSchema) throws {
        let table = schema.tableName
        guard try connection.tableExists(table) else {
            try connection.perform(createTable(schema, named: table))
            try createIndexes(schema)
            try updateSearchIndex(schema)
            try runMigrate(schema, from: 0)
            try stamp(schema)
            return
        }
        // An existing table DicRecord never managed is adopted at the declared version.
        let stored = try storedVersion(table) ?? schema.version
        if stored > schema.version {
            throw DicRecordError(.schemaVersion,
                "table '\(table)' is at version \(stored) in the database but model \(schema.typeName) declares version \(schema.version); downgrades are refused",
                configName: configName)
        }
        try dropStaleIndexes(schema)
        try dropSearchIndexIfChanged(schema)
        var columns = try connection.columnNames(of: table)
        func has(_ name: String) -> Bool { columns.contains { RowLayout.sameColumn($0, name) } }

        for (old, new) in schema.renamedColumns.sorted(by: { $0.key < $1.key }) where has(old) && !has(new) {
            try connection.perform("ALTER TABLE \(SqlText.quote(table)) RENAME COLUMN \(SqlText.quote(old)) TO \(SqlText.quote(new))")
        }
        columns = try connection.columnNames(of: table)
        var needsRebuild = false
        for name in schema.droppedColumns where has(name) && schema.column(named: name) == nil {
            if !(try attempt("ALTER TABLE \(SqlText.quote(table)) DROP COLUMN \(SqlText.quote(name))")) { needsRebuild = true }
        }
        if !needsRebuild {
            for column in schema.columns where !has(column.name) {
                if !(try attempt("ALTER TABLE \(SqlText.quote(table)) ADD COLUMN \(columnDefinition(column, schema))")) {
                    needsRebuild = true
                    break
                }
            }
        }
        if needsRebuild { try rebuild(schema) }
        if stored < schema.version { try runMigrate(schema, from: stored) }
        try createIndexes(schema)
        try updateSearchIndex(schema)
        try stamp(schema)
    }

    /// Runs `sql` inside a savepoint; false (and nothing changed) when SQLite refuses it, so that
    /// the table is rebuilt. An engine that does not rebuild tables throws the refusal.
    private func attempt(_ sql: String) throws -> Bool {
        guard dialect.rebuildsTables else {
            try connection.perform(sql)
            return true
        }
        try connection.perform("SAVEPOINT dicrecord_attempt")
        do {
            try connection.perform(sql)
            try connection.perform("RELEASE dicrecord_attempt")
            return true
        } catch is DatabaseError {
            try connection.perform("ROLLBACK TO dicrecord_attempt")
            try connection.perform("RELEASE dicrecord_attempt")
            return false
        }
    }

    private var dialect: SchemaDialect { connection.schemaDialect }

    /// Rebuilds the table from the declarations, keeping the data of every column that stays:
    /// the way to drop a column SQLite cannot drop in place (indexed, UNIQUE, ...) or to add one
    /// it cannot add (UNIQUE, NOT NULL without a default). SQLite's own catalog: only SQLite rebuilds.
    private func rebuild(_ schema: ModelSchema) throws {
        let table = schema.tableName
        let temporary = "\(table)_dicrecord_rebuild"
        let existing = try connection.columnNames(of: table)
        var kept: [String] = schema.hasImplicitId ? ["id"] : []
        kept += schema.columns.map(\.name).filter { name in existing.contains { RowLayout.sameColumn($0, name) } }
        // Columns the model does not declare and does not drop are the user's: kept as they are.
        let dropped = schema.droppedColumns
        var extra: [String] = []
        for row in try connection.fetchRows("PRAGMA table_info(\(SqlText.quote(table)))") {
            guard case .text(let name) = row[1], !kept.contains(where: { RowLayout.sameColumn($0, name) }),
                  !dropped.contains(where: { RowLayout.sameColumn($0, name) }) else { continue }
            var definition = SqlText.quote(name)
            if case .text(let type) = row[2], !type.isEmpty { definition += " \(type)" }
            if case .text(let value) = row[4] {
                if row[3] == .integer(1) { definition += " NOT NULL" }
                definition += " DEFAULT \(value)"
            }
            extra.append(definition)
            kept.append(name)
        }
        // DROP TABLE takes the table's own indexes and triggers and its AUTOINCREMENT counter with
        // it: the user's are re-created afterwards (those still valid), the counter restored.
        let managed = Model.Index.prefix(table: table), fts = ModelSchema.searchTable(table)
        let dependents = try connection.fetchRows("""
            SELECT sql FROM sqlite_master WHERE tbl_name = ? COLLATE NOCASE AND type IN ('index', 'trigger') AND sql IS NOT NULL
            AND substr(name, 1, ?) <> ? AND substr(name, 1, ?) <> ?
            """, [.text(table), .integer(Int64(managed.utf8.count)), .text(managed),
                  .integer(Int64(fts.utf8.count)), .text(fts)]).compactMap { row -> String? in
            if case .text(let sql) = row[0] { return sql }
            return nil
        }
        let sequence = try autoincrementCounter(table)
        try connection.perform("PRAGMA defer_foreign_keys = ON")
        try connection.perform(createTable(schema, named: temporary, extraColumns: extra))
        let list = kept.map(SqlText.quote).joined(separator: ", ")
        try connection.perform("INSERT INTO \(SqlText.quote(temporary)) (\(list)) SELECT \(list) FROM \(SqlText.quote(table))")
        try connection.perform("DROP TABLE \(SqlText.quote(table))")
        try connection.perform("ALTER TABLE \(SqlText.quote(temporary)) RENAME TO \(SqlText.quote(table))")
        if let sequence, schema.hasImplicitId {
            let updated = try connection.perform("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", [.integer(sequence), .text(table)])
            if updated == 0 {
                try connection.perform("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [.text(table), .integer(sequence)])
            }
        }
        for sql in dependents { _ = try attempt(sql) }
    }

    /// The table's AUTOINCREMENT counter, if SQLite keeps one for it.
    private func autoincrementCounter(_ table: String) throws -> Int64? {
        guard try !connection.fetchRows("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").isEmpty else { return nil }
        if case .integer(let seq) = try connection.fetchRows("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(table)]).first?.first {
            return seq
        }
        return nil
    }

    private func runMigrate(_ schema: ModelSchema, from old: Int) throws {
        for statement in schema.migrate(old, schema.version) {
            do {
                try connection.execute(statement.sql, statement.arguments.encoded(converters, sql: statement.sql, configName: configName), row: nil)
            } catch let error as DatabaseError {
                throw DatabaseError(resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                                    message: "\(schema.typeName).migrate(from: \(old), to: \(schema.version)) failed: \(error.message)",
                                    sql: error.sql, arguments: error.arguments, configName: configName, sqlState: error.sqlState)
            }
        }
    }

    private func stamp(_ schema: ModelSchema) throws {
        try connection.perform("""
            INSERT INTO \(SqlText.quote(Self.bookkeepingTable)) ("table_name", "model", "version", "updated_at") VALUES (?, ?, ?, ?)
            ON CONFLICT ("table_name") DO UPDATE SET "table_name" = excluded."table_name", "model" = excluded."model",
            "version" = excluded."version", "updated_at" = excluded."updated_at"
            """, [.text(schema.tableName), .text(schema.typeName), .integer(Int64(schema.version)),
                  .real(Date().timeIntervalSince1970)])
    }

    // MARK: DDL

    func createTable(_ schema: ModelSchema, named name: String, extraColumns: [String] = []) -> String {
        var parts: [String] = []
        if schema.hasImplicitId { parts.append(dialect.implicitId) }
        parts += schema.columns.map { columnDefinition($0, schema) }
        parts += extraColumns
        if schema.keyColumns.count > 1 {
            parts.append("PRIMARY KEY (\(schema.keyColumns.map(SqlText.quote).joined(separator: ", ")))")
        }
        return "CREATE TABLE \(SqlText.quote(name)) (\(parts.joined(separator: ", ")))"
    }

    func columnDefinition(_ column: ColumnInfo, _ schema: ModelSchema) -> String {
        let type = column.storageType(in: converters) ?? .blob
        var definition = "\(SqlText.quote(column.name)) \(dialect.typeName(type))"
        let constraint = schema.constraints[column.name]
        let isKey = schema.keyColumns.contains { RowLayout.sameColumn($0, column.name) }
        if isKey {
            definition += schema.keyColumns.count == 1 ? " NOT NULL PRIMARY KEY" : " NOT NULL"
        } else if let value = column.defaultValue, value != .null {
            definition += " NOT NULL"
            if !(constraint.map(Self.declaresDefault) ?? false) {
                definition += " DEFAULT \(literal(value))"
            }
        }
        if let constraint, !constraint.isEmpty { definition += " \(constraint)" }
        return definition
    }

    /// Whether a column constraint has a DEFAULT clause (the word in a string literal does not count).
    static func declaresDefault(_ constraint: String) -> Bool {
        let unquoted = constraint.replacingOccurrences(of: "'[^']*'", with: "''", options: .regularExpression)
        return unquoted.range(of: "\\bDEFAULT\\b", options: [.regularExpression, .caseInsensitive]) != nil
    }

    func literal(_ value: DatabaseValue) -> String {
        switch value {
        case .null: return "NULL"
        case .integer(let i): return String(i)
        case .real(let d): return d.isFinite ? "\(d)" : "NULL"
        case .text(let s): return SqlText.literal(s)
        case .blob(let data): return dialect.blobLiteral(data)
        }
    }

    // MARK: Indexes

    private func managedIndexes(_ table: String) throws -> [String] {
        // A prefix too long for the engine was cut with the name (see `SchemaDialect.name`).
        var prefix = Substring(Model.Index.prefix(table: table))
        while prefix.utf8.count > Swift.min(prefix.utf8.count, dialect.maxNameLength - 17) { prefix = prefix.dropLast() }
        return try connection.indexNames(of: table).filter { $0.hasPrefix(prefix) }
    }

    private func dropStaleIndexes(_ schema: ModelSchema) throws {
        let declared = Set(schema.indexes.map { dialect.name($0.name(table: schema.tableName)) })
        for name in try managedIndexes(schema.tableName) where !declared.contains(name) {
            try connection.perform("DROP INDEX \(SqlText.quote(name))")
        }
    }

    private func createIndexes(_ schema: ModelSchema) throws {
        for index in schema.indexes {
            try connection.perform("""
                CREATE \(index.unique ? "UNIQUE " : "")INDEX IF NOT EXISTS \(SqlText.quote(dialect.name(index.name(table: schema.tableName)))) \
                ON \(SqlText.quote(schema.tableName)) (\(index.columns.map(SqlText.quote).joined(separator: ", ")))
                """)
        }
    }

    // MARK: Full-text search (FTS5, external content kept in step by triggers)

    private func ftsDefinition(_ schema: ModelSchema) -> String {
        let columns = schema.searchColumns.map(SqlText.quote).joined(separator: ", ")
        return "CREATE VIRTUAL TABLE \(SqlText.quote(ModelSchema.searchTable(schema.tableName))) USING fts5(\(columns), content=\(SqlText.literal(schema.tableName)))"
    }

    private func triggerNames(_ table: String) -> [String] {
        ["ai", "ad", "au"].map { "\(ModelSchema.searchTable(table))_\($0)" }
    }

    private func dropSearchIndexIfChanged(_ schema: ModelSchema) throws {
        guard dialect.fullTextSearch else { return }
        let fts = ModelSchema.searchTable(schema.tableName)
        let existing = try connection.fetchRows("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(fts)]).first?.first
        let triggers = try triggerNames(schema.tableName).filter { name in
            try !connection.fetchRows("SELECT 1 FROM sqlite_master WHERE type = 'trigger' AND name = ?", [.text(name)]).isEmpty
        }
        let wanted = schema.searchColumns.isEmpty ? nil : ftsDefinition(schema)
        let upToDate = wanted.map { existing == .text($0) } == true && triggers.count == 3
        guard !upToDate, existing != nil || !triggers.isEmpty else { return }
        for name in triggers { try connection.perform("DROP TRIGGER \(SqlText.quote(name))") }
        if existing != nil { try connection.perform("DROP TABLE \(SqlText.quote(fts))") }
    }

    private func updateSearchIndex(_ schema: ModelSchema) throws {
        guard !schema.searchColumns.isEmpty else { return }
        let fts = ModelSchema.searchTable(schema.tableName)
        try dropSearchIndexIfChanged(schema)
        guard try connection.fetchRows("SELECT 1 FROM sqlite_master WHERE name = ?", [.text(fts)]).isEmpty else { return }
        let table = SqlText.quote(schema.tableName), quotedFts = SqlText.quote(fts)
        let columns = schema.searchColumns.map(SqlText.quote)
        let list = columns.joined(separator: ", ")
        let newValues = columns.map { "new.\($0)" }.joined(separator: ", ")
        let oldValues = columns.map { "old.\($0)" }.joined(separator: ", ")
        let names = triggerNames(schema.tableName).map(SqlText.quote)
        let insertNew = "INSERT INTO \(quotedFts) (rowid, \(list)) VALUES (new.rowid, \(newValues));"
        let deleteOld = "INSERT INTO \(quotedFts) (\(quotedFts), rowid, \(list)) VALUES ('delete', old.rowid, \(oldValues));"
        try connection.perform(ftsDefinition(schema))
        try connection.perform("CREATE TRIGGER \(names[0]) AFTER INSERT ON \(table) BEGIN \(insertNew) END")
        try connection.perform("CREATE TRIGGER \(names[1]) AFTER DELETE ON \(table) BEGIN \(deleteOld) END")
        try connection.perform("CREATE TRIGGER \(names[2]) AFTER UPDATE ON \(table) BEGIN \(deleteOld) \(insertNew) END")
        try connection.perform("INSERT INTO \(quotedFts) (\(quotedFts)) VALUES ('rebuild')")
    }

    // MARK: Reading the schema

    private func storedVersion(_ table: String) throws -> Int? {
        let rows = try connection.fetchRows("SELECT version FROM \(SqlText.quote(Self.bookkeepingTable)) WHERE table_name = ?", [.text(table)])
        if case .integer(let v) = rows.first?.first { return Int(v) }
        return nil
    }
}
