import ArgumentParser

/// `dicrecord`: inspect, query, export and import SQLite databases with DicRecord.
///
/// Exit codes: 0 success, 1 a runtime error (the message is on stderr), 64 a usage error.
@main
struct DicRecordTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dicrecord",
        abstract: "Inspect, query, export and import SQLite databases.",
        discussion: """
            Every command but import opens the database readonly; a missing database file is an \
            error and is never created. Exit codes: 0 success, 1 runtime error, 64 usage error.
            """,
        subcommands: [TablesCommand.self, SchemaCommand.self, QueryCommand.self, WatchCommand.self, ExportCommand.self, ImportCommand.self]
    )
}
