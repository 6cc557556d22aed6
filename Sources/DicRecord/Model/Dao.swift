import Foundation

/// The finders of one model class (PSModel's `dao`), on the model's default config or, through
/// `use(_:)`, on another one. `Student.dao` is `Dao<Student>`.
///
/// ```swift
/// let s = try Student.dao.findById(15)
/// let older = try Student.dao.findByCondition("age > ?", 15)
/// let page = try Student.dao.paginate(1, 10, "select *", "from student where name like ?", "张%")
/// let backup = Student.dao.use("backup")          // Student.dao itself is unchanged
/// ```
/// The default config is "main" when the model is registered there, else the first started
/// config it is registered with. Models found through a bound dao remember its config.
public struct Dao<M: Model>: Sendable {
    /// The config this dao is bound to; nil means the model's default config.
    /// ```swift
    /// Student.dao.use("backup").configName   // "backup"
    /// ```
    public let configName: String?
    /// `configName` as the models this dao finds hold it: one object they share.
    let binding: ConfigBinding?

    init(configName: String?) {
        let name = configName.flatMap { $0.isEmpty ? nil : $0 }
        self.configName = name
        binding = name.map(ConfigBinding.init)
    }

    /// A dao of the config `binding` names (a model's own, shared).
    init(binding: ConfigBinding?) {
        self.binding = binding
        configName = binding?.name
    }

    /// A dao of the same model bound to config `configName` (nil: the model's default); this dao is unchanged.
    /// ```swift
    /// let old = try Student.dao.use("backup").findById(1)
    /// ```
    public func use(_ configName: String?) -> Dao<M> {
        Dao(configName: configName)
    }

    // MARK: Finding

    /// The models of any query over the model's table (extra columns, from a join, are kept and
    /// readable by subscript); an empty array when nothing matches.
    /// ```swift
    /// let students = try Student.dao.find("select s.*, t.name t_name from student s join teacher t on s.teacher_id = t.id where s.age > ?", 12)
    /// ```
    public func find(_ sql: String, _ args: DatabaseArgument...) throws -> [M] {
        try findModels(sql, .positional(args))
    }

    /// The models of a query, with the arguments given as an array or by name.
    /// ```swift
    /// let students = try Student.dao.find("select * from student where age > ?", arguments: [12])
    /// ```
    public func find(_ sql: String, arguments: StatementArguments) throws -> [M] {
        try findModels(sql, arguments.storage)
    }

    /// The first model of `sql`, or nil when there is no row.
    /// ```swift
    /// let jack = try Student.dao.findFirst("select * from student where name = ?", "Jack")
    /// ```
    public func findFirst(_ sql: String, _ args: DatabaseArgument...) throws -> M? {
        try findFirstModel(sql, .positional(args))
    }

    /// The first model of `sql`, or nil, with the arguments given as an array or by name.
    /// ```swift
    /// let jack = try Student.dao.findFirst("select * from student where name = ?", arguments: ["Jack"])
    /// ```
    public func findFirst(_ sql: String, arguments: StatementArguments) throws -> M? {
        try findFirstModel(sql, arguments.storage)
    }

    /// Every row of the table, as models.
    /// ```swift
    /// let everyone = try Student.dao.findAll()
    /// ```
    public func findAll() throws -> [M] {
        let schema = try target().schema
        return try findModels("SELECT * FROM \(SqlText.quote(schema.tableName))", .none)
    }

    /// The model whose key is `id`, or nil; a model with a composite key throws (use `findByIds`).
    /// ```swift
    /// let student = try Student.dao.findById(15)
    /// ```
    public func findById(_ id: DatabaseArgument) throws -> M? {
        let (db, schema) = try target()
        try requireSingleKey(schema, "findById")
        guard let record = try db.findRecordById(schema.tableName, id, primaryKey: schema.keyColumns[0], columns: "*") else { return nil }
        return try make(record, schema: schema, map: nil)
    }

    /// The model whose key is `id`, with only `loadColumns` read, or nil.
    /// ```swift
    /// let student = try Student.dao.findById(15, loadColumns: "id, name")
    /// ```
    public func findById(_ id: DatabaseArgument, loadColumns: String) throws -> M? {
        let (db, schema) = try target()
        try requireSingleKey(schema, "findById")
        guard let record = try db.findRecordById(schema.tableName, id, primaryKey: schema.keyColumns[0], columns: loadColumns) else { return nil }
        return try make(record, schema: schema, map: nil)
    }

    /// The model with a composite key, values in the order of the model's `primaryKey`, or nil.
    /// ```swift
    /// let enrollment = try Enrollment.dao.findByIds(1, 7)   // primaryKey "student_id, course_id"
    /// ```
    public func findByIds(_ ids: DatabaseArgument...) throws -> M? {
        try findByKeyValues(ids)
    }

    func findByKeyValues(_ ids: [DatabaseArgument]) throws -> M? {
        let (db, schema) = try target()
        guard let record = try db.findByKeys(schema.tableName, keys: schema.keyColumns, values: .positional(ids), columns: "*") else { return nil }
        return try make(record, schema: schema, map: nil)
    }

    /// `findById` with a key as another model stored it (a reference's `column`): TEXT read that
    /// is not UTF-8 is looked up by its bytes, not the replacement characters it reads as.
    func findById(stored key: StoredValue, column: String) throws -> M? {
        guard key.bytes != nil else { return try findById(key.value) }
        let (db, schema) = try target()
        try requireSingleKey(schema, "findById")
        var arguments = StoredValues()
        arguments.append(column, key)
        guard let record = try db.findByKeys(schema.tableName, keys: [schema.keyColumns[0]], values: .stored(arguments), columns: "*") else { return nil }
        return try make(record, schema: schema, map: nil)
    }

    /// The models matching `condition`: `SELECT * FROM <table> WHERE <condition>` (every row when it is empty).
    /// ```swift
    /// let teens = try Student.dao.findByCondition("age between ? and ? order by name", 13, 19)
    /// ```
    public func findByCondition(_ condition: String, _ args: DatabaseArgument...) throws -> [M] {
        try find(condition: condition, .positional(args))
    }

    /// The models matching `condition`, with the arguments given as an array or by name.
    /// ```swift
    /// let teens = try Student.dao.findByCondition("age > ?", arguments: [12])
    /// ```
    public func findByCondition(_ condition: String, arguments: StatementArguments) throws -> [M] {
        try find(condition: condition, arguments.storage)
    }

    /// The first model matching `condition`, or nil.
    /// ```swift
    /// let youngest = try Student.dao.findFirstByCondition("age > ? order by age", 12)
    /// ```
    public func findFirstByCondition(_ condition: String, _ args: DatabaseArgument...) throws -> M? {
        try findFirst(condition: condition, .positional(args))
    }

    /// The number of rows matching `condition` (all rows when it is empty).
    /// ```swift
    /// let teens = try Student.dao.countByCondition("age > ?", 12)
    /// ```
    public func countByCondition(_ condition: String, _ args: DatabaseArgument...) throws -> Int {
        try count(condition: condition, .positional(args))
    }

    func count(condition: String, _ arguments: Arguments) throws -> Int {
        let (db, schema) = try target()
        return try db.queryValues("SELECT count(*) FROM \(SqlText.quote(schema.tableName))\(whereClause(condition))",
                                  arguments, as: Int.self, limit: 1).first.flatMap { $0 } ?? 0
    }

    /// The number of rows in the table.
    /// ```swift
    /// let total = try Student.dao.count()
    /// ```
    public func count() throws -> Int {
        try countByCondition("")
    }

    /// A page of models (see `Db.paginate`): page numbers start at 1; beyond the last page the list is empty.
    /// ```swift
    /// let page = try Student.dao.paginate(1, 10, "select *", "from student where name like ?", "张%")
    /// ```
    public func paginate(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                         _ args: DatabaseArgument...) throws -> Page<M> {
        try paginateModels(pageNumber, pageSize, select, sqlExceptSelect, .positional(args))
    }

    func paginateModels(_ pageNumber: Int, _ pageSize: Int, _ select: String, _ sqlExceptSelect: String,
                        _ arguments: Arguments) throws -> Page<M> {
        let (db, schema) = try target()
        return try db.paginate(pageNumber, pageSize, select, sqlExceptSelect, arguments) { sql in
            try models(db.findRows(sql, arguments), schema: schema)
        }
    }

    /// The single value of a one-column query (nil for no row or NULL), as PSModel's `queryOne`;
    /// the value is untyped (Int64, Double, String or Data as stored).
    /// ```swift
    /// let oldest = try Student.dao.queryOne("select max(age) from student") as? Int64
    /// ```
    public func queryOne(_ sql: String, _ args: DatabaseArgument...) throws -> Any? {
        try queryOne(sql, .positional(args))
    }

    func queryOne(_ sql: String, _ arguments: Arguments) throws -> Any? {
        let db = try target().db
        return try db.queryValues(sql, arguments, as: DatabaseValue.self, limit: 1).first?.flatMap { $0.storedValue }
    }

    // MARK: Deleting

    /// Deletes the row whose key is `id`; true when one was deleted, false when there was none.
    /// ```swift
    /// try Student.dao.deleteById(20)
    /// ```
    @discardableResult
    public func deleteById(_ id: DatabaseArgument) throws -> Bool {
        let (db, schema) = try target()
        try requireSingleKey(schema, "deleteById")
        return try db.deleteByKeys(schema.tableName, keys: [schema.keyColumns[0]], values: .positional([id]))
    }

    /// Deletes the row with a composite key, values in the order of `primaryKey`; true when one was deleted.
    /// ```swift
    /// try Enrollment.dao.deleteByIds(1, 7)
    /// ```
    @discardableResult
    public func deleteByIds(_ ids: DatabaseArgument...) throws -> Bool {
        try deleteByKeyValues(ids)
    }

    func deleteByKeyValues(_ ids: [DatabaseArgument]) throws -> Bool {
        let (db, schema) = try target()
        return try db.deleteByKeys(schema.tableName, keys: schema.keyColumns, values: .positional(ids))
    }

    /// Deletes the rows matching `condition` and returns how many; an empty condition throws
    /// (use `deleteAll()` to empty the table).
    /// ```swift
    /// let removed = try Student.dao.deleteByCondition("name = ?", "张三")
    /// ```
    @discardableResult
    public func deleteByCondition(_ condition: String, _ args: DatabaseArgument...) throws -> Int {
        try delete(condition: condition, .positional(args))
    }

    func delete(condition: String, _ arguments: Arguments) throws -> Int {
        guard !condition.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw DicRecordError(.invalidArgument, "deleteByCondition needs a condition; use deleteAll() to empty the table",
                                 configName: configName)
        }
        let (db, schema) = try target()
        return try db.updateRows("DELETE FROM \(SqlText.quote(schema.tableName))\(whereClause(condition))", arguments)
    }

    /// Deletes every row of the table; returns how many.
    /// ```swift
    /// try Student.dao.deleteAll()
    /// ```
    @discardableResult
    public func deleteAll() throws -> Int {
        let (db, schema) = try target()
        return try db.updateRows("DELETE FROM \(SqlText.quote(schema.tableName))", .none)
    }

    // MARK: Internals shared with models and relations

    /// The Db handle and schema for this dao, or why there is none: the one rule for where a
    /// model's work runs (a model writes through its dao's: `Model.persistenceTarget`). `known`
    /// is the model's schema when the caller holds it already.
    func target(schema known: ModelSchema? = nil) throws -> (db: Db, schema: ModelSchema) {
        let contexts = ContextRegistry.active
        let (context, schema) = try targetContext(schema: known, in: contexts)
        return (Db(context: context, contexts: contexts), schema)
    }

    /// `target`'s context itself, for a caller that needs no `Db` handle (a model's save: the
    /// handle is three references to take and give back on every save).
    func targetContext(schema known: ModelSchema?, in contexts: ContextRegistry) throws -> (context: DbContext, schema: ModelSchema) {
        let schema = known ?? ModelSchema.of(M.self)
        // Tested first: binding the error copies it (two `memcpy`s on every save and find).
        if schema.hasDeclarationError, let error = schema.declarationError { throw error }
        let name = configName
        let context = try schema.context(in: contexts, named: name) {
            try contexts.context(declaring: ObjectIdentifier(M.self), model: "\(M.self)", named: name)
        }
        return (context, schema)
    }

    /// A one-value key method on a model with a composite key would match on its first column only.
    func requireSingleKey(_ schema: ModelSchema, _ method: String) throws {
        guard schema.keyColumns.count == 1 else {
            throw DicRecordError(.invalidArgument,
                "\(method) needs a single-column key; \(schema.typeName) is keyed by \(schema.keyColumns.joined(separator: ", ")): use \(method == "findById" ? "findByIds" : "deleteByIds")",
                configName: configName)
        }
    }

    func findFirst(condition: String, _ arguments: Arguments) throws -> M? {
        let schema = try target().schema
        return try findFirstModel(selectWhere(schema, condition), arguments)
    }

    func find(condition: String, _ arguments: Arguments) throws -> [M] {
        let schema = try target().schema
        return try findModels(selectWhere(schema, condition), arguments)
    }

    func findModels(_ sql: String, _ arguments: Arguments) throws -> [M] {
        let (db, schema) = try target()
        let binding = binding
        // A SQLite result of the declared columns (and the implicit key), all of types a
        // wrapper holds exactly, while the built-in conversions apply: each model is made as its
        // row is stepped, holding its values in its wrappers (`LayoutMap.read`, `store`), and no
        // block of rows is made or kept. Any other result is read into blocks first.
        var map: LayoutMap?
        let result = try db.streamRows(sql, arguments, start: { layout in
            let made = schema.positions(in: layout, filling: true, binding: binding)
            guard made.wrapperLoads != nil, made.fastPathAllowed else { return false }
            map = made
            return true
        }, make: { row -> Model in
            // Set by `start`, which the fetch calls before the first row.
            guard let map else { preconditionFailure("a row before its layout") }
            // (The model's config is its map's: no reference of its own to the binding.)
            return try ModelFactory.make(M.self, row: row, map: map)
        })
        switch result {
        case .streamed(let made):
            // (Collected as `Model`: an array of the generic `M` would append through
            // unspecialized code, which looks up the array's generic metadata on every row.)
            return made.withUnsafeBufferPointer { made in
                [M](unsafeUninitializedCapacity: made.count) { models, count in
                    for index in made.indices {
                        // Unsafe, fenced: each was made by `M()` in `ModelFactory.make` (checked
                        // in debug builds, where the tests run);
                        // `ModelWrapperBehaviourTests.noModelIsLeakedOrReleasedTwice` counts them.
                        models.initializeElement(at: index, to: unsafeDowncast(made[index], to: M.self))
                    }
                    count = made.count
                    // Each told `didLoad()` once all were read (as a fetch into blocks tells them
                    // after its load check).
                    for index in made.indices { made[index].didLoad() }
                }
            }
        case .rows(let fetched):
            return try models(fetched, schema: schema)
        }
    }

    func findFirstModel(_ sql: String, _ arguments: Arguments) throws -> M? {
        let (db, schema) = try target()
        return try db.findFirstRecord(sql, arguments).map { try make($0, schema: schema, map: nil) }
    }

    func models(_ records: [Record], schema: ModelSchema) throws -> [M] {
        guard let first = records.first else { return [] }
        // One layout for the whole result: the declared columns are located once.
        let map = schema.positions(in: first.baseLayout)
        try schema.checkStoredValues(of: records, map: map)
        return records.map { build($0, schema: schema, map: map) }
    }

    /// Models reading the fetched rows in place (no record each until one is needed).
    func models(_ fetched: FetchedRows, schema: ModelSchema) throws -> [M] {
        guard let layout = fetched.layout else { return [] }
        let map = schema.positions(in: layout)
        try schema.checkStoredValues(of: fetched.rows, map: map)
        let binding = binding
        // A loop over the concrete rows: `map` would step them through the generic collection's
        // witnesses (this code is not specialized for `M`).
        // Each model is stored into its place: `append` here would be the standard library's
        // unspecialized one (75 instructions a model), and a model is one reference to store.
        let rows = fetched.rows
        return [M](unsafeUninitializedCapacity: rows.count) { buffer, count in
            for row in rows {
                // The model's schema is its map's.
                let model = ModelFactory.make(M.self, row: row, map: map)
                if let binding { model.binding = binding }
                model.didLoad()
                // In bounds: one model per row, and the buffer has room for every row.
                buffer.initializeElement(at: count, to: model)
                count += 1
            }
        }
    }

    /// The model over a fetched row, after checking that every declared column's stored value
    /// converts to the property's type: a bad value throws here, naming the model, column and
    /// row key, rather than reading as the property's initial value later. NULL passes.
    func make(_ record: Record, schema: ModelSchema, map: LayoutMap?) throws -> M {
        try schema.checkStoredValues(of: record, map: map)
        return build(record, schema: schema, map: map)
    }

    /// The model over a row already checked.
    private func build(_ record: Record, schema: ModelSchema, map: LayoutMap?) -> M {
        let model = ModelFactory.make(M.self, record: record)
        model.layoutMap = map
        if let binding { model.binding = binding }
        model.didLoad()
        return model
    }

    func selectWhere(_ schema: ModelSchema, _ condition: String) -> String {
        "SELECT * FROM \(SqlText.quote(schema.tableName))\(whereClause(condition))"
    }

    func whereClause(_ condition: String) -> String {
        condition.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? "" : " WHERE \(condition)"
    }
}
