import ArgumentParser
import DicRecord

/// `dicrecord schema DB [TABLE]`: the CREATE statements from sqlite_master.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the CREATE statements of a database, or of one table with its indexes and triggers."
    )

    @Argument(help: "The database file.")
    var database: String

    @Argument(help: "Only this table (or view) and the indexes and triggers on it.")
    var table: String?

    func run() throws {
        try reportingErrors {
            let statements = try Database.with(database) { db -> [String?] in
                // Creation order (rowid), so that a table comes before its indexes and triggers.
                if let table {
                    let found = try db.query("""
                        select sql from sqlite_master where sql is not null and tbl_name = ? collate nocase order by rowid
                        """, table, as: String.self)
                    if found.isEmpty { throw ToolError("no such table: \(table)") }
                    return found
                }
                return try db.query("select sql from sqlite_master where sql is not null order by rowid", as: String.self)
            }
            let out = TextOutput(handle: .standardOutput)
            for sql in statements.compactMap({ $0 }) { out.write(sql + ";\n") }
            out.flush()
        }
    }
}
