import CSQLite
import Foundation

/// What the SQL DicRecord writes must know of SQLite's own dialect, asked of SQLite itself.
/// (Quoting rules that need no C call live with the SQL text: `SqlText`.)
extension EngineDialect {
    static let sqlite = EngineDialect(total: { "total(\($0))" })
}

enum SQLiteDialect {
    /// An SQLite keyword (`order`, `group`, `index`, …), by SQLite's own list: such a name is
    /// quoted wherever the library writes it. https://sqlite.org/c3ref/keyword_check.html
    static func isKeyword(_ name: String) -> Bool {
        name.withCString { sqlite3_keyword_check($0, Int32(strlen($0))) != 0 }
    }
}
