import ArgumentParser
import DicRecord
import Foundation

/// `dicrecord watch DB "SQL" [ARG…]`: prints a query's rows, then again each time a commit changes
/// them (from this machine's other programs too: the sqlite3 shell, an app, another dicrecord).
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a query's rows, and print them again whenever a commit changes them.",
        discussion: """
            Opens the database readonly and watches it with DicRecord's live queries: the rows are \
            printed at once, then again after each commit (by any program) that changes them; a \
            commit that leaves them as they were prints nothing. Other programs' commits are seen \
            within --latency seconds. Ends on Ctrl-C, or after --count results. ARGs bind as for \
            query. Each result after the first is preceded by a line on stderr with the time.
            """
    )

    @Argument(help: "The database file.")
    var database: String

    @Argument(help: "The query.")
    var sql: String

    @Argument(parsing: .allUnrecognized, help: "Values for the ? placeholders.")
    var arguments: [String] = []

    @Option(help: "table or json (csv is for export).")
    var format: OutputFormat = .table

    @Option(help: "Stop after printing this many results.")
    var count: Int?

    @Option(help: "Seconds within which another program's commit is seen (default 0.25).")
    var latency: Double = 0.25

    @Flag(help: "Bind every ARG as TEXT.")
    var text = false

    func validate() throws {
        if format == .csv { throw ValidationError("watch prints table or json") }
        if let count, count < 1 { throw ValidationError("--count must be 1 or more") }
        if !(latency > 0) { throw ValidationError("--latency must be more than 0") }
        if let unknown = arguments.first(where: { $0.hasPrefix("--") && $0.dropFirst(2).first?.isLetter == true }) {
            throw ValidationError("Unknown option '\(unknown)'")
        }
    }

    func run() async throws {
        let statement = ReadonlyStatement(sql)
        let values = arguments.map { ArgumentTyping.value($0, forceText: text) as DatabaseArgument }
        do {
            let database = try Database.open(self.database, latency: latency)
            defer { database.close() }
            var printed = 0
            for try await records in database.db.observe(statement.sql, arguments: StatementArguments(values)) {
                if printed > 0 {
                    Terminal.standardError.write("-- changed at \(ISO8601DateFormatter().string(from: Date()))\n")
                }
                let out = TextOutput(handle: .standardOutput)
                let writer: any RowWriter = format == .json ? JSONRowWriter(out) : TableRowWriter(out, dim: Terminal.standardOutputIsTerminal)
                for record in records { writer.write(columns: record.columnNames, row: try Database.values(of: record)) }
                writer.finish()
                if format == .table && records.isEmpty { Terminal.standardError.write("(no rows)\n") }
                printed += 1
                if let count, printed >= count { break }
            }
        } catch let error as DicRecordError where error.kind == .readonly {
            Terminal.standardError.write("Error: the \(statement.firstWord.uppercased()) statement may write, and watch opens the database readonly\n")
            throw ExitCode.failure
        } catch let exit as ExitCode {
            throw exit
        } catch {
            Terminal.standardError.write("Error: \(ErrorText.describe(error, userSQL: sql, sent: statement.sql))\n")
            throw ExitCode.failure
        }
    }
}
