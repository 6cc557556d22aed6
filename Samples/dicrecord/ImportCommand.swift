import ArgumentParser
import DicRecord
import Foundation

/// `dicrecord import DB TABLE FILE [--format json|csv]`: all rows in one transaction.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Insert the rows of a JSON or CSV file into a table, all or nothing.",
        discussion: """
            Reads what `export` writes. JSON: an array of objects (members are columns; an integer \
            literal is INTEGER, any other number REAL, true/false 1/0, {"base64": "…"} a BLOB, \
            other objects and arrays their JSON text). CSV: a header row of column names; a quoted \
            field is TEXT; unquoted, an empty field is NULL, an integer INTEGER, a decimal number \
            REAL, X'…' a BLOB, anything else TEXT. A missing table is created with the file's \
            columns (no declared types, so values are stored as read). Everything runs in one \
            transaction: on any error nothing is kept.
            """
    )

    @Argument(help: "The database file (it must exist).")
    var database: String

    @Argument(help: "The table to insert into.")
    var table: String

    @Argument(help: "The JSON or CSV file.")
    var file: String

    @Option(help: "json or csv (default: from the file's extension).")
    var format: FileFormat?

    func validate() throws {
        if format == nil && FileFormat(fileName: file) == nil {
            throw ValidationError("give --format json|csv (the file name does not end in .json or .csv)")
        }
    }

    /// The rows of the file, each with its columns (CSV rows share the header's).
    private struct ImportRow {
        let columns: [String]
        let values: [DatabaseValue]
        let line: Int
    }

    func run() throws {
        try reportingErrors {
            guard let format = format ?? FileFormat(fileName: file) else { return }
            guard FileManager.default.fileExists(atPath: file), let data = FileManager.default.contents(atPath: file) else {
                throw ToolError("cannot read \(file)")
            }
            let name = (file as NSString).lastPathComponent
            let rows = try format == .json ? jsonRows(data, name: name) : csvRows(data, name: name)
            let progress = ProgressBar(total: rows.count, label: "import")
            try Database.with(database, writable: true) { db in
                try db.transaction { db in
                    if try !db.tableExists(table) { try createTable(db, rows) }
                    var insert = (columns: [String](), sql: "")
                    for (index, row) in rows.enumerated() {
                        if row.columns != insert.columns || insert.sql.isEmpty {
                            insert = (row.columns, insertSQL(row.columns))
                        }
                        do {
                            _ = try db.update(insert.sql, arguments: StatementArguments(row.values.map { $0 as DatabaseArgument }))
                        } catch {
                            throw ToolError("\(name) row \(index + 1) (line \(row.line)): \(ErrorText.describe(error, userSQL: nil)); nothing was imported")
                        }
                        progress.update(index + 1)
                    }
                }
            }
            progress.finish()
            if Terminal.standardErrorIsTerminal {
                Terminal.standardError.write("\(rows.count) row\(rows.count == 1 ? "" : "s") imported into \(table)\n")
            }
        }
    }

    private func insertSQL(_ columns: [String]) -> String {
        let target = Database.quote(table)
        guard !columns.isEmpty else { return "insert into \(target) default values" }
        let names = columns.map(Database.quote).joined(separator: ", ")
        let marks = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "insert into \(target) (\(names)) values (\(marks))"
    }

    /// A table for the file's columns (their first spellings, in order of appearance), without
    /// declared types: each value keeps the type it was read with.
    private func createTable(_ db: Db, _ rows: [ImportRow]) throws {
        var columns: [String] = []
        var seen = Set<String>()
        for row in rows {
            for column in row.columns where seen.insert(column.lowercased()).inserted { columns.append(column) }
        }
        guard !columns.isEmpty else { throw ToolError("no such table: \(table) (and the file names no columns to create it with)") }
        _ = try db.update("create table \(Database.quote(table)) (\(columns.map(Database.quote).joined(separator: ", ")))")
    }

    /// The library's reader of what `export` writes (exact numbers, `{"base64": …}` blobs).
    private func jsonRows(_ data: Data, name: String) throws -> [ImportRow] {
        do {
            return try JSONRow.rows(json: data).map { ImportRow(columns: $0.columns, values: $0.values, line: $0.line) }
        } catch let error as DicRecordError where error.kind == .invalidJSON {
            throw ToolError("\(name): \(error.message)")
        }
    }

    private func csvRows(_ data: Data, name: String) throws -> [ImportRow] {
        let records = try CSVReader.records(data, name: name)
        guard let header = records.first else { throw ToolError("\(name) is empty: it needs a header row") }
        let columns = header.fields.map(\.text)
        return try records.dropFirst().map { record in
            guard record.fields.count == columns.count else {
                throw ToolError("\(name) line \(record.line): \(record.fields.count) fields, the header has \(columns.count)")
            }
            do {
                return ImportRow(columns: columns, values: try record.fields.map(CSVReader.value), line: record.line)
            } catch {
                throw ToolError("\(name) line \(record.line): \(error)")
            }
        }
    }
}
