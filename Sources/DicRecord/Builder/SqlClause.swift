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
    /// ```swift
    /// "age".gt(18).sql   // "age > ?"
    /// ```
    public let sql: String
    /// The arguments of the `?` placeholders of `sql`, in order.
    /// ```swift
    /// "age".between(13, 19).arguments   // [13, 19]
    /// ```
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

    /// The SQL text (the arguments are not included).
    /// ```swift
    /// print("age".gt(18))   // age > ?
    /// ```
    public var description: String { sql }

    /// This clause as an operand of an operator binding as tightly as `context`.
    func operand(of context: Precedence) -> String {
        precedence < context ? "(\(sql))" : sql
    }
}

extension SqlClause: ExpressibleByStringLiteral {
    /// A string literal where a clause is expected is raw SQL: `.where("a.id = b.a_id")`.
    /// ```swift
    /// let rows = try Db.find(Select().from("student", "teacher").where("student.teacher_id = teacher.id"))
    /// ```
    public init(stringLiteral sql: String) {
        self.init(sql, [], .or)  // raw SQL may hold an OR: parenthesized when combined
    }
}

extension SqlClause: ExpressibleByIntegerLiteral {
    /// An integer literal where a clause is expected is written as it is: `.where(1)` is `WHERE 1`.
    /// ```swift
    /// let all = Select().from("student").where(1)   // SELECT * FROM student WHERE 1
    /// ```
    public init(integerLiteral value: Int) {
        self.init(String(value), [], .atom)
    }
}

/// Anything that can stand in an SQL expression: a `String` is a column name (quoted when it
/// needs it), an `Int` a number written into the SQL, a ``SqlClause`` itself, a ``Select`` a
/// sub-query in parentheses.
/// ```swift
/// let query = Select("name", SQL.count().as("n")).from("student").groupBy("name")
/// ```
public protocol SqlExpression: Sendable {
    /// This expression as a clause.
    /// ```swift
    /// "age".sqlClause.sql   // "age"
    /// ```
    var sqlClause: SqlClause { get }
}

extension String: SqlExpression {
    /// The column this string names: `"age"` → `age`, `"order"` → `"order"`, `"t.*"` → `t.*`.
    /// ```swift
    /// "order".sqlClause.sql   // "\"order\""
    /// ```
    public var sqlClause: SqlClause { .column(self) }
}

extension Int: SqlExpression {
    /// The number, written into the SQL (`LIMIT 5`, `SUBSTR(name, 5)`).
    public var sqlClause: SqlClause { SqlClause(String(self), [], .atom) }
}

extension SqlClause: SqlExpression {
    /// The clause itself.
    /// ```swift
    /// SqlClause.raw("age > ?", 17).sqlClause.sql   // "age > ?"
    /// ```
    public var sqlClause: SqlClause { self }
}

// Declared on the protocol, so that `.raw(…)`, `.value(…)` and `.column(…)` also work where any
// `SqlExpression` is expected (select lists, function arguments).
extension SqlExpression where Self == SqlClause {
    /// A raw SQL fragment with its own arguments: `.raw("COUNT(*) AS num")`, `.raw("age > ? + 1", 17)`.
    /// ```swift
    /// let rows = try Db.find(Select(.raw("count(*) as num")).from("student").where(.raw("age > ? + 1", 17)))
    /// ```
    public static func raw(_ sql: String, _ arguments: DatabaseArgument...) -> SqlClause {
        SqlClause(sql, arguments, .or)  // raw SQL may hold an OR: parenthesized when combined
    }

    /// One bound value: `?` with `value` as its argument (patchwork's `SQLClauseArgValue`), for the
    /// places where a plain value would be written as SQL (function arguments, select lists).
    /// ```swift
    /// let query = Select("name", SQL.ifnull("nickname", .value("none"))).from("student")
    /// ```
    public static func value(_ value: DatabaseArgument) -> SqlClause {
        SqlClause("?", [value], .atom)
    }

    /// A column (or `table.column`) name, quoted only when it needs it: `.column("order")` is `"order"`.
    /// ```swift
    /// Select(.column("order")).from("student")   // SELECT "order" FROM student
    /// ```
    public static func column(_ name: String) -> SqlClause {
        SqlClause(SqlIdentifier.render(name), [], .atom)
    }

}

// MARK: Operators

extension SqlExpression {
    /// `self = ?`; a ``SqlClause`` or ``Select`` on the right is written as an expression instead.
    /// ```swift
    /// "name".eq("Jack")                 // name = ?   ["Jack"]
    /// ```
    public func eq(_ value: DatabaseArgument) -> SqlClause { compare("=", value) }
    /// `self != ?`.
    /// ```swift
    /// "name".neq("Jack")                // name != ?  ["Jack"]
    /// ```
    public func neq(_ value: DatabaseArgument) -> SqlClause { compare("!=", value) }
    /// `self < ?`.
    /// ```swift
    /// "age".lt(13)                      // age < ?  [13]
    /// ```
    public func lt(_ value: DatabaseArgument) -> SqlClause { compare("<", value) }
    /// `self <= ?`.
    /// ```swift
    /// "age".le(12)                      // age <= ?  [12]
    /// ```
    public func le(_ value: DatabaseArgument) -> SqlClause { compare("<=", value) }
    /// `self > ?`: `"age".gt(18)`.
    /// ```swift
    /// let adults = Select().from("student").where("age".gt(18))
    /// ```
    public func gt(_ value: DatabaseArgument) -> SqlClause { compare(">", value) }
    /// `self >= ?`.
    /// ```swift
    /// "age".ge(18)                      // age >= ?  [18]
    /// ```
    public func ge(_ value: DatabaseArgument) -> SqlClause { compare(">=", value) }
    /// `self IS ?` (true for two NULLs).
    /// ```swift
    /// "teacher_id".is(nil)              // teacher_id IS ?  [nil]
    /// ```
    public func `is`(_ value: DatabaseArgument) -> SqlClause { compare("IS", value) }
    /// `self IS NOT ?`.
    /// ```swift
    /// "teacher_id".isNot(nil)           // teacher_id IS NOT ?  [nil]
    /// ```
    public func isNot(_ value: DatabaseArgument) -> SqlClause { compare("IS NOT", value) }
    /// `self LIKE ?` with `pattern` as it is (`%` and `_` are wildcards).
    /// ```swift
    /// "name".like("J_ck%")              // name LIKE ?  ["J_ck%"]
    /// ```
    public func like(_ pattern: DatabaseArgument) -> SqlClause { compare("LIKE", pattern) }
    /// `self LIKE ?` with `prefix + "%"`: the values that start with `prefix`.
    /// ```swift
    /// "name".prefixLike("张")            // name LIKE ?  ["张%"]
    /// ```
    public func prefixLike(_ prefix: String) -> SqlClause { compare("LIKE", prefix + "%") }
    /// `self LIKE ?` with `"%" + suffix`: the values that end with `suffix`.
    /// ```swift
    /// "email".suffixLike("@example.com") // email LIKE ?  ["%@example.com"]
    /// ```
    public func suffixLike(_ suffix: String) -> SqlClause { compare("LIKE", "%" + suffix) }
    /// `self LIKE ?` with `"%" + part + "%"`: the values that contain `part`.
    /// ```swift
    /// "name".containsLike("ack")        // name LIKE ?  ["%ack%"]
    /// ```
    public func containsLike(_ part: String) -> SqlClause { compare("LIKE", "%" + part + "%") }

    /// `self IS NULL`.
    /// ```swift
    /// "born".isNull                     // born IS NULL
    /// ```
    public var isNull: SqlClause { SqlClause("\(sqlClause.operand(of: .atom)) IS NULL", sqlClause.arguments, .comparison) }
    /// `self IS NOT NULL`.
    /// ```swift
    /// "born".isNotNull                  // born IS NOT NULL
    /// ```
    public var isNotNull: SqlClause { SqlClause("\(sqlClause.operand(of: .atom)) IS NOT NULL", sqlClause.arguments, .comparison) }

    /// `self BETWEEN ? AND ?`.
    /// ```swift
    /// "age".between(13, 19)             // age BETWEEN ? AND ?  [13, 19]
    /// ```
    public func between(_ low: DatabaseArgument, _ high: DatabaseArgument) -> SqlClause {
        let left = sqlClause, a = SqlClause.operandValue(low), b = SqlClause.operandValue(high)
        return SqlClause("\(left.operand(of: .atom)) BETWEEN \(a.operand(of: .atom)) AND \(b.operand(of: .atom))",
                         left.arguments + a.arguments + b.arguments, .comparison)
    }

    /// `self IN (?, ?, ?)`. An empty list matches nothing: it is written `1 = 0` (PostgreSQL refuses `IN ()`).
    /// ```swift
    /// "id".in([1, 2, 3])                // id IN (?, ?, ?)  [1, 2, 3]
    /// ```
    public func `in`(_ values: [DatabaseArgument]) -> SqlClause { membership("IN", values) }
    /// `self IN (SELECT …)`.
    /// ```swift
    /// "teacher_id".in(Select("id").from("teacher").where("age".gt(40)))
    /// ```
    public func `in`(_ query: Select) -> SqlClause { membership("IN", query) }
    /// `self NOT IN (?, ?, ?)`. An empty list matches every row: it is written `1 = 1`.
    /// ```swift
    /// "id".notIn([1, 2])                // id NOT IN (?, ?)  [1, 2]
    /// ```
    public func notIn(_ values: [DatabaseArgument]) -> SqlClause { membership("NOT IN", values) }
    /// `self NOT IN (SELECT …)`.
    /// ```swift
    /// "id".notIn(Select("student_id").from("enrollment"))
    /// ```
    public func notIn(_ query: Select) -> SqlClause { membership("NOT IN", query) }

    /// `self AND other`, with parentheses around an OR on either side.
    /// ```swift
    /// "age".gt(12).and("name".prefixLike("J"))   // age > ? AND name LIKE ?
    /// ```
    public func and(_ other: SqlExpression) -> SqlClause { combine("AND", .and, other) }
    /// `self OR other`.
    /// ```swift
    /// "age".lt(6).or("age".gt(60))      // age < ? OR age > ?
    /// ```
    public func or(_ other: SqlExpression) -> SqlClause { combine("OR", .or, other) }
    /// `NOT self`, with parentheses around a compound condition.
    /// ```swift
    /// "name".prefixLike("J").not        // NOT name LIKE ?
    /// ```
    public var not: SqlClause {
        SqlClause("NOT \(sqlClause.operand(of: .comparison))", sqlClause.arguments, .not)
    }

    /// `self DESC`, for ORDER BY.
    /// ```swift
    /// Select().from("student").orderBy("age".desc)   // … ORDER BY age DESC
    /// ```
    public var desc: SqlClause { SqlClause("\(sqlClause.operand(of: .not)) DESC", sqlClause.arguments, .term) }
    /// `self ASC`, for ORDER BY.
    /// ```swift
    /// Select().from("student").orderBy("name".asc)   // … ORDER BY name ASC
    /// ```
    public var asc: SqlClause { SqlClause("\(sqlClause.operand(of: .not)) ASC", sqlClause.arguments, .term) }
    /// `self AS alias`, for select lists and sub-queries.
    /// ```swift
    /// Select("name", SQL.count().as("n")).from("student").groupBy("name")   // SELECT name, COUNT(*) AS n …
    /// ```
    public func `as`(_ alias: String) -> SqlClause {
        SqlClause("\(sqlClause.operand(of: .not)) AS \(SqlIdentifier.render(alias))", sqlClause.arguments, .term)
    }

    private func compare(_ op: String, _ value: DatabaseArgument) -> SqlClause {
        let left = sqlClause, right = SqlClause.operandValue(value)
        // SQLite's comparison operators have different precedences and group left to right:
        // a compound operand on either side keeps its parentheses.
        return SqlClause("\(left.operand(of: .atom)) \(op) \(right.operand(of: .atom))",
                         left.arguments + right.arguments, .comparison)
    }

    private func membership(_ op: String, _ values: [DatabaseArgument]) -> SqlClause {
        // As SQLite reads `x IN ()`: false whatever x is, NULL included (and NOT IN: true).
        if values.isEmpty { return SqlClause(op == "IN" ? "1 = 0" : "1 = 1", [], .comparison) }
        let left = sqlClause
        let items = values.map(SqlClause.operandValue)
        return SqlClause("\(left.operand(of: .atom)) \(op) (\(items.map(\.sql).joined(separator: ", ")))",
                         left.arguments + items.flatMap(\.arguments), .comparison)
    }

    private func membership(_ op: String, _ query: Select) -> SqlClause {
        let left = sqlClause
        return SqlClause("\(left.operand(of: .atom)) \(op) (\(query.sql))", left.arguments + query.arguments, .comparison)
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
/// ```swift
/// let query = Select(SQL.upper("name"), SQL.count()).from("student").groupBy(SQL.upper("name"))
/// ```
public enum SQL {
    /// `NAME(arg, …)`, the name in capitals: `SQL.function("substr", "name", 5)` → `SUBSTR(name, 5)`.
    /// ```swift
    /// Select(SQL.function("instr", "name", SqlClause.value("a"))).from("student")   // SELECT INSTR(name, ?) …
    /// ```
    public static func function(_ name: String, _ arguments: SqlExpression...) -> SqlClause {
        call(name, arguments)
    }

    static func call(_ name: String, _ arguments: [SqlExpression]) -> SqlClause {
        let clauses = arguments.map(\.sqlClause)
        return SqlClause("\(name.uppercased())(\(clauses.map(\.sql).joined(separator: ", ")))", clauses.flatMap(\.arguments), .atom)
    }

    /// `COUNT(expression)`, `COUNT(*)` by default.
    /// ```swift
    /// let n = try Db.queryFirst(Select(SQL.count()).from("student"), as: Int.self)
    /// ```
    public static func count(_ expression: SqlExpression = "*") -> SqlClause { call("count", [expression]) }
    /// `SUM(expression)`: nil (NULL) when no row.
    /// ```swift
    /// Select(SQL.sum("score")).from("exam")          // SELECT SUM(score) FROM exam
    /// ```
    public static func sum(_ expression: SqlExpression) -> SqlClause { call("sum", [expression]) }
    /// `TOTAL(expression)`: the sum as a REAL, 0.0 when no row.
    /// ```swift
    /// Select(SQL.total("score")).from("exam")        // SELECT TOTAL(score) FROM exam
    /// ```
    public static func total(_ expression: SqlExpression) -> SqlClause { call("total", [expression]) }
    /// `AVG(expression)`.
    /// ```swift
    /// Select(SQL.avg("age")).from("student")         // SELECT AVG(age) FROM student
    /// ```
    public static func avg(_ expression: SqlExpression) -> SqlClause { call("avg", [expression]) }
    /// `MAX(expression)`, or with several arguments the largest of them.
    /// ```swift
    /// Select(SQL.max("age")).from("student")         // SELECT MAX(age) FROM student
    /// ```
    public static func max(_ expressions: SqlExpression...) -> SqlClause { call("max", expressions) }
    /// `MIN(expression)`, or with several arguments the smallest of them.
    /// ```swift
    /// Select(SQL.min("age")).from("student")         // SELECT MIN(age) FROM student
    /// ```
    public static func min(_ expressions: SqlExpression...) -> SqlClause { call("min", expressions) }
    /// `ABS(expression)`.
    /// ```swift
    /// Select().from("account").where(SQL.abs("balance").gt(100))
    /// ```
    public static func abs(_ expression: SqlExpression) -> SqlClause { call("abs", [expression]) }
    /// `LENGTH(expression)`: characters of a text, bytes of a blob.
    /// ```swift
    /// Select().from("student").where(SQL.length("name").gt(10))
    /// ```
    public static func length(_ expression: SqlExpression) -> SqlClause { call("length", [expression]) }
    /// `LOWER(expression)`.
    /// ```swift
    /// Select().from("student").where(SQL.lower("name").eq("jack"))
    /// ```
    public static func lower(_ expression: SqlExpression) -> SqlClause { call("lower", [expression]) }
    /// `UPPER(expression)`.
    /// ```swift
    /// Select(SQL.upper("name")).from("student")      // SELECT UPPER(name) FROM student
    /// ```
    public static func upper(_ expression: SqlExpression) -> SqlClause { call("upper", [expression]) }
    /// `TRIM(expression)`.
    /// ```swift
    /// Select(SQL.trim("name")).from("student")       // SELECT TRIM(name) FROM student
    /// ```
    public static func trim(_ expression: SqlExpression) -> SqlClause { call("trim", [expression]) }
    /// `ROUND(expression, digits)`, 0 digits by default.
    /// ```swift
    /// Select(SQL.round(SQL.avg("age"), 1)).from("student")   // SELECT ROUND(AVG(age), 1) FROM student
    /// ```
    public static func round(_ expression: SqlExpression, _ digits: Int = 0) -> SqlClause { call("round", [expression, digits]) }
    /// `COALESCE(a, b, …)`: the first argument that is not NULL.
    /// ```swift
    /// Select(SQL.coalesce("nickname", "name")).from("student")
    /// ```
    public static func coalesce(_ expressions: SqlExpression...) -> SqlClause { call("coalesce", expressions) }
    /// `IFNULL(expression, fallback)`.
    /// ```swift
    /// Select(SQL.ifnull("nickname", .value("none"))).from("student")   // SELECT IFNULL(nickname, ?) …
    /// ```
    public static func ifnull(_ expression: SqlExpression, _ fallback: SqlExpression) -> SqlClause { call("ifnull", [expression, fallback]) }
    /// `TYPEOF(expression)`: "integer", "real", "text", "blob" or "null".
    /// ```swift
    /// Select(SQL.typeof("born")).from("student")     // SELECT TYPEOF(born) FROM student
    /// ```
    public static func typeof(_ expression: SqlExpression) -> SqlClause { call("typeof", [expression]) }
    /// `SUBSTR(x, start)` or `SUBSTR(x, start, length)`.
    /// ```swift
    /// Select(SQL.substr("name", 1, 3)).from("student")   // SELECT SUBSTR(name, 1, 3) FROM student
    /// ```
    public static func substr(_ expression: SqlExpression, _ start: SqlExpression, _ length: SqlExpression? = nil) -> SqlClause {
        call("substr", [expression, start] + (length.map { [$0] } ?? []))
    }
    /// `REPLACE(x, find, with)`: `SQL.replace("name", .value("a"), .value("b"))`.
    /// ```swift
    /// Update("student").set(["name": SQL.replace("name", .value("a"), .value("b"))])
    /// ```
    public static func replace(_ expression: SqlExpression, _ find: SqlExpression, _ with: SqlExpression) -> SqlClause {
        call("replace", [expression, find, with])
    }

    /// `NOT (condition)`.
    /// ```swift
    /// Select().from("student").where(SQL.not("age".gt(12).or("name".isNull)))
    /// ```
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
/// ```swift
/// let label = SQL.case().when("age".lt(13)).then("child").else("teen").end()
/// ```
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

    /// Adds `WHEN value` (bound, or an expression when it is a clause).
    /// ```swift
    /// SQL.case("grade").when(1).then("first").end()
    /// ```
    public func when(_ value: DatabaseArgument) -> SqlCase { adding("WHEN", value) }
    /// Adds `THEN value` after the last `when`.
    /// ```swift
    /// SQL.case("grade").when(1).then("first").end()
    /// ```
    public func then(_ value: DatabaseArgument) -> SqlCase { adding("THEN", value) }
    /// Adds `ELSE value`, used when no `when` matches.
    /// ```swift
    /// SQL.case("grade").when(1).then("first").else("other").end()
    /// ```
    public func `else`(_ value: DatabaseArgument) -> SqlCase { adding("ELSE", value) }

    /// The finished expression.
    /// ```swift
    /// Select("name", SQL.case("grade").when(1).then("first").else("other").end().as("label")).from("student")
    /// ```
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

    /// A table in FROM or JOIN: a name, or a name and an alias (`"student s"`, `"student AS s"`),
    /// each part quoted only when it needs it. A table whose name holds a space is `.column("my table")`.
    static func source(_ expression: SqlExpression) -> SqlClause {
        guard let name = expression as? String else { return expression.sqlClause }
        let parts = name.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }).map(String.init)
        switch parts.count {
        case 2:
            return SqlClause("\(render(parts[0])) \(single(parts[1]))", [], .atom)
        case 3 where parts[1].caseInsensitiveCompare("as") == .orderedSame:
            return SqlClause("\(render(parts[0])) AS \(single(parts[2]))", [], .atom)
        default:
            return SqlClause(render(name), [], .atom)
        }
    }

    static func single(_ name: String) -> String {
        isPlain(name) && !SQLiteDialect.isKeyword(name) ? name : SqlText.quote(name)
    }

    /// Letters, digits and underscores, not starting with a digit (ASCII only).
    static func isPlain(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
        return name.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "_")
        }
    }

}
