import ArgumentParser
import DicRecord

/// `dicrecord tables DB`: the user tables, one per line, by name.
struct TablesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tables",
        abstract: "List the tables of a database, one per line (SQLite's own sqlite_* tables left out)."
    )

    @Argument(help: "The database file.")
    var database: String

    func run() throws {
        try reportingErrors {
            let names = try Database.with(database) { db in
                try db.query("""
                    select name from sqlite_master
                    where type = 'table' and name not like 'sqlite\\_%' escape '\\'
                    order by name
                    """, as: String.self)
            }
            let out = TextOutput(handle: .standardOutput)
            for name in names { out.write((name ?? "") + "\n") }
            out.flush()
        }
    }
}
