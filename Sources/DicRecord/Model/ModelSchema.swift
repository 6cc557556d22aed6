import Foundation
// `_forEachField`: the stored properties of a model class and their offsets (see `FieldResolver.storedProperty`).
@_spi(Reflection) import Swift
import Synchronization

/// What a model class declares, read once per class from a prototype instance through `Mirror`:
/// its table, key, columns (inherited ones first), references, indexes and search columns.
@usableFromInline
final class ModelSchema: Sendable {
    let typeName: String
    let tableName: String
    /// The key columns; `["id"]` with `hasImplicitId` for the default `id INTEGER PRIMARY KEY AUTOINCREMENT`.
    let keyColumns: [String]
    let hasImplicitId: Bool
    let columns: [ColumnInfo]
    let references: [ReferenceInfo]
    let version: Int
    let indexes: [Model.Index]
    let searchColumns: [String]
    let renamedColumns: [String: String]
    let droppedColumns: [String]
    /// Column constraints from `constraint(for:)`, by column name.
    let constraints: [String: String]
    let migrate: @Sendable (Int, Int) -> [Sql]
    let createdAt: ColumnInfo?
    let updatedAt: ColumnInfo?
    /// A problem in the declarations (duplicate column, a type with no converter, ...), thrown by
    /// every database operation and by `start()`.
    let declarationError: DicRecordError?
    /// `declarationError != nil`, read without copying the error.
    let hasDeclarationError: Bool

    /// Every schema built, by model class; never removed from (readers hold schemas unretained).
    private static let cache = Guarded<[ObjectIdentifier: ModelSchema]>([:])
    /// The model class this schema describes.
    let modelType: ObjectIdentifier
    /// The type of the stored field at each offset of the class, from its field records (what a
    /// custom mirror says does not change them): a fetch fills a wrapper only where the field is
    /// of exactly the wrapper's type (`wrapperLoads`).
    private let fieldTypes: [Int: ObjectIdentifier]

    /// The column properties of this class met so far, by where their wrappers lie in the model
    /// object (`Model.columnOffset`), with their slots (-1 for JSON columns, which take the
    /// general path): a property read indexes a small array by the offset.
    @usableFromInline let offsetSlots = Atomic<Unmanaged<KeySlots>>(Unmanaged.passRetained(KeySlots([])))
    private let offsetSlotHistory = Guarded<[KeySlots]>([])

    /// An immutable table from a wrapper's offset to its column slot: an array indexed by the
    /// offset itself (wrappers lie hundreds to a few thousand bytes into their object), one bounds
    /// check and one load a lookup, two bytes an offset. A key of 64 KiB or more (a model with that
    /// much stored before a column) is searched in a short list instead.
    @usableFromInline
    final class KeySlots: Sendable {
        /// For each key below its count: the slot + 2, or 0 when the key is not in the table.
        @usableFromInline let direct: [UInt16]
        /// The pairs whose key is `directLimit` or more.
        @usableFromInline let far: [(key: UInt, slot: Int)]
        /// The pairs, in the order they were seen.
        let pairs: [(key: UInt, slot: Int)]

        static var directLimit: UInt { 1 << 16 }

        init(_ pairs: [(key: UInt, slot: Int)]) {
            self.pairs = pairs
            // Slots are -1 (a JSON column) or a column's position: stored as 1 and up.
            func isNear(_ pair: (key: UInt, slot: Int)) -> Bool {
                pair.key < Self.directLimit && pair.slot >= -1 && pair.slot < Int(UInt16.max) - 2
            }
            var direct = [UInt16](repeating: 0, count: Int(pairs.filter(isNear).map(\.key).max().map { $0 + 1 } ?? 0))
            for pair in pairs where isNear(pair) { direct[Int(pair.key)] = UInt16(pair.slot + 2) }
            self.direct = direct
            far = pairs.filter { !isNear($0) }
        }

        /// The slot of `key`; nil when it is not in the table.
        @inlinable @inline(__always)
        func slot(_ key: UInt) -> Int? {
            if key < UInt(bitPattern: direct.count) {
                let stored = direct[Int(bitPattern: key)]
                return stored == 0 ? nil : Int(stored) &- 2
            }
            return far.isEmpty ? nil : farSlot(key)
        }

        @usableFromInline
        func farSlot(_ key: UInt) -> Int? {
            far.first { $0.key == key }?.slot
        }
    }

    /// The declared column whose wrapper lies at `offset`, when met already and not stored as
    /// JSON. (Read within the schema: the columns array is not retained for each look.)
    @inline(__always)
    func plainColumn(offset: Int) -> ColumnInfo? {
        guard let slot = slot(offset: offset), slot >= 0, slot < columns.count else { return nil }
        let column = columns[slot]
        return column.isJSON ? nil : column
    }

    /// The slot of the column property whose wrapper lies at `offset`; nil when not met yet.
    @inlinable @inline(__always)
    func slot(offset: Int) -> Int? {
        offsetSlots.load(ordering: .acquiring)._withUnsafeGuaranteedRef { $0.slot(UInt(bitPattern: offset)) }
    }

    /// The context this model class last resolved to: in which registry, under which config
    /// name, at which count of `ContextRegistry.changes`.
    private struct ResolvedContext {
        let registry: ObjectIdentifier
        let changes: UInt64
        let name: String?
        let context: DbContext
    }
    private let resolved = Guarded<ResolvedContext?>(nil)

    /// The context `resolve` finds for this model class in `registry` under `name`, remembered
    /// until the registries change (a save or find then takes one lock, not two and a hash).
    func context(in registry: ContextRegistry, named name: String?, resolve: () throws -> DbContext) throws -> DbContext {
        // Read before resolving: a change during the resolution makes the next call resolve again.
        let changes = ContextRegistry.changes.load(ordering: .acquiring)
        let id = ObjectIdentifier(registry)
        if let hit = resolved.withLock({ remembered -> DbContext? in
            guard let remembered, remembered.changes == changes, remembered.registry == id, remembered.name == name else { return nil }
            return remembered.context
        }) {
            return hit
        }
        let context = try resolve()
        resolved.withLock { $0 = ResolvedContext(registry: id, changes: changes, name: name, context: context) }
        return context
    }

    func remember(offset: Int, _ column: ColumnInfo) {
        offsetSlotHistory.withLock { history in
            let current = offsetSlots.load(ordering: .acquiring).takeUnretainedValue()
            guard !current.pairs.contains(where: { $0.key == UInt(bitPattern: offset) }) else { return }
            let next = KeySlots(current.pairs + [(UInt(bitPattern: offset), column.isJSON ? -1 : column.slot)])
            history.append(next)
            offsetSlots.store(Unmanaged.passUnretained(next), ordering: .releasing)
        }
    }

    /// The schema of `type`, built on first use. Building runs the model's `init()` (outside
    /// any lock, so that an init may itself use models).
    static func of(_ type: Model.Type) -> ModelSchema {
        if let found = existing(type) { return found }
        let prototype = type.init()
        let built = ModelSchema(type, prototype: prototype)
        let key = ObjectIdentifier(type)
        let found = cache.withLock { cache in
            if let raced = cache[key] { return raced }
            cache[key] = built
            return built
        }
        if found === built, built.wrappersMayHoldRows {
            built.learnOffsets(on: prototype)
            built.publishNewModelWrappers()
        }
        lastAsked.store(Unmanaged.passUnretained(found), ordering: .releasing)
        return found
    }
    private static let lastAsked = Atomic<Unmanaged<ModelSchema>?>(nil)

    /// The schema of `type` if it was built already; never builds one (so it may be asked from
    /// inside a model's own `init()`, which building runs).
    static func existing(_ type: Model.Type) -> ModelSchema? {
        let key = ObjectIdentifier(type)
        // The schema asked for last, without the lock: a loop saving new models asks once per model.
        // Unretained, as `offsetSlots`: a schema in `cache` is never removed, so it outlives every reader.
        if let last = lastAsked.load(ordering: .acquiring) {
            let schema = last.takeUnretainedValue()
            if schema.modelType == key { return schema }
        }
        guard let cached = cache.withLock({ $0[key] }) else { return nil }
        lastAsked.store(Unmanaged.passUnretained(cached), ordering: .releasing)
        return cached
    }

    private init(_ type: Model.Type, prototype: Model) {
        modelType = ObjectIdentifier(type)
        var fieldTypes: [Int: ObjectIdentifier] = [:]
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { _, offset, fieldType, _ in
            fieldTypes[offset] = ObjectIdentifier(fieldType)
            return true
        }
        self.fieldTypes = fieldTypes
        typeName = String(reflecting: type)
        tableName = type.tableName
        version = type.version
        indexes = type.indexes
        searchColumns = type.searchColumns
        renamedColumns = type.renamedColumns
        droppedColumns = type.droppedColumns
        let keys = SqlText.keyColumns(type.primaryKey)
        keyColumns = keys.isEmpty ? ["id"] : keys
        migrate = { old, new in type.migrate(from: old, to: new) }

        var problems: [String] = []
        var columns: [ColumnInfo] = []
        var references: [ReferenceInfo] = []
        for field in FieldResolver.fields(of: prototype) {
            switch field.description {
            case .column(let info): columns.append(info)
            case .reference(let info):
                references.append(info)
                columns.append(info.column)
            case .children: break
            }
        }
        hasImplicitId = keyColumns.count == 1 && RowLayout.sameColumn(keyColumns[0], "id")
            && !columns.contains { RowLayout.sameColumn($0.name, "id") }
        // Names as SQLite compares them (`RowLayout.columnKey`): "é" and "É" are two columns.
        var seen = Set<[UInt8]>(hasImplicitId ? [RowLayout.columnKey("id")] : [])
        for column in columns where !seen.insert(RowLayout.columnKey(column.name)).inserted {
            problems.append("column '\(column.name)' is declared twice")
        }
        for key in keyColumns where !seen.contains(RowLayout.columnKey(key)) {
            problems.append("primary key column '\(key)' is not a declared column")
        }
        for column in columns where column.storageType(in: .shared) == nil {
            problems.append("column '\(column.name)' has type \(column.wrappedType), which has no global converter and is not Codable; register one with Converters.register (model columns use the global registry)")
        }
        for column in columns where column.isEmptyType {
            problems.append("column '\(column.name)' has type \(column.valueType), which takes no bytes (an empty struct or a one-case enum): its property has no place of its own in the object, where a @Column is found; declare it optional (\(column.valueType)?), which takes one")
        }
        for reference in references where SqlText.keyColumns(reference.target.primaryKey).map(RowLayout.columnKey) != [RowLayout.columnKey("id")] {
            problems.append("@Reference '\(reference.name)' points at \(reference.target), whose key is not 'id'; store its key in a @Column instead")
        }
        for index in indexes {
            for name in index.columns where !seen.contains(RowLayout.columnKey(name)) {
                problems.append("index on '\(name)', which is not a declared column")
            }
        }
        for name in searchColumns where !seen.contains(RowLayout.columnKey(name)) {
            problems.append("search column '\(name)', which is not a declared column")
        }
        var constraints: [String: String] = [:]
        for column in columns {
            if let constraint = type.constraint(for: column.name) { constraints[column.name] = constraint }
        }
        self.constraints = constraints
        self.columns = columns
        self.references = references
        func timestamp(_ names: String...) -> ColumnInfo? {
            columns.first { column in names.contains { RowLayout.sameColumn($0, column.name) } }
        }
        createdAt = timestamp("createdAt", "created_at")
        updatedAt = timestamp("updatedAt", "updated_at")
        declarationError = problems.isEmpty ? nil : DicRecordError(.invalidModel,
            "model \(typeName) (table '\(tableName)'): " + problems.joined(separator: "; "))
        hasDeclarationError = !problems.isEmpty
    }

    /// The INSERT for the columns of `row`; the ones built are kept (a loop of saves reuses the
    /// last). `last` is `lastInsertStatement`, read by the caller before its snapshot.
    func insertSQL(for row: InsertRow, last: LastInsert?) -> String {
        // The common case by its fields: `hasColumns` takes a copy of the kept shape (a retain,
        // a release and the copy's own code, 100 instructions a save).
        if let last, (last.shape.layout === row.shape.layout && last.shape.omitted == row.shape.omitted)
            || last.shape.hasColumns(of: row.shape) { return last.sql }
        // A shape kept already is published again (models saved in two shapes by turns); a new
        // one is kept and published while there is room, else its SQL is built each time.
        // (Kept without its values: a large text or blob of the last row is not held.)
        return inserts.object(matching: { $0.shape.hasColumns(of: row.shape) },
                              make: { LastInsert(shape: row.shape, sql: SqlText.insert(into: tableName, columns: row.names)) }).sql
    }
    /// The shape and SQL of an INSERT built, as one object: reading it is one retain, where a
    /// tuple of them was copied field by field (250 instructions on every save).
    final class LastInsert: Sendable {
        let shape: InsertShape
        let sql: String
        init(shape: InsertShape, sql: String) {
            self.shape = shape
            self.sql = sql
        }
    }
    /// The INSERTs built for saves of records, the last one read by every save without a lock (a
    /// lock and its release were two atomic operations a save; see `KeptObjects`).
    private let inserts = KeptObjects<LastInsert>(limit: insertsKeptLimit)
    static let insertsKeptLimit = 64
    var lastInsertStatement: LastInsert? { inserts.current }
    /// How many INSERTs of records are kept (tests).
    var insertsKeptCount: Int { inserts.count }

    /// How new models of this class keep the values written to their columns in their own
    /// `@Column` wrappers until saved (`Model.keepsInWrapper`); nil when they cannot, and write to
    /// their records. Published once, when the schema is built (`publishNewModelWrappers`), and
    /// never freed, as the schema is not.
    var newModelWrappers: NewModelWrappers? { newModelWrappersSlot.load(ordering: .acquiring)?.takeUnretainedValue() }
    private let newModelWrappersSlot = Atomic<Unmanaged<NewModelWrappers>?>(nil)

    /// Publishes `newModelWrappers`, when every declared column is of a `WrapperKind` at a known
    /// place (as a fetch needs to fill the wrappers), the key is the implicit `id`, and there are
    /// at most 64 columns (one bit each in the model's mask of written columns).
    fileprivate func publishNewModelWrappers() {
        guard wrappersMayHoldRows, hasImplicitId, columns.count <= 64, createdAt == nil, updatedAt == nil else { return }
        var offsets = [Int](repeating: -1, count: columns.count)
        for pair in offsetSlots.load(ordering: .acquiring).takeUnretainedValue().pairs where pair.slot >= 0 && pair.slot < columns.count {
            offsets[pair.slot] = Int(bitPattern: pair.key)
        }
        var slots: [WrapperSlot] = []
        var required: UInt64 = 0
        for (slot, column) in columns.enumerated() {
            guard let wrapper = column.wrapper, offsets[slot] > 0,
                  fieldTypes[offsets[slot]] == ObjectIdentifier(wrapper.kind.columnType) else { return }
            slots.append(wrapper)
            if !column.isOptional { required |= 1 << UInt64(slot) }
        }
        let made = NewModelWrappers(offsets: offsets, slots: slots, required: required, table: tableName, names: columns.map(\.name))
        // Retained for good: the schema, which is never freed, holds it from here on.
        newModelWrappersSlot.store(Unmanaged.passRetained(made), ordering: .releasing)
    }

    /// The FTS5 table that indexes the `searchColumns` of the model table `table`: the dao
    /// searches it, schema upkeep creates it and its triggers.
    static func searchTable(_ table: String) -> String { "\(table)_fts" }

    /// The declared column named `name` (case-insensitive).
    func column(named name: String) -> ColumnInfo? {
        columns.first { RowLayout.sameColumn($0.name, name) }
    }

    /// Throws the `ConversionError` of the first declared column whose stored value in `record`
    /// (a fetched, unwritten row) does not convert to the property's type.
    func checkStoredValues(of record: Record, map: LayoutMap?) throws {
        let values = record.baseValues
        let registry = record.baseLayout.registry
        let fast = record.fastPathAllowed
        let positions = map.flatMap { $0.layout === record.baseLayout ? $0.positions : nil }
        for (slot, column) in columns.enumerated() {
            let position = positions.map { $0[slot] } ?? record.baseLayout.position(of: column.name) ?? -1
            guard position >= 0 else { continue }
            do {
                try column.check(values[position], registry: registry, fast: fast)
            } catch let error as ConversionError {
                let key = keyColumns.map { "\($0) = \(record.storedValue($0)?.description ?? "?")" }.joined(separator: ", ")
                throw error.inModel(typeName, rowKey: key)
            }
        }
    }

    /// `checkStoredValues(of:map:)` for every record of a fetch, `map` being its layout's. For
    /// most rows the storage class of each value, read from its tag, is all it takes (no value
    /// is materialized); a row with any other value is checked one column at a time.
    func checkStoredValues(of records: [Record], map: LayoutMap) throws {
        let checks = fastChecks(map)
        let fast = records.first?.fastPathAllowed ?? false
        for record in records {
            if fast, !record.isMutated, record.baseLayout === map.layout, Self.fastKindsTake(record.baseValues, checks) { continue }
            try checkStoredValues(of: record, map: map)
        }
    }

    /// `checkStoredValues(of:map:)` for rows of `map`'s layout that no record holds yet. A row in
    /// a fetch's block is checked on its tags alone: one mask test a value for NULL, INTEGER and
    /// REAL, a look at the object for TEXT or BLOB.
    func checkStoredValues(of rows: [RowValues], map: LayoutMap) throws {
        let checks = fastChecks(map)
        let fast = map.fastPathAllowed
        let tagChecks = ContiguousArray(checks.map { TagCheck(position: $0.position, kind: $0.kind) })
        let lastPosition = checks.map(\.position).max() ?? -1
        // Read in place: a copy of each row would retain and release its block.
        try rows.withUnsafeBufferPointer { rows in
            for index in rows.indices {
                if fast {
                    if !rows[index].storage.isArray {
                        // Positions come from the map's layout, which every row of the fetch has.
                        precondition(lastPosition < rows[index].count, "column index out of range")
                        if Self.tagsTake(rows[index].storage, start: Int(rows[index].start), tagChecks) { continue }
                    } else if Self.fastKindsTake(rows[index], checks) {
                        continue
                    }
                }
                try checkStoredValues(of: Record(layout: map.layout, values: rows[index]), map: map)
            }
        }
    }

    /// One declared column's load check on a block's tags: which tags pass as they are.
    struct TagCheck {
        let position: Int
        let kind: BuiltInRules.Reads
        /// Bit `tag.rawValue` set: every value with that tag passes.
        let passing: UInt8
        /// An object passes when it is TEXT (or when it is a BLOB).
        let text: Bool
        let blob: Bool

        init(position: Int, kind: BuiltInRules.Reads) {
            self.position = position
            self.kind = kind
            var passing: UInt8 = 1 << RowStorage.Tag.null.rawValue
            if kind.takesAll(.integer) { passing |= 1 << RowStorage.Tag.integer.rawValue }
            if kind.takesAll(.real) { passing |= 1 << RowStorage.Tag.real.rawValue }
            self.passing = passing
            text = kind.takesAll(.text)
            blob = kind.takesAll(.blob)
        }
    }

    @inline(__always)
    private static func tagsTake(_ storage: RowStorage, start: Int, _ checks: ContiguousArray<TagCheck>) -> Bool {
        for checkIndex in checks.indices {
            let check = checks[checkIndex]
            let index = start &+ check.position
            let tag = storage.tags[index]
            if check.passing & (1 << tag.rawValue) != 0 { continue }
            if tag == .object, check.text || check.blob {
                let isText = { if case .text = storage.objects[Int(storage.payload(at: index))] { return true } else { return false } }()
                if isText ? check.text : check.blob { continue }
            }
            // A date stored as REAL seconds loads when finite: one look at the number.
            if check.kind == .date, tag == .real, BuiltInRules.date(storage.value(at: index)) != nil { continue }
            return false
        }
        return true
    }

    /// The position and fast read of each declared column `map`'s layout has.
    private func fastChecks(_ map: LayoutMap) -> ContiguousArray<(position: Int, kind: BuiltInRules.Reads)> {
        var checks = ContiguousArray<(position: Int, kind: BuiltInRules.Reads)>()
        for (slot, column) in columns.enumerated() where map.positions[slot] >= 0 {
            checks.append((map.positions[slot], column.fastKind))
        }
        return checks
    }

    /// Whether every checked value of `values` is of a storage class its column's fast read
    /// takes as it is: the storage class of each value, read from its tag, is all it takes (no
    /// value is materialized).
    @inline(__always)
    private static func fastKindsTake(_ values: RowValues, _ checks: ContiguousArray<(position: Int, kind: BuiltInRules.Reads)>) -> Bool {
        for check in checks {
            let stored = values.storageClass(at: check.position)
            if check.kind.takesAll(stored) { continue }
            // A date stored as REAL seconds loads when finite: one look at the number.
            if check.kind == .date, stored == .real, BuiltInRules.date(values[check.position]) != nil { continue }
            return false
        }
        return true
    }

    /// For each declared column (by slot), its position in `layout`, or -1.
    /// With `filling`, the map also says how a fetch fills the models' wrappers (`wrapperLoads`),
    /// and holds the config its models are bound to (`binding`).
    func positions(in layout: RowLayout, filling: Bool = false, binding: ConfigBinding? = nil) -> LayoutMap {
        let positions = columns.map { layout.position(of: $0.name) ?? -1 }
        return LayoutMap(layout: layout, schema: self, positions: positions,
                         wrapperLoads: filling ? wrapperLoads(positions) : nil, binding: binding)
    }

    /// Where a fetch puts each declared column's value into the model's wrapper, for rows laid
    /// out with `positions`: nil unless every declared column is of a `WrapperKind` and its
    /// wrapper's place is known (a model with a reference or a JSON column reads its row).
    private func wrapperLoads(_ positions: [Int]) -> ContiguousArray<WrapperLoad>? {
        guard wrappersMayHoldRows else { return nil }
        var offsets = [Int](repeating: -1, count: columns.count)
        for pair in offsetSlots.load(ordering: .acquiring).takeUnretainedValue().pairs where pair.slot >= 0 && pair.slot < columns.count {
            offsets[pair.slot] = Int(bitPattern: pair.key)
        }
        var loads = ContiguousArray<WrapperLoad>()
        for (slot, column) in columns.enumerated() {
            guard let wrapper = column.wrapper, offsets[slot] > 0,
                  fieldTypes[offsets[slot]] == ObjectIdentifier(wrapper.kind.columnType) else { return nil }
            // A column the row lacks keeps its initial value, as a read of it gives.
            if positions[slot] >= 0 { loads.append(WrapperLoad(position: positions[slot], offset: offsets[slot], slot: wrapper)) }
        }
        return loads
    }

    /// Whether a fetch may fill this class's wrappers (`wrapperLoads`): every declared column is
    /// of a `WrapperKind` (none is JSON, whose description is learned at its first access).
    private var wrappersMayHoldRows: Bool {
        !hasDeclarationError && references.isEmpty && !columns.isEmpty && columns.allSatisfy { $0.wrapper != nil }
    }

    /// Learns where every `@Column` wrapper of the class lies, on the schema's prototype model
    /// (as a first read of each property would), so that the first fetch can fill the wrappers.
    fileprivate func learnOffsets(on prototype: Model) {
        var offsets: [Int] = []
        _ = _forEachField(of: type(of: prototype), options: _EachFieldOptions(rawValue: 1 << 0)) { _, offset, fieldType, _ in
            if offset > 0, fieldType is any ModelField.Type { offsets.append(offset) }
            return true
        }
        for offset in offsets where slot(offset: offset) == nil {
            guard let field = FieldResolver.learn(offset: offset, on: prototype), case .column(let info) = field.description else { continue }
            remember(offset: offset, info)
        }
    }
}

/// One value of a row, as `LayoutMap.read` read it for a wrapper.
struct WrapperNumber {
    let tag: RowTag
    let bits: UInt64
}

/// One declared column a fetch stores in the model's wrapper: where the value is in the row,
/// where the wrapper is in the model, and its kind.
struct WrapperLoad {
    let position: Int
    let offset: Int
    let slot: WrapperSlot
}

/// Where a new model of one class keeps the values written to its columns (`Model.keepsInWrapper`):
/// each declared column's wrapper, by slot, and the INSERTs of the sets of columns saved so far.
final class NewModelWrappers: Sendable {
    /// Where each column's wrapper lies in the model object, by slot.
    let offsets: [Int]
    /// Each column's wrapper kind and initial value, by slot.
    let slots: [WrapperSlot]
    /// The non-optional columns: a save from the wrappers needs each written (an unset one is
    /// given its DEFAULT through the record, as `prepareWrite` does).
    let required: UInt64
    private let table: String
    private let names: [String]
    private let inserts = KeptObjects<WrapperInsert>(limit: ModelSchema.insertsKeptLimit)

    init(offsets: [Int], slots: [WrapperSlot], required: UInt64, table: String, names: [String]) {
        self.offsets = offsets
        self.slots = slots
        self.required = required
        self.table = table
        self.names = names
    }

    /// The INSERT of the columns `written` (a bit per slot), their values read from the wrappers.
    func insert(for written: UInt64) -> WrapperInsert {
        if let last = inserts.current, last.written == written { return last }
        return inserts.object(matching: { $0.written == written }, make: {
            let slots = (0..<self.slots.count).filter { written & (1 << UInt64($0)) != 0 }
            return WrapperInsert(written: written, names: slots.map { names[$0] },
                                 loads: slots.map { (offsets[$0], self.slots[$0]) }, table: table)
        })
    }

    /// How many INSERTs are kept, and the SQL of the one published (tests).
    var insertsKeptCount: Int { inserts.count }
    var lastInsertSQL: String? { inserts.current?.sql }
}

/// The INSERT of a set of columns of new models, with where each value is read from.
final class WrapperInsert: Sendable {
    let written: UInt64
    let sql: String
    /// Each parameter's wrapper: its place in the model object and its kind.
    let loads: [(offset: Int, slot: WrapperSlot)]

    init(written: UInt64, names: [String], loads: [(offset: Int, slot: WrapperSlot)], table: String) {
        self.written = written
        sql = SqlText.insert(into: table, columns: names)
        self.loads = loads
    }

    /// The stored value of parameter `index`, read from the wrappers of the model at `model`.
    // Unsafe, fenced: each offset is where that column's wrapper lies in every instance of the
    // class (`NewModelWrappers.offsets`, checked against the class's field records), as for a
    // fetch's `WrapperLoad`; `NewModelWrapperTests` reads every kind back from the database.
    @inline(__always)
    func value(at index: Int, in model: UnsafeRawPointer) -> DatabaseValue {
        loads[index].slot.value(in: model + loads[index].offset)
    }
}

/// Where a model's declared columns sit in the rows of one statement: computed once per fetch
/// and shared by every model it returns, so that a property read skips the name lookup.
@usableFromInline
final class LayoutMap: Sendable {
    @usableFromInline let layout: RowLayout
    @usableFromInline let schema: ModelSchema
    @usableFromInline let positions: [Int]
    /// How a fetch fills the models' wrappers (`ModelSchema.wrapperLoads`), when the rows hold
    /// nothing else: the declared columns, each once, and the implicit `id` (`keyPosition`).
    /// Nil: the models read their rows.
    let wrapperLoads: ContiguousArray<WrapperLoad>?
    /// Where the implicit `id` is in the rows, or -1.
    let keyPosition: Int

    /// The config of the dao whose fetch made this map, for its models (`Model.binding`).
    let binding: ConfigBinding?

    init(layout: RowLayout, schema: ModelSchema, positions: [Int], wrapperLoads: ContiguousArray<WrapperLoad>?,
         binding: ConfigBinding? = nil) {
        self.binding = binding
        self.layout = layout
        self.schema = schema
        self.positions = positions
        let key = schema.hasImplicitId ? layout.position(of: "id") ?? -1 : -1
        keyPosition = key
        let count = layout.names.count
        // Every position of the row is the key's or one declared column's: the record made from
        // the wrappers holds the whole row.
        if let loads = wrapperLoads, layout.namesAreDistinct, loads.count + (key >= 0 ? 1 : 0) == count,
           Set(loads.map(\.position) + (key >= 0 ? [key] : [])).count == count {
            self.wrapperLoads = loads
        } else {
            self.wrapperLoads = nil
        }
    }

    /// How many values `read` reads (the declared columns the rows hold).
    var wrapperLoadCount: Int { wrapperLoads?.count ?? 0 }

    /// Reads the current row's key into `key` and its declared columns' values into `numbers`
    /// (in `wrapperLoads` order); false when one is of a storage class its wrapper does not
    /// take (`WrapperSlot.takes`), or the key is not an INTEGER: the model then reads its row.
    func read(_ row: SteppedRow, into numbers: UnsafeMutableBufferPointer<WrapperNumber>, key: inout Int64) -> Bool {
        guard let loads = wrapperLoads, numbers.count >= loads.count else { return false }
        if keyPosition >= 0 {
            let stored = row.number(at: keyPosition)
            guard stored.tag == .integer else { return false }
            key = Int64(bitPattern: stored.bits)
        }
        for index in loads.indices {
            let stored = row.number(at: loads[index].position)
            guard loads[index].slot.takes(stored.tag) else { return false }
            numbers[index] = WrapperNumber(tag: stored.tag, bits: stored.bits)
        }
        return true
    }

    /// Stores `numbers` (what `read` read) in `model`'s wrappers; false, storing nothing, when a
    /// wrapper holds another value than the schema's initial one (an init that gives each
    /// instance its own keeps it: the model reads its row, and a NULL reads that value).
    func store(_ numbers: UnsafeBufferPointer<WrapperNumber>, in model: Model) -> Bool {
        guard let loads = wrapperLoads, numbers.count >= loads.count else { return false }
        // Unsafe, fenced: each offset is where that column's wrapper lies in every instance of
        // the model's class (`Model.columnOffset`, matched with the property by the schema), and
        // the model is new, held by the caller alone (see `WrapperSlot`).
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(model).toOpaque())
        for index in loads.indices {
            let load = loads[index]
            guard load.slot.replaceInitialValue(with: numbers[index].tag, bits: numbers[index].bits, in: base + load.offset) else {
                // The ones stored so far held their initial values: they get them back.
                for earlier in loads[..<index] { earlier.slot.restore(in: base + earlier.offset) }
                return false
            }
        }
        return true
    }

    /// The row `model`'s wrappers and `key` hold (what `store` stored), in this map's layout.
    func row(ofWrappers model: Model, key: Int64) -> RowValues {
        var values = ContiguousArray<DatabaseValue>(repeating: .null, count: layout.names.count)
        if keyPosition >= 0 { values[keyPosition] = .integer(key) }
        // Unsafe, fenced: as in `store` (each offset is that column's wrapper in every instance
        // of the class; see `WrapperSlot` for the test).
        let base = UnsafeRawPointer(Unmanaged.passUnretained(model).toOpaque())
        for load in wrapperLoads ?? [] { values[load.position] = load.slot.value(in: base + load.offset) }
        return RowValues(values)
    }

    /// Gives `model`'s wrappers their initial values back (the model reads its record from now on).
    func restoreWrappers(of model: Model) {
        guard let loads = wrapperLoads else { return }
        // Unsafe, fenced: as in `store`.
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(model).toOpaque())
        for load in loads { load.slot.restore(in: base + load.offset) }
    }

    /// The stored value of the column property whose wrapper lies at `offset` in `record`, when this map applies to it
    /// (the record is unwritten, the key is known and not a JSON column); `.miss` otherwise.
    @inlinable @inline(__always)
    func storedValue(offset: Int, in record: Record) -> MapRead {
        guard !record.isMutated, record.baseLayout === layout, let slot = schema.slot(offset: offset), slot >= 0 else { return .miss }
        let position = positions[slot]
        return position >= 0 ? .value(record.baseValues[position]) : .absent
    }

    /// Whether the built-in conversions apply to this layout's registry (see `Record.fastPathAllowed`).
    @inlinable
    var fastPathAllowed: Bool {
        !Converters.anyReplacesFastPathType.load(ordering: .relaxed) || registryAllowsFastPath
    }

    @usableFromInline
    var registryAllowsFastPath: Bool { layout.registry.fastPathEnabled }
}

/// A `@Column` read: the value, or that the class has not met the property yet.
@usableFromInline
enum ColumnRead<Value> {
    case value(Value)
    case unknownColumn
}

/// A fetched model's read in place: the value, decoded on the way, or what the row holds.
@usableFromInline
enum FetchedRead<Value> {
    case decoded(Value?)
    case read(MapRead)
}

@usableFromInline
enum MapRead {
    case value(DatabaseValue)
    case absent
    case miss
}

/// Finds which declared field a property wrapper is, and keeps the answer per key path (a
/// reference: its wrapper is marked on the instance at hand and found again by `Mirror`) or per
/// model class and wrapper offset (a column, `Model.columnOffset`: the stored property that
/// begins there, by the runtime's field records). This needs no schema, so it works inside a
/// model's own `init()`.
enum FieldResolver {
    struct Field {
        let name: String
        let description: FieldDescription
    }

    final class Entry: @unchecked Sendable {
        // Key paths are immutable; they are kept only so their addresses are never reused.
        let keyPath: AnyKeyPath
        let field: Field
        init(keyPath: AnyKeyPath, field: Field) {
            self.keyPath = keyPath
            self.field = field
        }
    }

    private final class Table: Sendable {
        let entries: [ObjectIdentifier: Entry]
        /// `@Column` fields by model class and wrapper offset (`Model.columnOffset`).
        let columns: [ColumnKey: Field]
        init(_ entries: [ObjectIdentifier: Entry], columns: [ColumnKey: Field]) {
            self.entries = entries
            self.columns = columns
        }
    }

    struct ColumnKey: Hashable {
        let type: ObjectIdentifier
        let offset: Int
    }

    /// An immutable table read without a lock; additions publish a new one and keep the old ones
    /// alive (`history`), so a reader never needs to retain what it loaded.
    private static let current = Atomic<Unmanaged<Table>>(Unmanaged.passRetained(Table([:], columns: [:])))
    private static let history = Guarded<[Table]>([])

    static func entry(_ key: AnyKeyPath) -> Entry? {
        current.load(ordering: .acquiring).takeUnretainedValue().entries[ObjectIdentifier(key)]
    }

    /// The entry of a key path equal to `key` (another instance of the same key path).
    static func entry(equalTo key: AnyKeyPath) -> Entry? {
        current.load(ordering: .acquiring).takeUnretainedValue().entries.values.first { $0.keyPath == key }
    }

    /// The field of `key`, resolved on `model` when it was not seen before.
    static func field<M: Model, F: ModelField>(_ key: ReferenceWritableKeyPath<M, F>, on model: M) -> Field? {
        if let entry = entry(key) { return entry.field }
        // A generic model class makes a new key path object on every access: found by
        // equality, it is not added again (the table would grow without bound).
        if let entry = entry(equalTo: key) { return entry.field }
        model[keyPath: key].probe = true
        let found = fields(of: model, only: { _, _, _, field in field.probe }).first
        model[keyPath: key].probe = false
        guard let found else { return nil }
        add(key, found)
        return found
    }

    /// Records that `key` (a wrapped property's key path) is `field`.
    static func add(_ key: AnyKeyPath, _ field: Field) {
        history.withLock { history in
            let table = current.load(ordering: .acquiring).takeUnretainedValue()
            guard table.entries[ObjectIdentifier(key)] == nil else { return }
            var entries = table.entries
            entries[ObjectIdentifier(key)] = Entry(keyPath: key, field: field)
            publish(Table(entries, columns: table.columns), in: &history)
        }
    }

    /// The `@Column` field whose wrapper lies at `offset` in `model`'s class, when it was learned.
    static func field(offset: Int, of model: Model) -> Field? {
        current.load(ordering: .acquiring).takeUnretainedValue().columns[ColumnKey(type: ObjectIdentifier(type(of: model)), offset: offset)]
    }

    /// Learns which `@Column` field of `model` lies at `offset`: the stored property there is
    /// found in the runtime's field records (`storedProperty(at:in:)`), and described through
    /// `Mirror` as every field is, matched by its place among all stored properties (base class
    /// first, as both list them) and its name. (By name alone, a base class's private wrapper of
    /// the same name would be taken for a subclass's column.) A `CustomReflectable` model's
    /// mirror need not list its properties as the class declares them: there a wrapper of that
    /// name in that place, else the one column of that name, is taken. The first answer for the
    /// class is kept (a JSON column's description, like a write's encoding, stays as first made).
    static func learn(offset: Int, on model: Model) -> Field? {
        let key = ColumnKey(type: ObjectIdentifier(type(of: model)), offset: offset)
        guard let property = storedProperty(at: offset, in: type(of: model)) else { return nil }
        let custom = model is any CustomReflectable
        var places: [(index: Int, isPlace: Bool)] = []
        let named = fields(of: model, only: { index, isPlace, label, _ in
            // A child whose place is known (the runtime's mirror of its class) and is another
            // property's is not this one, whatever its name.
            guard label == property.name, (custom && !isPlace) || index == property.index else { return false }
            places.append((index, isPlace))
            return true
        })
        let found: Field?
        // The child at the property's own known place first; then one whose place in a custom
        // chain happens to be that number; then the one column of the name.
        if let i = places.firstIndex(where: { $0.isPlace && $0.index == property.index })
            ?? places.firstIndex(where: { $0.index == property.index }) {
            found = named[i]
        } else {
            let columns = named.filter { if case .column = $0.description { true } else { false } }
            found = custom && columns.count == 1 ? columns[0] : nil
        }
        guard let found else { return nil }
        return history.withLock { history in
            let table = current.load(ordering: .acquiring).takeUnretainedValue()
            if let kept = table.columns[key] { return kept }
            var columns = table.columns
            columns[key] = found
            publish(Table(table.entries, columns: columns), in: &history)
            return found
        }
    }

    /// Makes `table` the current one, keeping every earlier one alive (readers hold them unretained).
    private static func publish(_ table: Table, in history: inout [Table]) {
        history.append(table)
        current.store(Unmanaged.passUnretained(table), ordering: .releasing)
    }

    /// A stored property of a model class: its place among all of them (superclasses' first,
    /// each class's in declaration order) and its name.
    struct StoredProperty: Equatable {
        let index: Int
        let name: String
    }

    /// The stored property of `type` (a model class) that begins `offset` bytes into its
    /// instances, from the field records the compiler emits (superclasses' fields included); nil
    /// when none does. Only a property of size 0 has no bytes of its own: the records put it at
    /// offset 0, inside the object's header, where no wrapper lies (and the schema refuses a
    /// `@Column` of such a type, whose accessor could not find it).
    static func storedProperty(at offset: Int, in type: AnyClass) -> StoredProperty? {
        var found: StoredProperty?
        var index = 0
        // `.classType`, spelled by its value: the standard library declares the option a mutable
        // static, which strict concurrency refuses to read. (Without it, `_forEachField` refuses a
        // class: `ModelColumnOffsetTests.columnsAreFoundByTheOffsetOfTheirWrappers` fails.)
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, fieldOffset, _, _ in
            defer { index += 1 }
            guard fieldOffset == offset, offset > 0 else { return true }
            found = StoredProperty(index: index, name: String(cString: name))
            return false
        }
        return found
    }

    /// Said once per model class and offset: a `@Column` accessor whose wrapper could not be
    /// matched with a stored property of the class (it reads its initial value, and a write is
    /// dropped): a type of size 0, which the schema refuses too, or a `CustomReflectable` model
    /// whose mirror leaves the wrapper out or lists it under another name.
    private static let unfound = Guarded<Set<ColumnKey>>([])

    static func reportUnfound(offset: Int, in type: Model.Type) {
        let key = ColumnKey(type: ObjectIdentifier(type), offset: offset)
        guard unfound.withLock({ $0.insert(key).inserted }) else { return }
        ReadOrigin.builtInCode.reporter.logger.warning(
            "[DicRecord] a @Column property of \(String(reflecting: type)) could not be matched with a stored property of the class (its wrapper lies \(offset) bytes into the object; a type of size 0, or a custom Mirror that leaves the wrapper out or renames it): it reads its initial value and writes to it are dropped")
    }

    /// How one level of a mirror chain is read: the runtime's own mirror of a class, whose
    /// children are that class's stored properties in the order of its field records (`start`:
    /// how many its superclasses have; `wrappers`: which of its own are model fields).
    struct LevelPlan {
        let start: Int
        let wrappers: [Bool]
    }

    /// The plan of `level`, a level under a custom mirror, when it is the runtime's own mirror of
    /// an ancestor of the model: a `.class` mirror of one of `ancestors`, listing as many children
    /// as that class declares stored properties, its wrappers' places bearing their names. (Only
    /// the wrappers' children are looked at: counting and naming them reads no other value.) Nil
    /// for someone's own mirror, which is then read in full.
    private static func runtimePlan(of level: Mirror, ancestors: Set<ObjectIdentifier>) -> LevelPlan? {
        guard level.displayStyle == .class, let subject = level.subjectType as? AnyClass,
              ancestors.contains(ObjectIdentifier(subject)) else { return nil }
        let all = storedProperties(of: subject, names: true)
        let start = _getSuperclass(subject).map { storedProperties(of: $0, names: false).count } ?? 0
        let own = all[start...]
        let children = level.children
        guard children.count == own.count else { return nil }
        for (position, property) in zip(children.indices, own) where property.isWrapper {
            guard children[position].label == property.name else { return nil }
        }
        return LevelPlan(start: start, wrappers: own.map(\.isWrapper))
    }

    /// The stored properties of `type` (base classes' first), from its field records: whether
    /// each is a model field (`@Column`, `@Reference`, ...), and its name when `names`.
    private static func storedProperties(of type: AnyClass, names: Bool) -> [(name: String, isWrapper: Bool)] {
        var properties: [(name: String, isWrapper: Bool)] = []
        _ = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, _, fieldType, _ in
            properties.append((names ? String(cString: name) : "", fieldType is any ModelField.Type))
            return true
        }
        return properties
    }

    /// The declared fields of `model`, base classes first, each column with its slot. With
    /// `only`, those it accepts, given the child's place: on a level that is the runtime's
    /// mirror of its class, the stored property's place among all of them, as in
    /// `storedProperty(at:in:)` (and `true`); else its place in the mirror chain (and `false`);
    /// its label and its wrapper.
    static func fields(of model: Model, only keep: ((Int, Bool, String, any ModelField) -> Bool)? = nil) -> [Field] {
        var chain: [Mirror] = []
        var mirror: Mirror? = Mirror(reflecting: model)
        while let current = mirror {
            chain.append(current)
            mirror = current.superclassMirror
        }
        // Which stored properties are wrappers, told by their types: only those values are read.
        // (Reading every value would read an `unowned` property, which traps when its object is
        // gone: the first access to a column of the class would stop the process.) Each level
        // that is the runtime's own mirror of a class has its places told by that class's field
        // records; a level that is someone's own (`CustomReflectable`) has every child read.
        let custom = model is any CustomReflectable
        var plans: [LevelPlan?]
        if custom {
            var ancestors: Set<ObjectIdentifier> = []
            var walk: AnyClass? = _getSuperclass(type(of: model))
            while let current = walk {
                ancestors.insert(ObjectIdentifier(current))
                walk = _getSuperclass(current)
            }
            // The top is the model's own mirror: read in full.
            plans = [nil] + chain.dropFirst().map { runtimePlan(of: $0, ancestors: ancestors) }
        } else {
            // No custom mirror anywhere: every level is the runtime's, base class first in the records.
            let wrappers = storedProperties(of: type(of: model), names: false).map(\.isWrapper)
            let listed = chain.reduce(0, { $0 + $1.children.count })
            plans = Array(repeating: nil, count: chain.count)
            if listed == wrappers.count {
                var start = listed
                for (level, mirror) in chain.enumerated() {
                    start -= mirror.children.count
                    plans[level] = LevelPlan(start: start, wrappers: Array(wrappers[start..<(start + mirror.children.count)]))
                }
            }
        }
        var result: [Field] = []
        var slot = 0
        var running = -1
        for (level, mirror) in chain.enumerated().reversed() {
            let plan = plans[level]
            let children = mirror.children
            for (offset, position) in children.indices.enumerated() {
                running += 1
                // A runtime level's place is the stored property's among all (as `storedProperty(at:in:)` counts).
                let index = plan.map { $0.start + offset } ?? running
                if let plan, !plan.wrappers[offset] { continue }
                let child = children[position]
                guard let field = child.value as? any ModelField, let label = child.label else { continue }
                let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
                var description = field.describe(name: name)
                switch description {
                case .column(let info):
                    description = .column(info.with(slot: slot))
                    slot += 1
                case .reference(let info):
                    description = .reference(info.with(slot: slot))
                    slot += 1
                case .children: break
                }
                if keep?(index, plan != nil, label, field) ?? true { result.append(Field(name: name, description: description)) }
            }
        }
        return result
    }
}
