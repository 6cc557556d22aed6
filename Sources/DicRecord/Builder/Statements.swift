import Foundation

/// A statement built from clauses: its SQL text and the arguments of its placeholders, in order.
/// Run it with `Db` (`try Db.find(select)`, `try Db.update(insert)`) or a dao.
/// ```swift
/// let query: any SqlStatement = Select().from("student").where("age".gt(12))
/// print(query.sql, query.arguments)   // SELECT * FROM student WHERE age > ? [12]
/// ```
public protocol SqlStatement: Sendable {
    /// The SQL text, with `?` where each argument goes.
    /// ```swift
    /// Delete(from: "student").where("id".eq(15)).sql   // "DELETE FROM student WHERE id = ?"
    /// ```
    var sql: String { get }
    /// The arguments of the placeholders of `sql`, in order.
    /// ```swift
    /// Delete(from: "student").where("id".eq(15)).arguments   // [15]
    /// ```
    var arguments: [DatabaseArgument] { get }
}

/// A statement that changes rows (`Insert`, `Update`, `Delete`): run with `Db.update(_:)`.
/// ```swift
/// let changed = try Db.update(Update("student").set(["age": 14]).where("id".eq(15)))
/// ```
public protocol SqlWriteStatement: SqlStatement {}

/// What an INSERT or UPDATE does on a constraint conflict: `INSERT OR REPLACE`, `UPDATE OR IGNORE`, …
/// ```swift
/// Insert(into: "student").or(.ignore).values(["name": "Jack"])   // INSERT OR IGNORE INTO student …
/// ```
public enum ConflictPolicy: String, Sendable {
    /// The conflict resolutions of SQLite, one per `OR` keyword: `.replace`, `.ignore`, `.rollback`, `.abort`, `.fail`.
    /// ```swift
    /// Update("student").or(.replace).set(["id": 16]).where("id".eq(15))   // UPDATE OR REPLACE student …
    /// ```
    case replace = "REPLACE", ignore = "IGNORE", rollback = "ROLLBACK", abort = "ABORT", fail = "FAIL"
}

/// Text and arguments gathered in order.
private struct SqlBuffer {
    var sql = ""
    var arguments: [DatabaseArgument] = []

    mutating func append(_ text: String) { sql += text }

    mutating func append(_ clause: SqlClause) {
        sql += clause.sql
        arguments += clause.arguments
    }

    mutating func append(_ keyword: String, _ clauses: [SqlClause], separator: String = ", ") {
        guard !clauses.isEmpty else { return }
        sql += keyword
        for (i, clause) in clauses.enumerated() {
            if i > 0 { sql += separator }
            append(clause)
        }
    }
}

/// The WHERE, ORDER BY, LIMIT and OFFSET parts that `Select`, `Update` and `Delete` share.
private struct RowFilter {
    var condition: SqlClause?
    var orderings: [SqlClause] = []
    var limit: Int?
    var offset: Int?

    /// `WHERE condition`, or `AND condition` after an earlier one.
    mutating func add(_ condition: SqlClause) {
        self.condition = self.condition.map { $0.and(condition) } ?? condition
    }

    func appendWhere(to buffer: inout SqlBuffer) {
        if let condition {
            buffer.append(" WHERE ")
            buffer.append(condition)
        }
    }

    /// ORDER BY, LIMIT and OFFSET. SQLite wants a LIMIT before an OFFSET, and PostgreSQL refuses
    /// SQLite's `LIMIT -1`: the largest limit both take stands for none.
    func appendOrderAndLimit(to buffer: inout SqlBuffer) {
        buffer.append(" ORDER BY ", orderings)
        if let limit { buffer.append(" LIMIT \(limit)") }
        if let offset { buffer.append(limit == nil ? " LIMIT \(Int64.max) OFFSET \(offset)" : " OFFSET \(offset)") }
    }
}

/// Builder methods return a changed copy.
protocol CopyOnChange {}

extension CopyOnChange {
    func with(_ change: (inout Self) -> Void) -> Self {
        var copy = self
        change(&copy)
        return copy
    }
}

/// `SELECT`, built a clause at a time (patchwork's `ALSQLSelectStatement`):
/// ```swift
/// let query = Select(.raw("COUNT(*) AS num"), SQL.upper("province").as("province"))
///     .from("students")
///     .where(SQL.lower("gender").eq("1"))
///     .groupBy("province").having("age".gt(18))
///     .orderBy("num".desc).orderBy("province")
///     .limit(5).offset(3)
/// let rows = try Db.find(query)
/// ```
/// Column names are quoted only when they need it; values are always bound.
public struct Select: SqlStatement, SqlExpression, CopyOnChange {
    private var columns: [SqlClause]
    private var isDistinct = false
    private var sources: [SqlClause] = []
    private var joins: [SqlClause] = []
    private var filter = RowFilter()
    private var groups: [SqlClause] = []
    private var havingCondition: SqlClause?

    /// `SELECT columns` (`SELECT *` when none): strings are column names, ``SqlClause``s expressions.
    /// ```swift
    /// Select("name", "age").from("student")          // SELECT name, age FROM student
    /// ```
    public init(_ columns: SqlExpression...) {
        self.columns = columns.map(\.sqlClause)
    }

    /// `SELECT columns`, from an array.
    /// ```swift
    /// let columns = ["name", "age"]
    /// Select(columns).from("student")                // SELECT name, age FROM student
    /// ```
    public init(_ columns: [SqlExpression]) {
        self.columns = columns.map(\.sqlClause)
    }

    /// `SELECT DISTINCT` when `on` is true (the default).
    /// ```swift
    /// Select("name").distinct().from("student")      // SELECT DISTINCT name FROM student
    /// ```
    public func distinct(_ on: Bool = true) -> Select { with { $0.isDistinct = on } }

    /// `FROM a, b`: table names, or sub-queries (`Select`, in parentheses; `select.as("t")` names
    /// one, and one left unnamed is named `subquery1`, `subquery2`…, as PostgreSQL requires).
    /// ```swift
    /// Select().from("student", "teacher").where("student.teacher_id = teacher.id")
    /// ```
    public func from(_ sources: SqlExpression...) -> Select { from(sources) }

    /// `FROM a, b`, from an array of table names or sub-queries.
    /// ```swift
    /// Select().from(["student", "teacher"])          // SELECT * FROM student, teacher
    /// ```
    public func from(_ sources: [SqlExpression]) -> Select {
        with { select in
            for source in sources {
                let position = select.sources.count + 1
                if source is Select {
                    let query = source.sqlClause
                    select.sources.append(SqlClause("\(query.sql) AS subquery\(position)", query.arguments, .atom))
                } else {
                    select.sources.append(SqlIdentifier.source(source))
                }
            }
        }
    }

    /// `JOIN table ON condition`.
    /// ```swift
    /// Select("s.name", "t.name").from("student s").join("teacher t", on: "s.teacher_id = t.id")
    /// ```
    public func join(_ table: SqlExpression, on condition: SqlClause) -> Select { joining("JOIN", table, condition) }

    /// `LEFT JOIN table ON condition`.
    /// ```swift
    /// Select().from("student s").leftJoin("teacher t", on: "s.teacher_id = t.id")
    /// ```
    public func leftJoin(_ table: SqlExpression, on condition: SqlClause) -> Select { joining("LEFT JOIN", table, condition) }

    private func joining(_ kind: String, _ table: SqlExpression, _ condition: SqlClause) -> Select {
        let table = SqlIdentifier.source(table)
        return with {
            $0.joins.append(SqlClause("\(kind) \(table.sql) ON \(condition.sql)", table.arguments + condition.arguments, .term))
        }
    }

    /// `WHERE condition`; a second call adds `AND condition`.
    /// ```swift
    /// Select().from("student").where("age".gt(12)).where("name".prefixLike("J"))   // … WHERE age > ? AND name LIKE ?
    /// ```
    public func `where`(_ condition: SqlClause) -> Select { with { $0.filter.add(condition) } }

    /// `GROUP BY` columns or expressions, added to those of earlier calls.
    /// ```swift
    /// Select("class_id", SQL.count()).from("student").groupBy("class_id")
    /// ```
    public func groupBy(_ columns: SqlExpression...) -> Select { with { $0.groups += columns.map(\.sqlClause) } }

    /// `HAVING condition`; a second call adds `AND condition`.
    /// ```swift
    /// Select("class_id", SQL.count()).from("student").groupBy("class_id").having(SQL.count().gt(30))
    /// ```
    public func having(_ condition: SqlClause) -> Select { with { $0.havingCondition = $0.havingCondition.map { $0.and(condition) } ?? condition } }

    /// `ORDER BY` terms, added to those of earlier calls: `"age".desc`, `"name"`.
    /// ```swift
    /// Select().from("student").orderBy("age".desc, "name")   // … ORDER BY age DESC, name
    /// ```
    public func orderBy(_ terms: SqlExpression...) -> Select { with { $0.filter.orderings += terms.map(\.sqlClause) } }

    /// `ORDER BY` terms from an array, added to those of earlier calls.
    /// ```swift
    /// Select().from("student").orderBy(["age".desc, "name"])
    /// ```
    public func orderBy(_ terms: [SqlExpression]) -> Select { with { $0.filter.orderings += terms.map(\.sqlClause) } }

    /// `LIMIT n`, written into the SQL.
    /// ```swift
    /// Select().from("student").orderBy("age").limit(10)      // … LIMIT 10
    /// ```
    public func limit(_ count: Int) -> Select { with { $0.filter.limit = count } }

    /// `OFFSET n`, written into the SQL.
    /// Without a limit, `LIMIT 9223372036854775807` (none) is written before it, as SQLite requires.
    /// ```swift
    /// Select().from("student").orderBy("id").limit(10).offset(20)   // … LIMIT 10 OFFSET 20
    /// ```
    public func offset(_ count: Int) -> Select { with { $0.filter.offset = count } }

    private var built: SqlBuffer {
        var buffer = SqlBuffer()
        buffer.append(isDistinct ? "SELECT DISTINCT " : "SELECT ")
        if columns.isEmpty { buffer.append("*") } else { buffer.append("", columns) }
        buffer.append(" FROM ", sources)
        buffer.append(" ", joins, separator: " ")
        filter.appendWhere(to: &buffer)
        buffer.append(" GROUP BY ", groups)
        if let havingCondition { buffer.append(" HAVING "); buffer.append(havingCondition) }
        filter.appendOrderAndLimit(to: &buffer)
        return buffer
    }

    /// The SQL text of the query, with `?` where each argument goes.
    /// ```swift
    /// Select().from("student").where("age".gt(12)).sql   // "SELECT * FROM student WHERE age > ?"
    /// ```
    public var sql: String { built.sql }
    /// The arguments of the query's placeholders, in order.
    /// ```swift
    /// Select().from("student").where("age".gt(12)).arguments   // [12]
    /// ```
    public var arguments: [DatabaseArgument] { built.arguments }

    /// The query as a sub-query: `(SELECT …)`.
    /// ```swift
    /// "teacher_id".in(Select("id").from("teacher"))   // teacher_id IN (SELECT id FROM teacher)
    /// ```
    public var sqlClause: SqlClause {
        let buffer = built
        return SqlClause("(\(buffer.sql))", buffer.arguments, .atom)
    }
}

/// `INSERT`, from rows of values, a dictionary, or a query (patchwork's `ALSQLInsertStatement`):
/// ```swift
/// Insert(into: "students").or(.replace).columns("name", "age").values(["alex", 30]).values(["jim", 18])
/// Insert(into: "students").values(["name": "Roger", "age": 34])
/// Insert(into: "archive").select(Select().from("students").where("age".gt(30)))
/// ```
public struct Insert: SqlWriteStatement, CopyOnChange {
    private let table: String
    private var policy: ConflictPolicy?
    private var columnNames: [String] = []
    private var rows: [[SqlClause]] = []
    private var query: Select?

    /// `INSERT INTO table`; with no `values` or `select`, `DEFAULT VALUES`.
    /// ```swift
    /// try Db.update(Insert(into: "student").values(["name": "Jack", "age": 14]))
    /// ```
    public init(into table: String) {
        self.table = table
    }

    /// `INSERT OR <policy>`.
    /// ```swift
    /// Insert(into: "student").or(.ignore).values(["name": "Jack"])   // INSERT OR IGNORE INTO student (name) …
    /// ```
    public func or(_ policy: ConflictPolicy) -> Insert { with { $0.policy = policy } }

    /// `INSERT OR REPLACE` when `replace` is true.
    /// ```swift
    /// Insert(into: "student").orReplace().values(["id": 15, "name": "Jack"])
    /// ```
    public func orReplace(_ replace: Bool = true) -> Insert { with { $0.policy = replace ? .replace : nil } }

    /// The column list, matched in order by each row of `values`.
    /// ```swift
    /// Insert(into: "student").columns("name", "age").values(["Jack", 14]).values(["Rose", 13])
    /// ```
    public func columns(_ names: String...) -> Insert { with { $0.columnNames = names } }

    /// The column list, from an array.
    /// ```swift
    /// Insert(into: "student").columns(["name", "age"]).values(["Jack", 14])
    /// ```
    public func columns(_ names: [String]) -> Insert { with { $0.columnNames = names } }

    /// One row of values, in the order of `columns`; call again for more rows. Values are bound.
    /// ```swift
    /// Insert(into: "student").columns("name", "age").values(["Jack", 14])   // … VALUES (?, ?)
    /// ```
    public func values(_ row: [DatabaseArgument]) -> Insert { with { $0.rows.append(row.map(SqlClause.operandValue)) } }

    /// One row from a dictionary: its keys (in sorted order) are the columns.
    /// ```swift
    /// Insert(into: "student").values(["name": "Roger", "age": 34])   // INSERT INTO student (age, name) VALUES (?, ?)
    /// ```
    public func values(_ row: [String: DatabaseArgument]) -> Insert {
        let keys = row.keys.sorted()
        return with {
            $0.columnNames = keys
            $0.rows = [keys.map { SqlClause.operandValue(row[$0] ?? nil) }]
        }
    }

    /// `INSERT INTO table SELECT …`.
    /// ```swift
    /// Insert(into: "archive").select(Select().from("student").where("age".gt(30)))
    /// ```
    public func select(_ query: Select) -> Insert { with { $0.query = query } }

    private var built: SqlBuffer {
        var buffer = SqlBuffer()
        buffer.append("INSERT")
        if let policy { buffer.append(" OR \(policy.rawValue)") }
        buffer.append(" INTO \(SqlIdentifier.render(table))")
        if !columnNames.isEmpty { buffer.append(" (\(columnNames.map(SqlIdentifier.render).joined(separator: ", ")))") }
        if let query {
            buffer.append(" ")
            buffer.append(SqlClause(query.sql, query.arguments, .atom))
        } else if rows.isEmpty {
            buffer.append(" DEFAULT VALUES")
        } else {
            buffer.append(" VALUES ")
            for (i, row) in rows.enumerated() {
                if i > 0 { buffer.append(", ") }
                buffer.append("(")
                buffer.append("", row)
                buffer.append(")")
            }
        }
        return buffer
    }

    /// The SQL text of the statement.
    /// ```swift
    /// Insert(into: "student").values(["name": "Jack"]).sql   // "INSERT INTO student (name) VALUES (?)"
    /// ```
    public var sql: String { built.sql }
    /// The arguments of the statement's placeholders, in order.
    /// ```swift
    /// Insert(into: "student").values(["name": "Jack"]).arguments   // ["Jack"]
    /// ```
    public var arguments: [DatabaseArgument] { built.arguments }
}

/// `UPDATE` (patchwork's `ALSQLUpdateStatement`):
/// ```swift
/// Update("students").set(["age": 30]).set("gender".eq("2")).where("name".eq("Roger"))
/// // UPDATE students SET age = ?, gender = ? WHERE name = ?   [30, "2", "Roger"]
/// ```
public struct Update: SqlWriteStatement, CopyOnChange {
    private let table: String
    private var policy: ConflictPolicy?
    private var assignments: [SqlClause] = []
    private var filter = RowFilter()

    /// `UPDATE table`; add assignments with `set` and a condition with `where`.
    /// ```swift
    /// try Db.update(Update("student").set(["age": 14]).where("id".eq(15)))
    /// ```
    public init(_ table: String) {
        self.table = table
    }

    /// `UPDATE OR <policy>`.
    /// ```swift
    /// Update("student").or(.ignore).set(["email": "a@b.c"]).where("id".eq(15))
    /// ```
    public func or(_ policy: ConflictPolicy) -> Update { with { $0.policy = policy } }

    /// `UPDATE OR REPLACE` when `replace` is true.
    /// ```swift
    /// Update("student").orReplace().set(["id": 16]).where("id".eq(15))
    /// ```
    public func orReplace(_ replace: Bool = true) -> Update { with { $0.policy = replace ? .replace : nil } }

    /// `SET column = ?` for each entry (keys in sorted order).
    /// ```swift
    /// Update("student").set(["age": 14, "name": "Jack"]).where("id".eq(15))   // UPDATE student SET age = ?, name = ? …
    /// ```
    public func set(_ values: [String: DatabaseArgument]) -> Update {
        let assignments = values.keys.sorted().map { $0.eq(values[$0] ?? nil) }
        return with { $0.assignments += assignments }
    }

    /// `SET` from `column = value` clauses: `.set("gender".eq("2"))`.
    /// ```swift
    /// Update("student").set("age".eq(SqlClause.raw("age + 1"))).where("id".eq(15))
    /// ```
    public func set(_ assignments: SqlClause...) -> Update { with { $0.assignments += assignments } }

    /// `SET` from an array of `column = value` clauses.
    /// ```swift
    /// Update("student").set(["age".eq(14), "name".eq("Jack")]).where("id".eq(15))
    /// ```
    public func set(_ assignments: [SqlClause]) -> Update { with { $0.assignments += assignments } }

    /// `WHERE condition`; a second call adds `AND condition`.
    /// ```swift
    /// Update("student").set(["age": 14]).where("class_id".eq(3)).where("age".isNull)
    /// ```
    public func `where`(_ condition: SqlClause) -> Update { with { $0.filter.add(condition) } }

    /// `ORDER BY` terms (needs SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
    /// ```swift
    /// Update("student").set(["prize": 1]).orderBy("score".desc).limit(3)
    /// ```
    public func orderBy(_ terms: SqlExpression...) -> Update { with { $0.filter.orderings += terms.map(\.sqlClause) } }

    /// `LIMIT n` (needs SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
    /// ```swift
    /// Update("student").set(["prize": 1]).orderBy("score".desc).limit(3)
    /// ```
    public func limit(_ count: Int) -> Update { with { $0.filter.limit = count } }

    /// `OFFSET n`, after a `limit` (needs SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
    /// ```swift
    /// Update("student").set(["prize": 2]).orderBy("score".desc).limit(3).offset(3)
    /// ```
    public func offset(_ count: Int) -> Update { with { $0.filter.offset = count } }

    private var built: SqlBuffer {
        var buffer = SqlBuffer()
        buffer.append("UPDATE")
        if let policy { buffer.append(" OR \(policy.rawValue)") }
        buffer.append(" \(SqlIdentifier.render(table))")
        buffer.append(" SET ", assignments)
        filter.appendWhere(to: &buffer)
        filter.appendOrderAndLimit(to: &buffer)
        return buffer
    }

    /// The SQL text of the statement.
    /// ```swift
    /// Update("student").set(["age": 14]).where("id".eq(15)).sql   // "UPDATE student SET age = ? WHERE id = ?"
    /// ```
    public var sql: String { built.sql }
    /// The arguments of the statement's placeholders, in order.
    /// ```swift
    /// Update("student").set(["age": 14]).where("id".eq(15)).arguments   // [14, 15]
    /// ```
    public var arguments: [DatabaseArgument] { built.arguments }
}

/// `DELETE` (patchwork's `ALSQLDeleteStatement`):
/// ```swift
/// Delete(from: "students").where("name".suffixLike("lee")).orderBy("age".desc).limit(5)
/// // DELETE FROM students WHERE name LIKE ? ORDER BY age DESC LIMIT 5   ["%lee"]
/// ```
/// ORDER BY and LIMIT on DELETE and UPDATE need SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT
/// (Debian's and Ubuntu's are; Apple's is not): elsewhere such a statement throws SQLite's syntax error.
public struct Delete: SqlWriteStatement, CopyOnChange {
    private let table: String
    private var filter = RowFilter()

    /// `DELETE FROM table`; without `where`, every row.
    /// ```swift
    /// try Db.update(Delete(from: "student").where("age".lt(6)))
    /// ```
    public init(from table: String) {
        self.table = table
    }

    /// `WHERE condition`; a second call adds `AND condition`.
    /// ```swift
    /// Delete(from: "student").where("class_id".eq(3)).where("age".gt(20))
    /// ```
    public func `where`(_ condition: SqlClause) -> Delete { with { $0.filter.add(condition) } }

    /// `ORDER BY` terms (needs SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
    /// ```swift
    /// Delete(from: "log").orderBy("created".asc).limit(100)
    /// ```
    public func orderBy(_ terms: SqlExpression...) -> Delete { with { $0.filter.orderings += terms.map(\.sqlClause) } }

    /// `LIMIT n` (needs SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
    /// ```swift
    /// Delete(from: "log").orderBy("created".asc).limit(100)
    /// ```
    public func limit(_ count: Int) -> Delete { with { $0.filter.limit = count } }

    /// `OFFSET n`, after a `limit` (needs SQLite built with SQLITE_ENABLE_UPDATE_DELETE_LIMIT).
    /// ```swift
    /// Delete(from: "log").orderBy("created".desc).limit(100).offset(1000)
    /// ```
    public func offset(_ count: Int) -> Delete { with { $0.filter.offset = count } }

    private var built: SqlBuffer {
        var buffer = SqlBuffer()
        buffer.append("DELETE FROM \(SqlIdentifier.render(table))")
        filter.appendWhere(to: &buffer)
        filter.appendOrderAndLimit(to: &buffer)
        return buffer
    }

    /// The SQL text of the statement.
    /// ```swift
    /// Delete(from: "student").where("id".eq(15)).sql   // "DELETE FROM student WHERE id = ?"
    /// ```
    public var sql: String { built.sql }
    /// The arguments of the statement's placeholders, in order.
    /// ```swift
    /// Delete(from: "student").where("id".eq(15)).arguments   // [15]
    /// ```
    public var arguments: [DatabaseArgument] { built.arguments }
}
