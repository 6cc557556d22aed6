import Foundation

// Writing a model: save (INSERT), update (modified columns), delete, saveOrUpdate (upsert).
extension Model {
    /// INSERTs the model's columns, sets `id` from the generated key and clears the modified flags.
    /// `willSave()` runs first (throwing stops the save with nothing written), `didSave()` after.
    /// Returns true when a row was inserted.
    /// ```swift
    /// let s = Student(); s.name = "张三"; s.age = 20
    /// try s.save()                                  // s.id is set
    /// ```
    @discardableResult
    public final func save() throws -> Bool {
        let contexts = ContextRegistry.active
        let (context, schema) = try persistenceContext(in: contexts)
        try willSave()
        // A save from the wrappers that rolled back left the model new, its writes kept.
        if case .savedInTransaction(let saves, let number) = fetched {
            let save = saves.save(number)
            if save.rolledBack { fetched = .written(save.written) }
        }
        if case .written(let written) = fetched, let saved = try saveFromWrappers(written, schema: schema, context: context) {
            didSave()
            return saved
        }
        try prepareWrite(schema, context: context, inserting: true)
        let record = storage
        if let engine = try context.externalPool() {
            // Another engine: its INSERT … RETURNING gives the generated key back.
            let plan = Db.InsertPlan(table: schema.tableName, primaryKey: schema.hasImplicitId ? "id" : "")
            let db = Db(context: context, contexts: contexts)
            let saved = try engine.write { try db.engineSave([record], plan: plan, on: $0, namingFailedItem: false)[0] > 0 }
            forgetLayoutMap()
            didSave()
            return saved
        }
        let saved = try context.pool().write { connection -> Bool in
            // The generated key goes back into `id` whenever the model has the implicit one.
            let last = schema.lastInsertStatement
            let row = try record.insertSnapshot(key: schema.hasImplicitId ? "id" : nil, like: last?.shape)
            let shape = row.shape
            let sql = schema.insertSQL(for: row, last: last)
            let changed = try connection.withStatement(sql, .none, bind: false) { statement in
                let rawTexts = row.rawTexts
                return try row.withBoundValues { try connection.runPrepared(statement, $0, $1, rawTexts: rawTexts) }
                    ?? connection.runPrepared(statement, count: row.count, row.value(at:), rawTexts: rawTexts)
            }
            // The row's view of the values ends here: writing the key back then copies nothing.
            _ = consume row
            RollbackUndo.finishSave(record, key: "id", generated: shape.keyIsMissing ? .integer(connection.lastInsertRowid) : nil,
                                    at: shape, on: connection)
            return changed > 0
        }
        forgetLayoutMap()
        didSave()
        return saved
    }

    /// `save()` of a new model whose writes are in its wrappers (`keepsInWrapper`): the values are
    /// bound from the wrappers, and the model keeps them there with its key (`FetchedValues.saved`).
    /// Nil, with nothing done, when the save needs the record: another engine (its INSERT …
    /// RETURNING goes through records), a non-optional column left unset (its DEFAULT is written
    /// through the record), values to check (`needsValidation`), or a converter replacing a
    /// built-in conversion.
    private func saveFromWrappers(_ written: UInt64, schema: ModelSchema, context: DbContext) throws -> Bool? {
        // (Bound by the built-in rules whatever converter was registered since the writes: the
        // wrappers took them only under those rules, as the record path encodes at the write.)
        guard !needsValidation, let wrappers = schema.newModelWrappers, written & wrappers.required == wrappers.required,
              try context.externalPool() == nil else { return nil }
        let insert = wrappers.insert(for: written)
        return try context.pool().write { connection -> Bool in
            // Unsafe, fenced: the offsets are this class's wrappers (see `WrapperInsert.value`).
            let base = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            let changed = try connection.withStatement(insert.sql, .none, bind: false) { statement in
                try connection.runPrepared(statement, count: insert.loads.count) { insert.value(at: $0, in: base) }
            }
            let key = connection.lastInsertRowid
            // Inside a transaction, the undo log holds the save, not the model (`RecordlessSaves`).
            if let noted = RollbackUndo.noteRecordlessSave(written: written, key: key, on: connection) {
                fetched = .savedInTransaction(noted.saves, number: noted.number)
            } else {
                fetched = .saved(written: written, key: key)
            }
            return changed > 0
        }
    }

    /// UPDATEs the modified columns only; false (and no SQL) when none is modified.
    /// ```swift
    /// student.name = "李四"
    /// try student.update()
    /// ```
    @discardableResult
    public final func update() throws -> Bool {
        let (db, schema) = try persistenceTarget()
        guard !storage.modifiedColumns.isEmpty else { return false }
        try willSave()
        try prepareWrite(schema, context: db.context(), inserting: false)
        let updated = try db.updateRecord(schema.tableName, storage, primaryKey: schema.keyColumns.joined(separator: ","))
        if updated { didSave() }
        return updated
    }

    /// DELETEs the model's row by its key; true when a row was deleted. `didDelete()` runs after.
    /// ```swift
    /// if let s = try Student.dao.findById(20) { try s.delete() }
    /// ```
    @discardableResult
    public final func delete() throws -> Bool {
        let (db, schema) = try persistenceTarget()
        let deleted = try db.deleteRecord(schema.tableName, storage, primaryKey: schema.keyColumns.joined(separator: ","))
        if deleted { didDelete() }
        return deleted
    }

    /// INSERTs the model, or UPDATEs the row it collides with: `INSERT … ON CONFLICT(key) DO
    /// UPDATE SET` the columns this model supplies (never REPLACE, which would reset the others).
    /// The conflict is on the primary key when the model has one, else on the first unique key
    /// whose columns it supplies. The row's `id` is written back either way.
    /// ```swift
    /// let u = User(); u.email = "a@b.c"; u.name = "A"; try u.saveOrUpdate()   // insert
    /// let v = User(); v.email = "a@b.c"; v.name = "B"; try v.saveOrUpdate()   // updates that row; v.id == u.id
    /// ```
    @discardableResult
    public final func saveOrUpdate() throws -> Bool {
        let (db, schema) = try persistenceTarget()
        try willSave()
        try prepareWrite(schema, context: db.context(), inserting: true)
        let table = schema.tableName
        _ = try storage.modifiedStoredColumns()   // throws a value that could not be encoded
        // Names as SQLite compares them (`RowLayout.columnKey`).
        let modified = Set(storage.modifiedColumns.map(RowLayout.columnKey))
        // As stored: a key read as TEXT that is not UTF-8 must find its row, not a new one.
        let supplied = storage.storedColumnsWithBytes.filter { column in
            let isKey = schema.keyColumns.contains { RowLayout.sameColumn($0, column.name) }
            return modified.contains(RowLayout.columnKey(column.name)) || (isKey && column.value != .null)
        }
        var arguments = StoredValues()
        for column in supplied { arguments.append(column.name, column.value, bytes: column.bytes) }
        let hasIdColumn = schema.hasImplicitId || schema.column(named: "id") != nil
        let changed = try db.onWriter { connection -> Bool in
            let names = Set(supplied.map { RowLayout.columnKey($0.name) })
            let target = try Self.conflictTarget(schema, connection: connection, supplied: names)
            var sql = SqlText.insert(into: table, columns: supplied.map(\.name))
            if let target {
                let targetNames = Set(target.map(RowLayout.columnKey))
                // An update keeps the row's creation stamp.
                var updates = supplied.map(\.name).filter { name in
                    !targetNames.contains(RowLayout.columnKey(name)) && !(schema.createdAt.map { RowLayout.sameColumn($0.name, name) } ?? false)
                }
                if updates.isEmpty { updates = [target[0]] }
                sql += " ON CONFLICT (\(target.map(SqlText.quote).joined(separator: ", "))) DO UPDATE SET "
                    + updates.map { "\(SqlText.quote($0)) = excluded.\(SqlText.quote($0))" }.joined(separator: ", ")
            }
            if hasIdColumn { sql += " RETURNING \"id\"" }
            var returned: DatabaseValue?
            try connection.execute(sql, arguments.encoded) { _, row in
                returned = row[0]
                return true
            }
            if supplied.contains(where: { RowLayout.sameColumn($0.name, "id") && $0.value != .null }) {
                try connection.keysWereSupplied(table: table, key: "id")
            }
            RollbackUndo.finishSave(storage, key: "id", generated: returned == .null ? nil : returned, on: connection)
            return returned != nil || !hasIdColumn
        }
        forgetLayoutMap()
        didSave()
        return changed
    }

    /// The key columns an upsert conflicts on: the primary key when supplied, else the first
    /// declared unique index whose columns are all supplied, else the first such unique index
    /// the database reports (from `constraint(for:)` or the table itself), oldest first.
    private static func conflictTarget(_ schema: ModelSchema, connection: any EngineConnection, supplied: Set<[UInt8]>) throws -> [String]? {
        func isSupplied(_ columns: [String]) -> Bool { !columns.isEmpty && columns.allSatisfy { supplied.contains(RowLayout.columnKey($0)) } }
        if isSupplied(schema.keyColumns) { return schema.keyColumns }
        if let declared = schema.indexes.first(where: { $0.unique && isSupplied($0.columns) }) { return declared.columns }
        return try connection.uniqueKeys(of: schema.tableName).first(where: isSupplied)
    }

    /// The Db handle and schema this instance writes through, or why there is none: those of
    /// its class's dao on the config the instance is bound to (`Dao.target`).
    final func persistenceTarget() throws -> (Db, ModelSchema) {
        try Dao<Self>(binding: binding).target(schema: schema)
    }

    /// `persistenceTarget`'s context, without the `Db` handle (see `Dao.targetContext`).
    final func persistenceContext(in contexts: ContextRegistry) throws -> (DbContext, ModelSchema) {
        try Dao<Self>(binding: binding).targetContext(schema: schema, in: contexts)
    }

    /// Brings untyped values to their declared types (or refuses them), fills in the initial value
    /// of unset non-optional columns on insert, and stamps createdAt/updatedAt.
    private func prepareWrite(_ schema: ModelSchema, context: DbContext, inserting: Bool) throws {
        // What the model reads for an unset column is this instance's initial value, which need
        // not be the table's DEFAULT (`= UUID()`, or a default changed since the table was made).
        // A row with as many columns as declared has them all: the common case costs nothing.
        if inserting, storage.columnCount < schema.columns.count + (schema.hasImplicitId ? 1 : 0),
           schema.columns.contains(where: { !$0.isOptional && storage.storedValue($0.name) == nil }) {
            for field in FieldResolver.fields(of: self) {
                guard case .column(let info) = field.description, !info.isOptional,
                      storage.storedValue(info.name) == nil, let value = info.defaultValue else { continue }
                storage.set(info.name, encoded: value, swiftValue: nil)
            }
        }
        if needsValidation {
            let registry = context.converters
            for (name, value) in try storage.modifiedStoredColumns() {
                guard let column = schema.column(named: name) else { continue }
                do {
                    if let (stored, decoded) = try column.coerce(value, registry), stored != value {
                        storage.set(column.name, encoded: stored, swiftValue: decoded)
                    }
                } catch let error as ConversionError {
                    throw error.inColumn(column.name)
                }
            }
            needsValidation = false
        }
        guard schema.createdAt != nil || schema.updatedAt != nil else { return }
        let now = Date()
        if inserting, let createdAt = schema.createdAt, createdAt.wrappedType == Date.self,
           (storage.storedValue(createdAt.name) ?? .null) == .null {
            writeColumn(createdAt, now)
        }
        if let updatedAt = schema.updatedAt, updatedAt.wrappedType == Date.self {
            writeColumn(updatedAt, now)
        }
    }
}

// The async forms of the writes. The model goes to a pool thread and back while the calling task
// waits for it, so nothing else touches it meanwhile; hooks run on that thread, inside the task's
// async transactions.
extension Model {
    /// The async form of `save()`: INSERTs the model and sets its `id`.
    /// ```swift
    /// try await student.save()
    /// ```
    @discardableResult
    public final func save() async throws -> Bool {
        let model = Handover(value: self)
        return try await BlockingPool.performForTask { try model.value.save() }
    }

    /// The async form of `update()`: UPDATEs the modified columns only.
    /// ```swift
    /// student.age = 21; try await student.update()
    /// ```
    @discardableResult
    public final func update() async throws -> Bool {
        let model = Handover(value: self)
        return try await BlockingPool.performForTask { try model.value.update() }
    }

    /// The async form of `delete()`: true when a row was deleted.
    /// ```swift
    /// try await student.delete()
    /// ```
    @discardableResult
    public final func delete() async throws -> Bool {
        let model = Handover(value: self)
        return try await BlockingPool.performForTask { try model.value.delete() }
    }

    /// The async form of `saveOrUpdate()`: INSERTs, or UPDATEs the row it collides with.
    /// ```swift
    /// let u = User(); u.email = "a@b.c"; try await u.saveOrUpdate()
    /// ```
    @discardableResult
    public final func saveOrUpdate() async throws -> Bool {
        let model = Handover(value: self)
        return try await BlockingPool.performForTask { try model.value.saveOrUpdate() }
    }
}
