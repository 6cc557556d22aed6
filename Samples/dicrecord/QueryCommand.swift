import ArgumentParser
import DicRecord

/// The output formats of `query`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// `dicrecord query DB "SQL" [ARG…]`: runs one statement readonly and prints its rows.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Run one SQL statement (readonly) and print its rows.",
        discussion: """
            ARGs bind to the ? placeholders in order. An ARG spelled as a canonical integer (42, \
            -7) binds as INTEGER, a decimal number with a point or exponent (1.5, -2e3) as REAL, \
            anything else (007, +5, abc) as TEXT; --text binds every ARG as TEXT. Negative numbers \
            may be given directly.

            Formats: table (aligned; NULL shows as ∅, a blob as <blob N bytes>, control \
            characters as ␊ ␉ …), json (an array of objects as sqlite3 -json writes it; a blob \
            is {"base64": "…"}), csv (RFC 4180 with a header; text always quoted, NULL an empty \
            unquoted field, a blob <blob N bytes>).
            """
    )

    @Argument(help: "The database file.")
    var database: String

    @Argument(help: "The SQL statement.")
    var sql: String

    @Argument(parsing: .allUnrecognized, help: "Values for the ? placeholders.")
    var arguments: [String] = []

    @Option(help: "Print only this page of the rows (from 1); see --size.")
    var page: Int?

    @Option(help: "Rows per page (default 20 with --page).")
    var size: Int?

    @Option(help: "table, json or csv.")
    var format: OutputFormat = .table

    @Flag(help: "Bind every ARG as TEXT.")
    var text = false

    func validate() throws {
        if let page, page < 1 { throw ValidationError("--page must be 1 or more (pages are numbered from 1)") }
        if let size, size < 1 { throw ValidationError("--size must be 1 or more") }
        // Placeholder values are captured as they come (so that -5 is a value); a word after
        // two dashes is a mistyped option, not a value.
        if let unknown = arguments.first(where: { $0.hasPrefix("--") && $0.dropFirst(2).first?.isLetter == true }) {
            throw ValidationError("Unknown option '\(unknown)'")
        }
    }

    func run() throws {
        let statement = ReadonlyStatement(sql)
        try reportingErrors(sql: statement.typed, sent: statement.sql) {
            let values = arguments.map { ArgumentTyping.value($0, forceText: text) as DatabaseArgument }
            let out = TextOutput(handle: .standardOutput)
            let writer: any RowWriter = switch format {
            case .table: TableRowWriter(out, dim: Terminal.standardOutputIsTerminal)
            case .json: JSONRowWriter(out)
            case .csv: CSVRowWriter(out, blobs: .summarized)
            }
            var rowCount = 0
            try Database.with(database) { db in
                try statement.run(db, arguments: values, wrapped: page != nil || size != nil) {
                    if page != nil || size != nil {
                        try printPage(db, statement.sql, values, writer, rowCount: &rowCount)
                    } else {
                        try db.each(statement.sql, arguments: StatementArguments(values)) { record in
                            writer.write(columns: record.columnNames, row: try Database.values(of: record))
                            rowCount += 1
                            return true
                        }
                    }
                }
            }
            writer.finish()
            if format == .table && rowCount == 0 { Terminal.standardError.write("(no rows)\n") }
        }
    }

    /// One page through `Db.paginate`: the statement becomes a sub-query, so that any SELECT
    /// (with a WITH clause, GROUP BY, a trailing ORDER BY, …) is counted and paged as written.
    private func printPage(_ db: Db, _ sql: String, _ values: [DatabaseArgument], _ writer: any RowWriter, rowCount: inout Int) throws {
        // The closing parenthesis on its own line: a trailing `-- comment` cannot swallow it.
        let result = try db.paginate(page ?? 1, size ?? 20, "select *", "from (\n\(sql)\n)", arguments: StatementArguments(values))
        for record in result.list {
            writer.write(columns: record.columnNames, row: try Database.values(of: record))
            rowCount += 1
        }
        if format == .table {
            Terminal.standardError.write("page \(result.pageNumber) of \(result.totalPage) (\(result.totalRow) rows in all)\n")
        }
    }
}

/// How a placeholder value typed on the command line is bound.
enum ArgumentTyping {
    static func value(_ text: String, forceText: Bool) -> DatabaseValue {
        if forceText { return .text(text) }
        // Only the canonical spelling: "007" and "+5" stay text.
        if let integer = Int64(text), String(integer) == text { return .integer(integer) }
        if isDecimal(text), let real = Double(text), real.isFinite { return .real(real) }
        return .text(text)
    }

    /// `-?(digits[.digits] | .digits)([eE][+-]?digits)?` with a point or an exponent.
    static func isDecimal(_ text: String) -> Bool {
        var chars = Substring(text)
        if chars.first == "-" { chars.removeFirst() }
        let integerDigits = chars.prefix(while: \.isASCIIDigit)
        chars.removeFirst(integerDigits.count)
        var fractionDigits = 0
        var hasPoint = false
        if chars.first == "." {
            hasPoint = true
            chars.removeFirst()
            let fraction = chars.prefix(while: \.isASCIIDigit)
            fractionDigits = fraction.count
            chars.removeFirst(fraction.count)
        }
        guard integerDigits.count + fractionDigits > 0 else { return false }
        var hasExponent = false
        if let e = chars.first, e == "e" || e == "E" {
            chars.removeFirst()
            if let sign = chars.first, sign == "+" || sign == "-" { chars.removeFirst() }
            let exponent = chars.prefix(while: \.isASCIIDigit)
            guard !exponent.isEmpty else { return false }
            chars.removeFirst(exponent.count)
            hasExponent = true
        }
        return chars.isEmpty && (hasPoint || hasExponent)
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
}
