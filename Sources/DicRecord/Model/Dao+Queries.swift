import Foundation

// Aggregates (BZObjectStore), full-text search and reference preloading.
extension Dao {
    // MARK: Aggregates

    /// Non-NULL values of `column` in the rows matching `condition` (all rows when empty).
    /// ```swift
    /// let withEmail = try User.dao.count("email")
    /// ```
    public func count(_ column: String, where condition: String = "", _ args: DatabaseArgument...) throws -> Int {
        try aggregate(column, "count", condition, args, as: Int.self) ?? 0
    }

    /// The largest value of `column` among the rows matching `condition`, as `T`; nil on no rows.
    /// An unknown column throws.
    /// ```swift
    /// let oldest: Int? = try Student.dao.max("age")
    /// let oldestTeen = try Student.dao.max("age", where: "age < ?", 20, as: Int.self)
    /// ```
    public func max<T>(_ column: String, where condition: String = "", _ args: DatabaseArgument..., as type: T.Type = T.self) throws -> T? {
        try aggregate(column, "max", condition, args, as: T.self)
    }

    /// The smallest value of `column` among the rows matching `condition`, as `T`; nil on no rows.
    /// ```swift
    /// let firstBorn: Date? = try Student.dao.min("born")
    /// ```
    public func min<T>(_ column: String, where condition: String = "", _ args: DatabaseArgument..., as type: T.Type = T.self) throws -> T? {
        try aggregate(column, "min", condition, args, as: T.self)
    }

    /// SQLite's `sum` of `column` as `T`: nil on no rows, an integer sum for integer columns.
    /// ```swift
    /// let ages: Int? = try Student.dao.sum("age", where: "class_id = ?", 3)
    /// ```
    public func sum<T>(_ column: String, where condition: String = "", _ args: DatabaseArgument..., as type: T.Type = T.self) throws -> T? {
        try aggregate(column, "sum", condition, args, as: T.self)
    }

    /// SQLite's `total` of `column`: the sum as a Double, 0.0 on no rows (on PostgreSQL,
    /// `coalesce(sum(column), 0)` as a double).
    /// ```swift
    /// let total = try Student.dao.total("age")
    /// ```
    public func total(_ column: String, where condition: String = "", _ args: DatabaseArgument...) throws -> Double {
        try aggregate(column, "total", condition, args, as: Double.self) ?? 0
    }

    /// The average of `column` among the rows matching `condition`; nil on no rows.
    /// ```swift
    /// let averageAge = try Student.dao.avg("age", where: "class_id = ?", 3)
    /// ```
    public func avg(_ column: String, where condition: String = "", _ args: DatabaseArgument...) throws -> Double? {
        try aggregate(column, "avg", condition, args, as: Double.self)
    }

    func aggregate<T>(_ column: String, _ function: String, _ condition: String, _ args: [DatabaseArgument], as type: T.Type) throws -> T? {
        let (db, schema) = try target()
        // SQLite would read an unknown "column" as a string literal and aggregate that.
        guard try db.onReader({ try $0.columnNames(of: schema.tableName) }).contains(where: { RowLayout.sameColumn($0, column) }) else {
            throw DicRecordError(.missingColumn, "table '\(schema.tableName)' has no column '\(column)'", configName: db.configName)
        }
        let expression = function == "total" ? try db.dialect().total(SqlText.quote(column)) : "\(function)(\(SqlText.quote(column)))"
        let sql = "SELECT \(expression) FROM \(SqlText.quote(schema.tableName))\(whereClause(condition))"
        return try db.queryValues(sql, .positional(args), as: T.self, limit: 1).first ?? nil
    }

    // MARK: Full-text search

    /// Models whose `searchColumns` hold every word of `text`, best match first. The text is
    /// plain words (split at white space and NUL), as typed into a search box: each word is quoted for FTS5, so a hyphen, a
    /// quote or a colon is never query syntax (`"e-mail"` finds "e mail" as a phrase). Text with
    /// no words finds nothing. For FTS5's own syntax (OR, NEAR, prefix*, column filters) use
    /// `search(fts5Query:limit:)`.
    /// ```swift
    /// let hits = try Article.dao.search("swift sqlite", limit: 20)
    /// ```
    public func search(_ text: String, limit: Int? = nil) throws -> [M] {
        let words = text.split(whereSeparator: { $0.isWhitespace || $0 == "\0" }).map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
        guard !words.isEmpty else {
            _ = try searchSchema()  // a model without searchColumns is still an error
            return []
        }
        return try search(fts5Query: words.joined(separator: " "), limit: limit)
    }

    /// Models whose `searchColumns` match `query`, written in FTS5's query syntax (words,
    /// "phrases", OR, NOT, NEAR, prefix*, `column:`), best match first. A syntax error in the query
    /// is SQLite's error. See <https://www.sqlite.org/fts5.html#full_text_query_syntax>.
    /// ```swift
    /// let hits = try Article.dao.search(fts5Query: "swift OR sqli*", limit: 20)
    /// ```
    public func search(fts5Query query: String, limit: Int? = nil) throws -> [M] {
        let schema = try searchSchema()
        let table = SqlText.quote(schema.tableName), fts = SqlText.quote(ModelSchema.searchTable(schema.tableName))
        var sql = "SELECT \(table).* FROM \(fts) JOIN \(table) ON \(table).rowid = \(fts).rowid WHERE \(fts) MATCH ? ORDER BY \(fts).rank"
        if let limit { sql += " LIMIT \(Swift.max(0, limit))" }
        return try findModels(sql, .positional([query]))
    }

    private func searchSchema() throws -> ModelSchema {
        let schema = try target().schema
        guard !schema.searchColumns.isEmpty else {
            throw DicRecordError(.invalidModel, "model \(schema.typeName) declares no searchColumns", configName: configName)
        }
        return schema
    }

    // MARK: References

    /// Loads the `reference` of every model in `models` with one query, so that reading it
    /// afterwards runs none (instead of one query per model), not even for a key with no row. A
    /// key that is not an integer, or a target keyed by other values, the database may match in
    /// another form (TEXT '7' and INTEGER 7): when it found no row by its own value, the first
    /// read looks it up alone.
    /// ```swift
    /// let students = try Student.dao.findAll()                // 1 query
    /// try Student.dao.preload(\.teacher, in: students)        // 1 query for all their teachers
    /// ```
    public func preload<Target: Model>(_ reference: KeyPath<M, Target?>, in models: [M]) throws {
        let info = try referenceInfo(reference)
        // Keys as stored: TEXT that is not UTF-8 by its bytes, so that two such keys stay apart
        // and each finds its own row (their replacement characters would find another, or none).
        var keys: [StoredValue] = []
        var seen = Set<StoredValue>()
        for model in models {
            if let key = model.storage.storedValueWithBytes(info.column.name), key.value != .null, seen.insert(key).inserted { keys.append(key) }
        }
        // Such keys go in the first chunk: an engine that refuses them (PostgreSQL) refuses
        // before any query runs.
        keys = keys.filter { $0.bytes != nil } + keys.filter { $0.bytes == nil }
        var found: [StoredValue: Target] = [:]
        let targets = Dao<Target>(binding: binding)
        let targetSchema = try targets.target().schema
        try targets.requireSingleKey(targetSchema, "preload")
        let keyColumn = targetSchema.keyColumns[0]
        // SQLite allows 32766 parameters; stay well below in case an old build allows 999.
        var start = 0
        while start < keys.count {
            var chunk = StoredValues()
            for key in keys[start..<Swift.min(start + 900, keys.count)] { chunk.append(info.column.name, key) }
            let sql = "SELECT * FROM \(SqlText.quote(targetSchema.tableName)) WHERE \(SqlText.quote(keyColumn)) IN (\(Array(repeating: "?", count: chunk.values.count).joined(separator: ", ")))"
            for target in try targets.findModels(sql, .stored(chunk)) {
                if let key = target.storage.storedValueWithBytes(keyColumn) { found[key] = target }
            }
            start += chunk.values.count
        }
        // A key that found no target is known to have none when both sides are integers (as
        // declared), or when no key found one. Otherwise the database may have matched it in
        // another form (TEXT '7' finds INTEGER 7 in `IN (…)`, and 8 finds TEXT '8' in a TEXT
        // column): the first read looks it up alone, by the database's comparison.
        func isInteger(_ key: StoredValue) -> Bool { if case .integer = key.value { return true } else { return false } }
        let integersOnly = found.keys.allSatisfy(isInteger)
        for model in models {
            guard let key = model.storage.storedValueWithBytes(info.column.name), key.value != .null else { continue }
            if let target = found[key] {
                model.keep(LoadedReference(key: key, model: target), as: info.name)
            } else if found.isEmpty || (integersOnly && isInteger(key)) {
                model.keep(LoadedReference(key: key, model: nil), as: info.name)
            }
        }
    }

    /// The `@Reference` behind a key path such as `\Student.teacher`.
    func referenceInfo<Target: Model>(_ reference: KeyPath<M, Target?>) throws -> ReferenceInfo {
        func lookup() -> ReferenceInfo? {
            guard let entry = FieldResolver.entry(reference) ?? FieldResolver.entry(equalTo: reference),
                  case .reference(let info) = entry.field.description else { return nil }
            return info
        }
        if let info = lookup() { return info }
        // Reading the property on a new model (no key, so no query) teaches the resolver its name.
        _ = M()[keyPath: reference]
        guard let info = lookup() else {
            throw DicRecordError(.invalidArgument, "\(reference) is not a @Reference property of \(M.self)", configName: configName)
        }
        return info
    }
}
