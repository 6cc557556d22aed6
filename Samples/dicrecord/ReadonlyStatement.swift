import DicRecord

/// A statement typed by the user, run on a readonly database.
///
/// DicRecord sends a statement to a reader connection only when it begins with SELECT, VALUES,
/// EXPLAIN or WITH (and, for WITH, SQLite says it does not write); anything else it refuses on a
/// readonly database without asking SQLite, so a mistyped first keyword would be reported as
/// "writes are refused". The tool therefore drops leading comments before running a statement,
/// and when DicRecord refuses it, prepares it under EXPLAIN (which never runs it) to give
/// SQLite's own error, with its position, or else says why it cannot run.
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
            // Preparing reports syntax errors, unknown tables and columns, with SQLite's offset.
            _ = try db.find("explain " + sql, arguments: arguments)
            let word = firstWord
            if word == "pragma" {
                throw ToolError("""
                    a PRAGMA statement cannot run on a database opened readonly; use its table-valued \
                    function, e.g. select * from pragma_table_info('t')
                    """)
            }
            throw ToolError("the \(word.uppercased()) statement may write, and query opens the database readonly (only import writes)")
        } catch where wrapped {
            // SQLite's message about the statement around it would mislead: ask about the statement alone.
            _ = try db.find("explain " + sql, arguments: arguments)
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
