import DicRecord

/// A statement typed by the user, run on a readonly database.
///
/// On a readonly database DicRecord refuses a statement that SQLite says may write. The tool
/// drops leading comments and trailing semicolons before running a statement (so that `--page`
/// can wrap it), and turns a refusal into a plain explanation.
struct ReadonlyStatement {
    /// What the user typed.
    let typed: String
    /// What is run: `typed` without leading whitespace and comments, nor trailing whitespace and semicolons.
    let sql: String

    init(_ typed: String) {
        self.typed = typed
        var sql = Self.skippingLeadingComments(typed)
        while let last = sql.last, last == ";" || last.isWhitespace { sql.removeLast() }
        self.sql = String(sql)
    }

    /// Runs `body` (which runs `sql`, or with `wrapped`, a statement around it); a readonly refusal
    /// becomes SQLite's verdict on the statement.
    func run(_ db: Db, arguments: [DatabaseArgument], wrapped: Bool, _ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as DicRecordError where error.kind == .readonly {
            throw ToolError("the \(firstWord.uppercased()) statement may write, and query opens the database readonly (only import writes)")
        } catch where wrapped {
            // SQLite's message about the statement around it would mislead: ask about the statement alone.
            _ = try db.find("explain " + sql, arguments: StatementArguments(arguments))
            guard ["select", "values", "with"].contains(firstWord) else {
                throw ToolError("--page and --size need a query (SELECT, VALUES or WITH … SELECT), not \(firstWord.uppercased())")
            }
            throw error
        }
    }

    /// The lowercased first word of `sql`.
    var firstWord: String {
        String(sql.prefix { $0.isLetter }).lowercased()
    }

    private static func skippingLeadingComments(_ sql: String) -> Substring {
        var rest = Substring(sql)
        while true {
            rest = rest.drop { $0.isWhitespace }
            if rest.hasPrefix("--") {
                guard let newline = rest.firstIndex(of: "\n") else { return rest[rest.endIndex...] }
                rest = rest[rest.index(after: newline)...]
            } else if rest.hasPrefix("/*") {
                guard let end = rest.range(of: "*/") else { return rest[rest.endIndex...] }
                rest = rest[end.upperBound...]
            } else {
                return rest
            }
        }
    }
}
