import ArgumentParser
import DicRecord
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// `dicrecord export DB TABLE --format json|csv [--out FILE]`.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write every row of a table as JSON or CSV, in a form `import` reads back exactly.",
        discussion: """
            JSON: an array of objects (blobs as {"base64": "…"}). CSV: a header row, then RFC 4180 \
            records; text is always quoted, numbers are not, NULL is an empty unquoted field and \
            a blob an unquoted hex literal X'…'. Generated columns are left out. --out is written \
            whole or not at all (through a temporary file).
            """
    )

    @Argument(help: "The database file.")
    var database: String

    @Argument(help: "The table (or view) to export.")
    var table: String

    @Option(help: "json or csv (default: from the --out file's extension).")
    var format: FileFormat?

    @Option(help: "Write to this file instead of stdout.")
    var out: String?

    func validate() throws {
        if format == nil && out.flatMap(FileFormat.init(fileName:)) == nil {
            throw ValidationError("give --format json|csv (or an --out file ending in .json or .csv)")
        }
    }

    func run() throws {
        try reportingErrors {
            guard let format = format ?? out.flatMap(FileFormat.init(fileName:)) else { return }
            try Database.with(database) { db in
                guard try db.tableExists(table, includingViews: true) else { throw ToolError("no such table: \(table)") }
                // The stored columns (`select *` would also give generated ones, which no INSERT accepts).
                let columns = try db.query("select name from pragma_table_xinfo(?) where hidden = 0 order by cid", table, as: String.self)
                    .compactMap { $0 }
                let total = ProgressBar.canShow ? try db.queryInt("select count(*) from \(Database.quote(table))") ?? 0 : 0
                let progress = ProgressBar(total: total, label: "export")
                try withOutput { stream in
                    let writer: any RowWriter
                    switch format {
                    case .json:
                        writer = JSONRowWriter(stream)
                    case .csv:
                        let csv = CSVRowWriter(stream, blobs: .hex)
                        csv.writeHeader(columns)
                        writer = csv
                    }
                    let sql = "select \(columns.map(Database.quote).joined(separator: ", ")) from \(Database.quote(table))"
                    var done = 0
                    try db.each(sql, arguments: []) { record in
                        writer.write(columns: columns, row: try Database.values(of: record))
                        done += 1
                        progress.update(done)
                        return true
                    }
                    writer.finish()
                }
                progress.finish()
            }
        }
    }

    /// Runs `body` with the output stream: stdout, or a temporary file renamed to `--out` once complete.
    private func withOutput(_ body: (TextOutput) throws -> Void) throws {
        guard let out else {
            let stream = TextOutput(handle: .standardOutput)
            try body(stream)
            try stream.close()
            return
        }
        let temporary = out + ".dicrecord-\(getpid()).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
            throw ToolError("cannot create \(temporary)")
        }
        do {
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            defer { try? handle.close() }
            let stream = TextOutput(handle: handle)
            try body(stream)
            try stream.close()
            try handle.synchronize()
            guard rename(temporary, out) == 0 else {
                throw ToolError("cannot write \(out): \(String(cString: strerror(errno)))")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            throw error
        }
    }
}
