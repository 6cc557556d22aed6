// SQLite: the SQLite connection as the engine seam sees it (Engine/Engine.swift).
import Foundation

extension Connection: EngineConnection {
    /// The outermost BEGIN: IMMEDIATE takes the write lock at once, so a transaction never fails
    /// half-way for want of it.
    package var beginStatement: String { "BEGIN IMMEDIATE" }

    @discardableResult
    package func execute(_ sql: String, _ arguments: EncodedArguments,
                         row: ((_ columns: [String], _ values: [DatabaseValue]) throws -> Bool)?) throws -> (columns: [String], changes: Int) {
        let bound: Arguments = switch arguments {
        case .positional(let values): .values(values)
        case .named(let values): .named(values.mapValues { $0 as DatabaseArgument })
        case .stored(let stored): .stored(stored)
        }
        guard let row else { return ([], try run(sql, bound)) }
        return try withStatement(sql, bound) { statement in
            let columns = statement.columnNames()
            while try step(statement, bound) {
                guard try row(columns, (0..<statement.columnCount).map { statement.value(at: $0) }) else { break }
            }
            return (columns, 0)
        }
    }

    /// SQLite's statements already step one row at a time.
    @discardableResult
    package func stream(_ sql: String, _ arguments: EncodedArguments,
                        row: (_ columns: [String], _ values: [DatabaseValue]) throws -> Bool) throws -> [String] {
        try withoutActuallyEscaping(row) { try execute(sql, arguments, row: $0).columns }
    }

    package func executeBatch(_ sql: String, _ rows: [EncodedArguments],
                              row: ((_ index: Int, _ columns: [String], _ values: [DatabaseValue]) throws -> Void)?) throws -> [Int] {
        try rows.enumerated().map { index, arguments in
            do {
                guard let row else { return try execute(sql, arguments, row: nil).changes }
                // With a row callback `execute` counts no changes: a statement returning rows (RETURNING) changed `changes`.
                try execute(sql, arguments) { columns, values in try row(index, columns, values); return true }
                return changes
            } catch {
                throw EngineBatchFailure(index: index, error: error)
            }
        }
    }

    package func executeRollback(_ sql: String) throws {
        try runRollback(sql)
    }

    // MARK: The catalog (sqlite_master and the schema PRAGMAs; names match case-insensitively, as SQLite's do)

    package var schemaDialect: SchemaDialect { Self.dialect }

    private static let dialect = SchemaDialect(
        integer: "INTEGER", real: "REAL", text: "TEXT", blob: "BLOB",
        implicitId: "\"id\" INTEGER PRIMARY KEY AUTOINCREMENT", caseInsensitiveKey: " COLLATE NOCASE",
        blobLiteral: { "X'" + $0.map { String(format: "%02X", $0) }.joined() + "'" },
        lockStatements: [],   // BEGIN IMMEDIATE takes the write lock
        maxNameLength: Int.max, rebuildsTables: true, fullTextSearch: true)

    package func tableExists(_ table: String) throws -> Bool {
        try !rows("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", .values([.text(table)])).isEmpty
    }

    package func columnNames(of table: String) throws -> [String] {
        try rows("PRAGMA table_info(\(SqlText.quote(table)))").compactMap { row in
            if case .text(let name) = row[1] { return name }
            return nil
        }
    }

    package func indexNames(of table: String) throws -> [String] {
        try rows("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE", .values([.text(table)])).compactMap {
            if case .text(let name) = $0[0] { return name }
            return nil
        }
    }

    package func uniqueKeys(of table: String) throws -> [[String]] {
        // PRAGMA index_list: seq, name, unique, origin, partial; newest first.
        try rows("PRAGMA index_list(\(SqlText.quote(table)))").reversed().compactMap { index -> [String]? in
            guard index.count >= 5, index[2] == .integer(1), index[4] == .integer(0), case .text(let name) = index[1] else { return nil }
            return try rows("PRAGMA index_info(\(SqlText.quote(name)))").compactMap { row -> String? in
                if case .text(let column) = row[2] { return column }
                return nil
            }
        }
    }

    /// SQLite continues after the largest key by itself.
    package func keysWereSupplied(table: String, key: String) throws {}

    package func databaseVersion() throws -> Int {
        if case .integer(let version) = try rows("PRAGMA user_version").first?.first { return Int(version) }
        return 0
    }

    package func setDatabaseVersion(_ version: Int) throws {
        _ = try run("PRAGMA user_version = \(version)", .none)
    }
}
