import CSQLite
import Foundation

/// A piece of SQL and the arguments bound to its `?` placeholders, in order (patchwork's
/// `ALSQLClause`). Clauses combine into conditions and statements without splicing values into
/// the SQL text:
/// ```swift
/// let adults = "age".gt(18).and("name".prefixLike("alex"))   // age > ? AND name LIKE ?  [18, "alex%"]
/// let rows = try Db.find(Select().from("students").where(adults).orderBy("age".desc).limit(10))
/// ```
/// Where a clause is expected, a string literal is raw SQL (`"students._id = courses._id"`) and an
/// integer literal is written as it is (`.where(1)`). A string held in a variable is never taken as
/// SQL: use ``raw(_:_:)`` on purpose, `"name".eq(text)` to compare with it, or ``column(_:)``.
public struct SqlClause: Sendable, CustomStringConvertible {
    /// The SQL text, with `?` where each argument goes.
    public let sql: String
    /// The arguments of the `?` placeholders of `sql`, in order.
    public let arguments: [DatabaseArgument]
    /// How tightly the clause binds, so that combining it adds parentheses only where needed.
    let precedence: Precedence

    enum Precedence: Int, Comparable {
        case term = 0        // an ordering term (`age DESC`) or an alias (`x AS y`): not an operand
        case or = 10
        case and = 20
        case not = 30
        case comparison = 50
        case atom = 100

        static func < (a: Precedence, b: Precedence) -> Bool { a.rawValue < b.rawValue }
    }

    init(_ sql: String, _ arguments: [DatabaseArgument], _ precedence: Precedence) {
        self.sql = sql
        self.arguments = arguments
        self.precedence = precedence
    }

    public var description: String { sql }

    /// This clause as an operand of an operator binding as tightly as `context`.
    func operand(of context: Precedence) -> String {
        precedence < context ? "(\(sql))" : sql
    }
}

extension SqlClause: ExpressibleByStringLiteral {
    /// A string literal where a clause is expected is raw SQL: `.where("a.id = b.a_id")`.
    public init(stringLiteral sql: String) {
        self.init(sql, [], .comparison)
    }
}

extension SqlClause: ExpressibleByIntegerLiteral {
    /// An integer literal where a clause is expected is written as it is: `.where(1)` is `WHERE 1`.
    public init(integerLiteral value: Int) {
        self.init(String(value), [], .atom)
    }
}

/// Anything that can stand in an SQL expression: a `String` is a column name (quoted when it
/// needs it), an `Int` a number written into the SQL, a ``SqlClause`` itself, a ``Select`` a
/// sub-query in parentheses.
public protocol SqlExpression: Sendable {
    /// This expression as a clause.
    var sqlClause: SqlClause { get }
}

extension String: SqlExpression {
    /// The column this string names: `"age"` → `age`, `"order"` → `"order"`, `"t.*"` → `t.*`.
    public var sqlClause: SqlClause { .column(self) }
}

extension Int: SqlExpression {
    /// The number, written into the SQL (`LIMIT 5`, `SUBSTR(name, 5)`).
    public var sqlClause: SqlClause { SqlClause(String(self), [], .atom) }
}

extension SqlClause: SqlExpression {
    public var sqlClause: SqlClause { self }
}

// Declared on the protocol, so that `.raw(…)`, `.value(…)` and `.column(…)` also work where any
// `SqlExpression` is expected (select lists, function arguments).
extension SqlExpression where Self == SqlClause {
    /// A raw SQL fragment with its own arguments: `.raw("COUNT(*) AS num")`, `.raw("age > ? + 1", 17)`.
    public static func raw(_ sql: String, _ arguments: DatabaseArgument...) -> SqlClause {
        SqlClause(sql, arguments, .comparison)
    }

    /// One bound value: `?` with `value` as its argument (patchwork's `SQLClauseArgValue`), for the
    /// places where a plain value would be written as SQL (function arguments, select lists).
    public static func value(_ value: DatabaseArgument) -> SqlClause {
        SqlClause("?", [value], .atom)
    }

    /// A column (or `table.column`) name, quoted only when it needs it: `.column("order")` is `"order"`.
    public static func column(_ name: String) -> SqlClause {
        SqlClause(SqlIdentifier.render(name), [], .atom)
    }

}

// MARK: Operators

extension SqlExpression {
    /// `self = ?`; a ``SqlClause`` or ``Select`` on the right is written as an expression instead.
    public func eq(_ value: DatabaseArgument) -> SqlClause { compare("=", value) }
    /// `self != ?`.
    public func neq(_ value: DatabaseArgument) -> SqlClause { compare("!=", value) }
    /// `self < ?`.
    public func lt(_ value: DatabaseArgument) -> SqlClause { compare("<", value) }
    /// `self <= ?`.
    public func le(_ value: DatabaseArgument) -> SqlClause { compare("<=", value) }
    /// `self > ?`: `"age".gt(18)`.
    public func gt(_ value: DatabaseArgument) -> SqlClause { compare(">", value) }
    /// `self >= ?`.
    public func ge(_ value: DatabaseArgument) -> SqlClause { compare(">=", value) }
    /// `self IS ?` (true for two NULLs).
    public func `is`(_ value: DatabaseArgument) -> SqlClause { compare("IS", value) }
    /// `self IS NOT ?`.
    public func isNot(_ value: DatabaseArgument) -> SqlClause { compare("IS NOT", value) }
    /// `self LIKE ?` with `pattern` as it is (`%` and `_` are wildcards).
    public func like(_ pattern: DatabaseArgument) -> SqlClause { compare("LIKE", pattern) }
    /// `self LIKE ?` with `prefix + "%"`: the values that start with `prefix`.
    public func prefixLike(_ prefix: String) -> SqlClause { compare("LIKE", prefix + "%") }
    /// `self LIKE ?` with `"%" + suffix`: the values that end with `suffix`.
    public func suffixLike(_ suffix: String) -> SqlClause { compare("LIKE", "%" + suffix) }
    /// `self LIKE ?` with `"%" + part + "%"`: the values that contain `part`.
    public func containsLike(_ part: String) -> SqlClause { compare("LIKE", "%" + part + "%") }

    /// `self IS NULL`.
    public var isNull: SqlClause { SqlClause("\(sqlClause.operand(of: .comparison)) IS NULL", sqlClause.arguments, .comparison) }
    /// `self IS NOT NULL`.
    public var isNotNull: SqlClause { SqlClause("\(sqlClause.operand(of: .comparison)) IS NOT NULL", sqlClause.arguments, .comparison) }

    /// `self BETWEEN ? AND ?`.
    public func between(_ low: DatabaseArgument, _ high: DatabaseArgument) -> SqlClause {
        let left = sqlClause, a = SqlClause.operandValue(low), b = SqlClause.operandValue(high)
        return SqlClause("\(left.operand(of: .comparison)) BETWEEN \(a.operand(of: .comparison)) AND \(b.operand(of: .comparison))",
                         left.arguments + a.arguments + b.arguments, .comparison)
    }

    /// `self IN (?, ?, ?)`. An empty list matches nothing (`IN ()`, which SQLite accepts).
    public func `in`(_ values: [DatabaseArgument]) -> SqlClause { membership("IN", values) }
    /// `self IN (SELECT …)`.
    public func `in`(_ query: Select) -> SqlClause { membership("IN", query) }
    /// `self NOT IN (?, ?, ?)`. An empty list matches every row.
    public func notIn(_ values: [DatabaseArgument]) -> SqlClause { membership("NOT IN", values) }
    /// `self NOT IN (SELECT …)`.
    public func notIn(_ query: Select) -> SqlClause { membership("NOT IN", query) }

    /// `self AND other`, with parentheses around an OR on either side.
    public func and(_ other: SqlExpression) -> SqlClause { combine("AND", .and, other) }
    /// `self OR other`.
    public func or(_ other: SqlExpression) -> SqlClause { combine("OR", .or, other) }
    /// `NOT self`, with parentheses around a compound condition.
    public var not: SqlClause {
        SqlClause("NOT \(sqlClause.operand(of: .comparison))", sqlClause.arguments, .not)
    }

    /// `self DESC`, for ORDER BY.
    public var desc: SqlClause { SqlClause("\(sqlClause.operand(of: .not)) DESC", sqlClause.arguments, .term) }
    /// `self ASC`, for ORDER BY.
    public var asc: SqlClause { SqlClause("\(sqlClause.operand(of: .not)) ASC", sqlClause.arguments, .term) }
    /// `self AS alias`, for select lists and sub-queries.
    public func `as`(_ alias: String) -> SqlClause {
        SqlClause("\(sqlClause.operand(of: .not)) AS \(SqlIdentifier.render(alias))", sqlClause.arguments, .term)
    }

    private func compare(_ op: String, _ value: DatabaseArgument) -> SqlClause {
        let left = sqlClause, right = SqlClause.operandValue(value)
        return SqlClause("\(left.operand(of: .comparison)) \(op) \(right.operand(of: .comparison))",
                         left.arguments + right.arguments, .comparison)
    }

    private func membership(_ op: String, _ values: [DatabaseArgument]) -> SqlClause {
        let left = sqlClause
        let items = values.map(SqlClause.operandValue)
        return SqlClause("\(left.operand(of: .comparison)) \(op) (\(items.map(\.sql).joined(separator: ", ")))",
                         left.arguments + items.flatMap(\.arguments), .comparison)
    }

    private func membership(_ op: String, _ query: Select) -> SqlClause {
        let left = sqlClause
        return SqlClause("\(left.operand(of: .comparison)) \(op) (\(query.sql))", left.arguments + query.arguments, .comparison)
    }

    private func combine(_ op: String, _ precedence: SqlClause.Precedence, _ other: SqlExpression) -> SqlClause {
        let left = sqlClause, right = other.sqlClause
        return SqlClause("\(left.operand(of: precedence)) \(op) \(right.operand(of: precedence))",
                         left.arguments + right.arguments, precedence)
    }
}

extension SqlClause {
    /// A value on the right of an operator: bound as `?`, unless it is itself an expression.
    static func operandValue(_ value: DatabaseArgument) -> SqlClause {
        switch value {
        case let clause as SqlClause: return clause
        case let query as Select: return query.sqlClause
        default: return .value(value)
        }
    }
}

// MARK: Functions and CASE

/// SQL functions and CASE, for clauses: `SQL.upper("province")`, `SQL.count("*")`,
/// `SQL.substr("name", 1, 3)`. Strings are column names, integers are written into the SQL, and
/// ``SqlClause/value(_:)`` binds a value.
public enum SQL {
    /// `NAME(arg, …)`, the name in capitals: `SQL.function("substr", "name", 5)` → `SUBSTR(name, 5)`.
    public static func function(_ name: String, _ arguments: SqlExpression...) -> SqlClause {
        call(name, arguments)
    }

    static func call(_ name: String, _ arguments: [SqlExpression]) -> SqlClause {
        let clauses = arguments.map(\.sqlClause)
        return SqlClause("\(name.uppercased())(\(clauses.map(\.sql).joined(separator: ", ")))", clauses.flatMap(\.arguments), .atom)
    }

    public static func count(_ expression: SqlExpression = "*") -> SqlClause { call("count", [expression]) }
    public static func sum(_ expression: SqlExpression) -> SqlClause { call("sum", [expression]) }
    public static func total(_ expression: SqlExpression) -> SqlClause { call("total", [expression]) }
    public static func avg(_ expression: SqlExpression) -> SqlClause { call("avg", [expression]) }
    public static func max(_ expressions: SqlExpression...) -> SqlClause { call("max", expressions) }
    public static func min(_ expressions: SqlExpression...) -> SqlClause { call("min", expressions) }
    public static func abs(_ expression: SqlExpression) -> SqlClause { call("abs", [expression]) }
    public static func length(_ expression: SqlExpression) -> SqlClause { call("length", [expression]) }
    public static func lower(_ expression: SqlExpression) -> SqlClause { call("lower", [expression]) }
    public static func upper(_ expression: SqlExpression) -> SqlClause { call("upper", [expression]) }
    public static func trim(_ expression: SqlExpression) -> SqlClause { call("trim", [expression]) }
    public static func round(_ expression: SqlExpression, _ digits: Int = 0) -> SqlClause { call("round", [expression, digits]) }
    public static func coalesce(_ expressions: SqlExpression...) -> SqlClause { call("coalesce", expressions) }
    public static func ifnull(_ expression: SqlExpression, _ fallback: SqlExpression) -> SqlClause { call("ifnull", [expression, fallback]) }
    public static func typeof(_ expression: SqlExpression) -> SqlClause { call("typeof", [expression]) }
    /// `SUBSTR(x, start)` or `SUBSTR(x, start, length)`.
    public static func substr(_ expression: SqlExpression, _ start: SqlExpression, _ length: SqlExpression? = nil) -> SqlClause {
        call("substr", [expression, start] + (length.map { [$0] } ?? []))
    }
    /// `REPLACE(x, find, with)`: `SQL.replace("name", .value("a"), .value("b"))`.
    public static func replace(_ expression: SqlExpression, _ find: SqlExpression, _ with: SqlExpression) -> SqlClause {
        call("replace", [expression, find, with])
    }

    /// `NOT (condition)`.
    public static func not(_ condition: SqlExpression) -> SqlClause { condition.not }

    /// `CASE base WHEN … THEN … ELSE … END`; without `base`, `CASE WHEN condition THEN …`.
    /// ```swift
    /// SQL.case("col1").when(0).then("zero").when(1).then("one").else("others").end()
    /// // CASE col1 WHEN ? THEN ? WHEN ? THEN ? ELSE ? END   [0, "zero", 1, "one", "others"]
    /// ```
    public static func `case`(_ base: SqlExpression? = nil) -> SqlCase {
        SqlCase(base: base?.sqlClause)
    }
}

/// A CASE expression being built: `when`/`then` pairs, an optional `else`, then `end()`. Values
/// are bound; a ``SqlClause`` is written as an expression.
public struct SqlCase: Sendable {
    private var parts: [SqlClause]

    init(base: SqlClause?) {
        parts = [SqlClause("CASE", [], .atom)] + (base.map { [$0] } ?? [])
    }

    private func adding(_ keyword: String, _ value: DatabaseArgument) -> SqlCase {
        var copy = self
        let clause = SqlClause.operandValue(value)
        copy.parts.append(SqlClause(keyword + " " + clause.sql, clause.arguments, .atom))
        return copy
    }

    public func when(_ value: DatabaseArgument) -> SqlCase { adding("WHEN", value) }
    public func then(_ value: DatabaseArgument) -> SqlCase { adding("THEN", value) }
    public func `else`(_ value: DatabaseArgument) -> SqlCase { adding("ELSE", value) }

    /// The finished expression.
    public func end() -> SqlClause {
        let all = parts + [SqlClause("END", [], .atom)]
        return SqlClause(all.map(\.sql).joined(separator: " "), all.flatMap(\.arguments), .atom)
    }
}

// MARK: Identifiers

/// Column and table names, quoted only when they need it, so that plain names read as written.
enum SqlIdentifier {
    /// `age` → `age`, `order` → `"order"`, `my col` → `"my col"`, `students._id` → `students._id`,
    /// `t.*` → `t.*`, `*` → `*`.
    static func render(_ name: String) -> String {
        if name == "*" { return name }
        if name.contains(".") {
            let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count > 1, parts.allSatisfy({ !$0.isEmpty }) {
                return parts.enumerated().map { i, part in i == parts.count - 1 && part == "*" ? part : single(part) }
                    .joined(separator: ".")
            }
        }
        return single(name)
    }

    static func single(_ name: String) -> String {
        isPlain(name) && !isKeyword(name) ? name : SqlText.quote(name)
    }

    /// Letters, digits and underscores, not starting with a digit (ASCII only).
    static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

    /// An SQLite keyword (`order`, `group`, `index`, …), by SQLite's own list.
    static func isKeyword(_ name: String) -> Bool {
        name.withCString { sqlite3_keyword_check($0, Int32(strlen($0))) != 0 }
    }
}
