import Foundation
import Synchronization

/// A typed active record (PSModel): declared columns over the same lazily converting storage as
/// ``Record``, a ``Dao`` of finders, a table created and kept up to date from the declarations.
///
/// ```swift
/// final class Student: Model {
///     @Column var name: String?
///     @Column var age: Int?
///     @Column var born: Date?
///     override class var tableName: String { "student" }
/// }
/// main.register(Student.self)
/// try main.start()                                    // creates or upgrades "student"
/// let s = Student(); s.name = "张三"; s.age = 20
/// try s.save()                                        // s.id is set
/// let found = try Student.dao.findById(s.id)
/// ```
///
/// Models are not `Sendable`: one model is used by one task or thread at a time (like any class
/// with mutable state). To hand one to another task, pass its ``record`` (a `Sendable` ``Record``)
/// and rebuild it there with ``init(record:)``, or pass its `id` and find it again; or transfer
/// it with `sending`. A `Dao` is `Sendable` and may be used from any task. Even reads may change
/// a model (a fetched model makes its record on first need), so a model shared "read-only"
/// between threads is a race too.
open class Model: CustomStringConvertible {
    // A model is used by one thread at a time (it is not Sendable, and the compiler holds
    // callers to that), so the runtime's dynamic exclusivity checks on its fields, which cost
    // as much as a column read, are off. `ModelConcurrencyTests` runs models on many threads,
    // under ThreadSanitizer in .ci/run, and fails if the library itself shares one.

    /// Where the model's values are: its record, once made, or what a fetch left (its row in
    /// place, or its own wrappers) until something asks for the record or writes a column. One
    /// field for all of them (they are never set together): a model is bytes in every instance.
    @usableFromInline @exclusivity(unchecked) final var fetched: FetchedValues = .none
    /// Set when values arrived untyped (subscript, JSON, a record): they are checked against the
    /// declared types before the next save or update. (Declared here, it takes a byte of the
    /// padding after `fetched`.)
    final var needsValidation = false
    /// Positions of the declared columns in the fetched layout (set by the dao).
    @usableFromInline @exclusivity(unchecked) final var layoutMap: LayoutMap?
    /// The model's own config binding and loaded references, in one word (`ModelSide`).
    @exclusivity(unchecked) final var side: ModelSide = .none

    /// The config chosen by `use(_:)` or by the dao this model was found through (the dao's
    /// object, shared by the models it finds: one word a model, where a `String?` is two). Nil
    /// for a model a dao streamed: its map holds the dao's (`binding`), and each model would
    /// otherwise take a reference of its own to one shared object, an atomic count each way.
    final var ownBinding: ConfigBinding? {
        get {
            switch side {
            case .none: nil
            case .bound(let binding): binding
            case .withReferences(let extras): extras.binding
            }
        }
        set {
            if case .withReferences(let extras) = side {
                extras.binding = newValue
            } else {
                side = newValue.map { .bound($0) } ?? .none
            }
        }
    }

    /// The config this model runs against: its own, else its fetch's; `ConfigBinding.unbound`
    /// when `use(nil)` chose the default.
    final var binding: ConfigBinding? {
        get { ownBinding ?? layoutMap?.binding }
        set { ownBinding = newValue }
    }

    /// Drops the fetch's layout map (a save made the record), keeping the config it bound.
    final func forgetLayoutMap() {
        if ownBinding == nil, let inherited = layoutMap?.binding { ownBinding = inherited }
        layoutMap = nil
    }
    /// To-one references loaded so far, by reference name (see ``Reference``); nil before the first.
    final var loadedReferences: [String: LoadedReference]? {
        if case .withReferences(let extras) = side { extras.loadedReferences } else { nil }
    }

    /// Keeps `loaded` as the reference `name`'s.
    final func keep(_ loaded: LoadedReference, as name: String) {
        let extras: ModelExtras
        if case .withReferences(let kept) = side {
            extras = kept
        } else {
            extras = ModelExtras(binding: ownBinding)
            side = .withReferences(extras)
        }
        extras.loadedReferences[name] = loaded
    }

    /// The row as a ``Record``, once made (`storage` makes it on first need).
    @inlinable final var recordIfMade: Record? {
        if case .record(let record) = fetched { record } else { nil }
    }

    /// The fetched row, while the model reads it in place.
    @usableFromInline final var fetchedRow: RowValues? {
        if case .row(let row) = fetched { row } else { nil }
    }

    /// Whether a fetch stored every declared column's value in its `@Column` wrapper
    /// (`LayoutMap.read`, `LayoutMap.store`): a property read is then a load from the model. It stops, with the
    /// wrappers' initial values given back, as soon as the model makes its record (a write, or
    /// anything that asks for the record), which is read from then on.
    @inlinable final var valuesInWrappers: Bool {
        switch fetched {
        case .inWrappers, .written, .saved, .savedInTransaction: true
        case .none, .record, .row: false
        }
    }

    /// Whether a `@Column` read returns its wrapper's value: the values are in the wrappers and
    /// the built-in conversions still apply to the fetch's registry (a converter registered there
    /// after the fetch is asked by the general read, through the record made from the wrappers).
    /// (A new model's written values have no map: the registry of a new model's record, the
    /// global one, decides.)
    @inlinable final var readsWrappers: Bool {
        valuesInWrappers && (!Converters.anyReplacesFastPathType.load(ordering: .relaxed)
            || (layoutMap.map { $0.fastPathAllowed } ?? Model.newRecordsConvertBuiltIn))
    }

    /// Whether the built-in conversions apply to the record of a new model (whose registry is the
    /// global one): what lets a new model keep its writes in its wrappers (`keepsInWrapper`).
    @usableFromInline
    static var newRecordsConvertBuiltIn: Bool {
        !Converters.anyReplacesFastPathType.load(ordering: .relaxed) || Converters.shared.fastPathEnabled
    }

    /// A new, empty model, not yet in the database (`id` is nil until it is saved). A dao runs
    /// it too, on an empty model, before giving the model its row: look at loaded values in
    /// `didLoad()`, not here (a column set here is dropped for the row). A SQLite fetch runs it
    /// as it steps the rows, holding its connection (a query here runs nested on it; keep writes
    /// out): a row refused later drops the models whose inits have run.
    /// ```swift
    /// let s = Student(); s.name = "张三"; s.age = 20
    /// try s.save()
    /// ```
    public required init() {}

    /// The row: the same lazily converting storage a ``Record`` is (made on first use).
    @usableFromInline final var storage: Record {
        get { recordIfMade ?? makeRecord() }
        set {
            if valuesInWrappers { leaveWrappers() }
            fetched = .record(newValue)
        }
    }

    /// The model stops reading its values from its wrappers (see `valuesInWrappers`).
    @usableFromInline @inline(never)
    final func leaveWrappers() {
        switch fetched {
        case .written(let written), .saved(let written, _):
            // A new model's writes are dropped with the values they replace (the model takes a record).
            fetched = .none
            restoreWrappers(written: written)
        case .savedInTransaction(let saves, let number):
            fetched = .none
            restoreWrappers(written: saves.save(number).written)
        default:
            fetched = .none
            layoutMap?.restoreWrappers(of: self)
        }
    }

    /// Makes the record from the wrappers (which get their initial values back).
    @usableFromInline @inline(never)
    final func leaveWrappersForGeneralRead() {
        if recordIfMade == nil { _ = makeRecord() }
    }

    /// The record over the fetched row (sharing its values), or a new model's empty one.
    @usableFromInline @inline(never)
    final func makeRecord() -> Record {
        let made: Record
        switch fetched {
        case .written(let written): return makeRecord(fromWrites: written, savedAs: nil)
        case .saved(let written, let key): return makeRecord(fromWrites: written, savedAs: key)
        case .savedInTransaction(let saves, let number):
            // Rolled back: the model is new again. Else the saves keep the record for a rollback to reach.
            let save = saves.save(number)
            let columns = knownSchema?.columns ?? []
            let names = columns.indices.filter { save.written & (1 << UInt64($0)) != 0 }.map { columns[$0].name }
            return saves.record(number, keyColumn: "id", names: names) { rolledBack in
                makeRecord(fromWrites: save.written, savedAs: rolledBack ? nil : save.key)
            }
        default: break
        }
        if case .inWrappers(let key) = fetched {
            // Guaranteed by the library: the fetch that filled the wrappers set the map, and a
            // save clears it only after the record is made.
            guard let map = layoutMap else { preconditionFailure("a model reading its wrappers has no layout map") }
            made = Record(layout: map.layout, values: map.row(ofWrappers: self, key: key))
            leaveWrappers()
        } else if let row = fetchedRow {
            // Guaranteed by the library: the dao sets the row and its map together, and only
            // clears the map after the record is made (a save).
            guard let map = layoutMap else { preconditionFailure("a fetched model's row has no layout map") }
            made = Record(layout: map.layout, values: row)
        } else {
            // A new model with the implicit key starts with an empty `id`, so that saving it
            // fills the column in place rather than growing the row.
            // Room for the declared columns when the schema is at hand: writing them all grows
            // the values no more (one allocation per new model, not two). Up to 64: a new model
            // of a wide table that writes a few columns does not hold room for all of them.
            let room = Swift.min((knownSchema?.columns.count ?? 0) + 1, 64)
            made = type(of: self).primaryKey == "id"
                ? Record(writing: RowLayout.idOnly, values: RowValues(storage: RowStorage.array(CollectionOfOne(.null), capacity: room), start: 0, count: 1))
                : Record()
        }
        fetched = .record(made)
        return made
    }

    /// The record of a new model whose writes are in its wrappers (`keepsInWrapper`): the record
    /// a new model makes, each write moved to it in the order of the slots (the order they were
    /// made in), and, for a model saved from its wrappers, its key written back and its flags
    /// cleared, as that save would have left a record.
    private func makeRecord(fromWrites written: UInt64, savedAs key: Int64?) -> Record {
        // Guaranteed by the library: a model keeps writes in its wrappers only when its schema has
        // the table, and a schema's table, once published, never goes.
        guard let schema = knownSchema, let wrappers = schema.newModelWrappers else {
            preconditionFailure("a model keeping its writes in its wrappers has no table of them")
        }
        fetched = .none
        let made = makeRecord()
        // Unsafe, fenced: each offset is that column's wrapper in every instance of the class
        // (see `WrapperInsert.value`).
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        for slot in wrappers.offsets.indices where written & (1 << UInt64(slot)) != 0 {
            wrappers.slots[slot].moveWrite(in: base + wrappers.offsets[slot], to: schema.columns[slot], of: self)
        }
        if let key { _ = made.finishWrite(key: "id", generated: .integer(key)) }
        return made
    }

    /// Writes `value`, which the wrapper of `column` kept (`keepsInWrapper`), to the record: encoded
    /// by the built-in rules, as a write to the record would have been when it was made (the
    /// wrapper took it only then), whatever converter was registered since.
    final func moveWrite<Value>(_ column: ColumnInfo, _ value: Value) {
        if let encoded = Record.fastEncode(value) {
            storage.set(column.name, encoded)
        } else {
            writeColumn(column, value)   // not reached: the wrappers hold no NaN
        }
    }

    /// Gives the wrappers of the columns `written` their initial values back (the writes are dropped).
    private func restoreWrappers(written: UInt64) {
        guard let wrappers = knownSchema?.newModelWrappers else { return }
        // Unsafe, fenced: as in `makeRecord(fromWrites:savedAs:)`.
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
        for slot in wrappers.offsets.indices where written & (1 << UInt64(slot)) != 0 {
            wrappers.slots[slot].restore(in: base + wrappers.offsets[slot])
        }
    }

    /// Whether the write of `value` to the column whose wrapper lies at `offset` is kept in the
    /// wrapper (the caller stores it there): the model is new and has made no record, its
    /// class's columns are all numeric (`ModelSchema.newModelWrappers`), no converter replaces a
    /// built-in conversion, and the write is of a column written before or of a later slot than
    /// every one written (the record made from the wrappers lists columns in the order written).
    /// A save then binds the values from the wrappers: no record, no values object.
    @inlinable @inline(__always)
    final func keepsInWrapper<Value>(offset: Int, _ value: Value) -> Bool {
        let written: UInt64
        switch fetched {
        case .none: written = 0
        case .written(let bits): written = bits
        case .record, .row, .inWrappers, .saved, .savedInTransaction: return false
        }
        // NaN has no stored value: the record keeps it with the error the save throws.
        if let number = value as? Double, number.isNaN { return false }
        return noteWrapperWrite(offset: offset, written: written)
    }

    /// `keepsInWrapper`'s checks of the class and the column; notes the column written.
    @usableFromInline
    final func noteWrapperWrite(offset: Int, written: UInt64) -> Bool {
        guard Model.newRecordsConvertBuiltIn, let schema = knownSchema,
              let wrappers = schema.newModelWrappers, let slot = schema.slot(offset: offset), slot >= 0,
              slot < wrappers.offsets.count, wrappers.offsets[slot] == offset else { return false }
        let bit: UInt64 = 1 << UInt64(slot)
        if written & bit == 0 {
            // Unsafe, fenced: as in `makeRecord(fromWrites:savedAs:)`. A wrapper an init gave a
            // value of its own keeps it: the write goes to the record.
            let wrapper = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque()) + offset
            guard written >> UInt64(slot) == 0, wrappers.slots[slot].holdsInitialValue(in: wrapper) else { return false }
        }
        fetched = .written(written | bit)
        return true
    }

    /// A model from a JSON object; every column it holds counts as modified.
    /// ```swift
    /// let s = try Student(json: #"{"name": "张三", "age": 14}"#)
    /// ```
    public convenience init(json: String) throws {
        self.init()
        storage = try Record(json: json)
        needsValidation = true
    }

    /// A model over `record` (shared, not copied): how a model crosses tasks, as its record.
    /// It cannot throw, so a stored value that does not convert to its property's type is not
    /// refused here as a dao load refuses it: reading that property gives its default (or nil)
    /// and logs the typed-read warning (`Options.strictReads` stops the process instead).
    /// ```swift
    /// let record = student.record                  // Sendable: hand it to another task
    /// let again = Student(record: record)          // and rebuild the model there
    /// ```
    public convenience init(record: Record) {
        self.init()
        storage = record
        needsValidation = true
    }

    // MARK: Declarations to override

    /// The table; the class name by default.
    /// ```swift
    /// override class var tableName: String { "student" }
    /// ```
    open class var tableName: String { String(describing: self) }

    /// The schema version; when it rises, `migrate(from:to:)` runs at the next start. Default 1.
    /// ```swift
    /// override class var version: Int { 2 }
    /// ```
    open class var version: Int { 1 }

    /// The primary key column(s): `"id"` (the default `INTEGER PRIMARY KEY AUTOINCREMENT`, which
    /// needs no declaration), a declared column such as `"code"`, or a composite key `"a, b"`.
    /// ```swift
    /// override class var primaryKey: String { "student_id, course_id" }
    /// ```
    open class var primaryKey: String { "id" }

    /// Extra SQL after a column's type in CREATE/ALTER TABLE: `"DEFAULT 10"`, `"UNIQUE"`, `"CHECK (age >= 0)"`.
    /// ```swift
    /// override class func constraint(for column: String) -> String? { column == "age" ? "DEFAULT 10" : nil }
    /// ```
    open class func constraint(for column: String) -> String? { nil }

    /// Statements run at start when the version rose (`old` is 0 when the table was just created),
    /// in the same transaction as the rest of the schema work.
    /// ```swift
    /// override class func migrate(from old: Int, to new: Int) -> [Sql] {
    ///     old < 2 ? [Sql("update student set age = 10 where age is null")] : []
    /// }
    /// ```
    open class func migrate(from old: Int, to new: Int) -> [Sql] { [] }

    /// Indexes and unique keys, created and dropped at start to match this list.
    /// ```swift
    /// override class var indexes: [Index] { [Index("name"), Index("email", unique: true)] }
    /// ```
    open class var indexes: [Index] { [] }

    /// Columns to rename at start, old name to new name (data kept).
    /// ```swift
    /// override class var renamedColumns: [String: String] { ["nick": "nickname"] }
    /// ```
    open class var renamedColumns: [String: String] { [:] }

    /// Columns to drop at start (the rest of the data kept).
    /// ```swift
    /// override class var droppedColumns: [String] { ["legacy_score"] }
    /// ```
    open class var droppedColumns: [String] { [] }

    /// Columns indexed for full-text search (FTS5); `dao.search(text)` queries them.
    /// ```swift
    /// override class var searchColumns: [String] { ["title", "body"] }
    /// ```
    open class var searchColumns: [String] { [] }

    // MARK: Hooks

    /// Called before an INSERT or UPDATE; throwing stops it with nothing written.
    /// ```swift
    /// override func willSave() throws { if name == nil { throw ValidationError.missingName } }
    /// ```
    open func willSave() throws {}
    /// Called after a successful INSERT or UPDATE.
    /// ```swift
    /// override func didSave() { print("saved student", id as Any) }
    /// ```
    open func didSave() {}
    /// Called after the dao built this model from a row: the first place its values can be read.
    /// ```swift
    /// override func didLoad() { name = name?.trimmingCharacters(in: .whitespaces) }
    /// ```
    open func didLoad() {}
    /// Called after a successful DELETE.
    /// ```swift
    /// override func didDelete() { print("deleted student", id as Any) }
    /// ```
    open func didDelete() {}

    // MARK: Values

    /// The `id` column (nil before the first save, or when the model has another key).
    /// ```swift
    /// let s = Student(); try s.save(); print(s.id!)
    /// ```
    public final var id: Int? {
        get {
            // A fetched model reads its key in place (listing ids makes no records).
            if case .inWrappers(let key) = fetched, let map = layoutMap, map.keyPosition >= 0, map.fastPathAllowed { return Int(key) }
            // A new model keeping its writes in its wrappers: none yet, or the one its save got.
            if case .written = fetched { return nil }
            if case .saved(_, let key) = fetched, Model.newRecordsConvertBuiltIn { return Int(key) }
            if case .savedInTransaction(let saves, let number) = fetched, Model.newRecordsConvertBuiltIn {
                let save = saves.save(number)
                // Its transaction over and the save kept: for good (later reads take no lock).
                if save.settled, !save.rolledBack { fetched = .saved(written: save.written, key: save.key) }
                return save.rolledBack ? nil : Int(save.key)
            }
            if let row = fetchedRow, let map = layoutMap, map.fastPathAllowed, let position = map.layout.position(of: "id"),
               case .value(let id) = Record.fastDecode(value: row[position], as: Int.self) {
                return id
            }
            return storage["id"]
        }
        set { storage.set("id", newValue) }
    }

    /// Any column by name, declared or not (a join's `t_name`): the current value; assigning
    /// marks it modified. A value of the wrong type for a declared column is refused at save.
    /// ```swift
    /// let teacher = student["t_name"]        // from "select s.*, t.name t_name from …"
    /// student["nickname"] = "Jack"
    /// ```
    public final subscript(column: String) -> Any? {
        get { storage[column] }
        set {
            storage.set(column, newValue)
            needsValidation = true
        }
    }

    /// A typed read of any column, declared or not: nil for NULL, a missing column or a value that does not convert.
    /// ```swift
    /// let teacherName: String? = student["t_name"]
    /// ```
    public final subscript<T>(column: String) -> T? {
        storage[column]
    }

    /// A throwing typed read: a `ConversionError` says the column, the stored type and the target type.
    /// ```swift
    /// let born = try student.get("born", as: Date.self)
    /// ```
    public final func get<T>(_ column: String, as type: T.Type = T.self) throws -> T {
        try storage.get(column, as: T.self)
    }

    /// The underlying record (shared, not copied). `Record` is `Sendable`.
    /// ```swift
    /// let record = student.record            // may be sent to another task
    /// ```
    public final var record: Record { storage }

    /// The columns this model holds, in row order.
    /// ```swift
    /// student.columnNames   // ["id", "name", "age", "born"]
    /// ```
    public final var columnNames: [String] { storage.columnNames }

    /// Columns written since the model was loaded or last saved.
    /// ```swift
    /// student.age = 21; student.modifiedColumns   // ["age"]
    /// ```
    public final var modifiedColumns: [String] { storage.modifiedColumns }

    /// The columns as a dictionary of column names to current values (nil for NULL).
    /// ```swift
    /// let values = student.toDictionary()     // ["id": 15, "name": "张三", …]
    /// ```
    public final func toDictionary() -> [String: Any?] { storage.toDictionary() }

    /// A JSON object of the columns (dates ISO 8601, data base64).
    /// ```swift
    /// let json = try student.toJSON()         // {"id":15,"name":"张三",…}
    /// ```
    public final func toJSON() throws -> String { try storage.toJSON() }

    /// Runs this instance's later operations against config `configName` (nil: the default).
    /// ```swift
    /// try s.use("backup").save()
    /// ```
    @discardableResult
    public final func use(_ configName: String?) -> Self {
        binding = configName.flatMap { $0.isEmpty ? nil : ConfigBinding.named($0) } ?? .unbound
        return self
    }

    /// The config this instance is bound to by `use(_:)` or by the dao that found it.
    /// ```swift
    /// let s = try Student.dao.use("backup").findById(1); s?.configName   // "backup"
    /// ```
    public final var configName: String? { binding?.name }

    /// The class name and the columns with their values, for logs and debugging.
    /// ```swift
    /// print(student)   // Student{id: 15, name: '张三', age: 20}
    /// ```
    public var description: String { "\(type(of: self))\(storage.description)" }

    /// The schema of this model's class when it was built already: a fetched model's is its
    /// map's. Never builds it (nil in the first model's own `init()`, which building runs).
    /// Not kept in the model: `ModelSchema.existing` answers from the schema asked for last
    /// without a lock, and each field of a model is bytes in every instance.
    @usableFromInline
    final var knownSchema: ModelSchema? { layoutMap?.schema ?? ModelSchema.existing(type(of: self)) }

    final var schema: ModelSchema {
        knownSchema ?? ModelSchema.of(type(of: self))
    }
}

extension Model: Equatable {
    /// Models are equal when they are of the same class and hold equal rows.
    /// ```swift
    /// Student(record: record) == Student(record: record)   // true
    /// ```
    public static func == (lhs: Model, rhs: Model) -> Bool {
        lhs === rhs || (type(of: lhs) == type(of: rhs) && lhs.storage == rhs.storage)
    }
}

extension Model {
    /// An index or unique key on one or more declared columns.
    /// ```swift
    /// override class var indexes: [Index] { [Index("name"), Index("email", unique: true)] }
    /// ```
    public struct Index: Sendable, Hashable {
        /// The indexed columns, in order.
        /// ```swift
        /// Index("class_id", "name").columns   // ["class_id", "name"]
        /// ```
        public let columns: [String]
        /// True for a unique key.
        /// ```swift
        /// Index("email", unique: true).unique   // true
        /// ```
        public let unique: Bool

        /// An index on `columns` (in order), or a unique key when `unique` is true.
        /// ```swift
        /// Index("class_id", "name"); Index("email", unique: true)
        /// ```
        public init(_ columns: String..., unique: Bool = false) {
            self.columns = columns
            self.unique = unique
        }

        /// The name DicRecord gives it; indexes with this prefix are the ones it manages.
        func name(table: String) -> String {
            "\(Self.prefix(table: table))\(unique ? "unique_" : "")\(columns.joined(separator: "_"))"
        }

        static func prefix(table: String) -> String { "dicrecord_\(table)_" }
    }
}

/// Gives every model class its typed dao: `Student.dao` is a `Dao<Student>`.
/// ```swift
/// let page = try Student.dao.paginate(1, 10, "select *", "from student")
/// ```
public protocol ModelType: Model {}

extension Model: ModelType {}

extension ModelType {
    /// The finders of this model class on its default config; `dao.use("backup")` binds another.
    /// ```swift
    /// let student = try Student.dao.findById(15)
    /// ```
    public static var dao: Dao<Self> { Dao(configName: nil) }

    /// Reads the declared column whose wrapper lies at `offset` (what `@Column` properties call);
    /// `.unknownColumn` when this class has not met that property yet (`learnColumn`).
    @inlinable
    func readColumn<Value>(offset: Int, initialValue: Value) -> ColumnRead<Value> {
        // A model the dao fetched, still reading its row in place: the fetch's layout map gives
        // the position and the common types decode inline, with no record and no lock. (The
        // converters are asked first: with no call between loading the row and taking its
        // value, neither is retained. A registry replacing a built-in conversion reads generally.)
        let read: MapRead?
        if !Converters.anyReplacesFastPathType.load(ordering: .relaxed), let inPlace = fetchedRead(offset: offset, as: Value.self) {
            switch inPlace {
            case .decoded(let value):
                return .value(value ?? initialValue)
            case .read(let mapRead):
                read = mapRead
            }
        } else if let map = layoutMap, let storage = recordIfMade, storage.fastPathAllowed {
            // A fetched model whose record was made and nobody wrote.
            read = map.storedValue(offset: offset, in: storage)
        } else {
            read = nil
        }
        switch read {
        case .value(let stored)?:
            if case .value(let value) = Record.fastColumnDecode(stored, as: Value.self) {
                return .value(value ?? initialValue)
            }
        case .absent?:
            return .value(initialValue)
        case .miss?, nil:
            break
        }
        return readColumnGenerally(offset: offset, initialValue: initialValue)
    }

    /// Where `wrapper` (a `@Column` wrapper of `model`) lies in the model object, in bytes from
    /// its start: the same for every instance of the class, and for no other property of it.
    /// (Only the distance is kept; the pointer is never read through here.)
    @inlinable @inline(__always)
    static func columnOffset<Wrapper>(_ wrapper: UnsafeMutablePointer<Wrapper>, in model: AnyObject) -> Int {
        UnsafeRawPointer(Unmanaged.passUnretained(model).toOpaque()).distance(to: UnsafeRawPointer(wrapper))
    }

    /// Finds which column the wrapper at `offset` is, and keeps the answer for the class: every
    /// later access finds it by the offset. A wrapper not found is said once (a warning).
    @usableFromInline
    func learnColumn(offset: Int) {
        guard let field = FieldResolver.learn(offset: offset, on: self), case .column(let info) = field.description else {
            FieldResolver.reportUnfound(offset: offset, in: type(of: self))
            return
        }
        if let schema = knownSchema, schema.slot(offset: offset) == nil { schema.remember(offset: offset, info) }
    }

    @usableFromInline
    func readColumnGenerally<Value>(offset: Int, initialValue: Value) -> ColumnRead<Value> {
        guard let column = columnInfo(offset: offset) else { return .unknownColumn }
        if !column.isJSON, fastPathAllowed {
            guard let stored = storedValue(of: column) else { return .value(initialValue) }
            if case .value(let value) = Record.fastColumnDecode(stored, as: Value.self) {
                return .value(value ?? initialValue)
            }
        }
        return .value(readColumnSlowly(column, as: Value.self) ?? initialValue)
    }

    /// Writes the declared column whose wrapper lies at `offset` (what `@Column` properties
    /// call); false, writing nothing, when this class has not met that property yet (`learnColumn`).
    @inlinable @discardableResult
    func writeColumn<Value>(offset: Int, _ value: Value) -> Bool {
        guard let column = columnInfo(offset: offset) else { return false }
        writeColumn(column, value)
        return true
    }

    /// The column whose wrapper lies at `offset`, when this class has met that property: its
    /// slot from the schema's table (a probe), where the resolver's table hashes the class and
    /// offset. A new model learns its schema here if one was built, without building it (this
    /// may run inside the model's own `init()`). Not for a column the schema stores as JSON:
    /// the resolver's description, made later, may see a converter registered since, and every
    /// write must encode as the first one did.
    @usableFromInline
    func columnInfo(offset: Int) -> ColumnInfo? {
        if let schema = knownSchema, let column = schema.plainColumn(offset: offset) {
            return column
        }
        guard let field = FieldResolver.field(offset: offset, of: self), case .column(let info) = field.description else { return nil }
        if let schema = knownSchema, schema.slot(offset: offset) == nil { schema.remember(offset: offset, info) }
        return info
    }
}

extension Model {
    /// The stored value of the column property whose wrapper lies at `offset` in the fetched row, when the model still
    /// reads it in place; nil otherwise.
    /// The row's storage and the map are used without being retained (4 atomic operations, a
    /// fifth of a read): this model holds both for the whole call, and a model is used by one
    /// thread at a time, so nothing can release them before the value is copied out.
    /// An INTEGER or REAL of a fetch's block is decoded straight from its tag and payload (the
    /// same `BuiltInRules`, on a value that holds no object); any other value is handed back.
    @inlinable @inline(__always)
    final func fetchedRead<Value>(offset: Int, as type: Value.Type) -> FetchedRead<Value>? {
        // The row's fields are read one by one: a copy of the whole `RowValues` would retain its storage.
        guard let map = layoutMap.map(Unmanaged.passUnretained), case .row(let row) = fetched else { return nil }
        let rowStorage = Unmanaged.passUnretained(row.storage)
        let start = row.start, length = row.length
        return map._withUnsafeGuaranteedRef { map in
            guard let slot = map.schema.slot(offset: offset), slot >= 0 else { return .read(.miss) }
            let position = map.positions[slot]
            guard position >= 0 else { return .read(.absent) }
            return rowStorage._withUnsafeGuaranteedRef { storage in
                precondition(position < Int(length), "column index out of range")
                let index = Int(start) &+ position
                if !storage.isArray {
                    let scalar: DatabaseValue?
                    switch storage.tags[index] {
                    case .integer: scalar = .integer(Int64(bitPattern: storage.payload(at: index)))
                    case .real: scalar = .real(Double(bitPattern: storage.payload(at: index)))
                    case .null, .object: scalar = nil
                    }
                    if let scalar, case .value(let value) = Record.fastColumnDecode(scalar, as: Value.self) {
                        return .decoded(value)
                    }
                }
                return .read(.value(storage.value(at: index)))
            }
        }
    }

    /// Whether the built-in conversions apply to the row (asked without making its record).
    @usableFromInline
    final var fastPathAllowed: Bool {
        if case .row = fetched, let map = layoutMap { return map.fastPathAllowed }
        return storage.fastPathAllowed
    }

    /// The stored value of a declared column: through the fetch's layout map while the record is
    /// unwritten, else by name. Nil when the row has no such column.
    @usableFromInline
    final func storedValue(of column: ColumnInfo) -> DatabaseValue? {
        if let row = fetchedRow, let map = layoutMap {
            let position = map.positions[column.slot]
            return position >= 0 ? row[position] : nil
        }
        let record = storage
        if !record.isMutated, let map = layoutMap, map.layout === record.baseLayout {
            let position = map.positions[column.slot]
            return position >= 0 ? record.baseValues[position] : nil
        }
        return record.storedValueForFastRead(column.name)?.value
    }

    @usableFromInline
    final func readColumnSlowly<Value>(_ column: ColumnInfo, as type: Value.Type) -> Value? {
        if let json = column.json {
            // (Unwrapped first: nil cast to an Optional `Value` would succeed.)
            if let decoded = storage.decoded(column.name, using: { try json.decode($0) }), let value = decoded as? Value { return value }
            // Not this type's JSON: said as a typed read that misses says it (NULL, or a column
            // the row lacks, reads the initial value quietly).
            if let stored = storage.storedValue(column.name), stored != .null {
                do {
                    _ = try json.decode(stored)
                    storage.reportMiss(stored, column: column.name, target: Value.self,
                                       error: ConversionError.cannotDecode(stored, to: Value.self, "the decoded value is not a \(Value.self)"))
                } catch {
                    storage.reportMiss(stored, column: column.name, target: Value.self, error: error)
                }
            }
            return nil
        }
        // A column the row lacks (loaded with `loadColumns`) reads the initial value quietly;
        // a stored value that does not convert is reported as a typed read's miss.
        guard storage.storedValue(column.name) != nil else { return nil }
        return storage.readReportingMiss(column.name, as: Value.self)
    }

    @usableFromInline
    final func writeColumn<Value>(_ column: ColumnInfo, _ value: Value) {
        // The flag first: taking `json` out copies an existential, a tenth of a write.
        guard column.isJSON, let json = column.json else {
            // The record taken once: each `storage` read retains and releases it.
            let record = storage
            if record.fastPathAllowed, let fast = Record.fastEncode(value) {
                record.set(column.name, fast)
            } else {
                record.set(column.name, value)
            }
            return
        }
        let unwrapped = (value as? any OptionalProtocol).map { $0.unwrapped } ?? value
        guard let unwrapped else {
            storage.set(column.name, nil)
            return
        }
        do {
            storage.set(column.name, encoded: try json.encode(unwrapped), swiftValue: unwrapped)
        } catch {
            storage.set(column.name, failedToEncode: unwrapped, error: error)
        }
    }
}

/// Builds the models a dao fetched.
enum ModelFactory {
    /// A model over `record`, shared.
    static func make<M: Model>(_ type: M.Type, record: Record) -> M {
        let model = M()
        // An init that set a column made a record of its own: the fetched row is what the model holds.
        model.storage = record
        return model
    }

    /// A model reading `row` (laid out as `map.layout`) in place, with no record until one is needed.
    /// (The row is taken, not copied: the caller's copy is the model's, one retain fewer.)
    static func make<M: Model>(_ type: M.Type, row: consuming RowValues, map: LayoutMap) -> M {
        let model = M()
        // As above: whatever an init wrote is dropped for the fetched row.
        if model.valuesInWrappers { model.leaveWrappers() }
        model.fetched = .row(consume row)
        model.layoutMap = map
        return model
    }

    /// A model holding the current row of a fetch being stepped in its wrappers
    /// (`LayoutMap.read`, `LayoutMap.store`), or, when they cannot hold it, reading its row as above. Throws when
    /// that row holds a value a declared column refuses (`ModelSchema.checkStoredValues`).
    /// The row is read and checked before the model is made: a row that fails the load check
    /// runs no `init()` (the rows before it have run theirs).
    static func make<M: Model>(_ type: M.Type, row: SteppedRow, map: LayoutMap) throws -> M {
        // Unsafe, fenced: the buffer is uninitialized stack memory of plain values (a tag and 64
        // bits each, nothing to release); `read` writes every element it reports on, and the
        // buffer is read (by `store`) only when `read` said it filled it
        // (`ModelWrapperLoadTests.aRowTheWrappersCannotHoldIsReadAsARow` fills it partly).
        try withUnsafeTemporaryAllocation(of: WrapperNumber.self, capacity: map.wrapperLoadCount) { numbers in
            var key: Int64 = 0
            let fits = map.read(row, into: numbers, key: &key)
            var values: RowValues?
            if !fits {
                let read = row.values()
                try map.schema.checkStoredValues(of: Record(layout: map.layout, values: read), map: map)
                values = read
            }
            let model = M()
            // Whatever an init wrote is dropped for the fetched row (its wrappers first).
            if model.valuesInWrappers { model.leaveWrappers() }
            model.layoutMap = map
            if fits, map.store(UnsafeBufferPointer(numbers), in: model) {
                model.fetched = .inWrappers(key: key)
            } else {
                // (A row that fits holds only exact values: the load check has nothing to refuse.)
                model.fetched = .row(values ?? row.values())
            }
            return model
        }
    }
}

/// Where a model's values are: its record, or what a fetch left before the record is made. One
/// field for all: a model is bytes in every instance (17 bytes, the flags after it).
@usableFromInline
enum FetchedValues {
    /// A new model that has not made its record yet.
    case none
    /// The model's record (`Model.recordIfMade`).
    case record(Record)
    /// The fetched row, read in place (`Model.fetchedRow`).
    case row(RowValues)
    /// The declared columns' values are in the wrappers (`Model.valuesInWrappers`), with the
    /// implicit key (meaningful when the map has one: `LayoutMap.keyPosition`).
    case inWrappers(key: Int64)
    /// A new model that has made no record: the columns of the bits set (by slot) were written,
    /// and their values are in their wrappers (`Model.keepsInWrapper`).
    case written(UInt64)
    /// A model saved from its wrappers (`written`), with the key the database gave it: its record,
    /// once made, holds those columns and the key, none modified.
    case saved(written: UInt64, key: Int64)
    /// `saved`, inside a transaction that may still roll it back: save `number` of the
    /// connection's `RecordlessSaves`, which hold its columns and key.
    case savedInTransaction(RecordlessSaves, number: Int)
}

/// The name of the config a model is bound to (`Model.use`, or the dao that found it).
final class ConfigBinding: Sendable {
    /// Nil: the default config, chosen (`unbound`).
    let name: String?

    init(_ name: String?) {
        self.name = name
    }

    /// The default config, chosen by `use(nil)` (over a config the fetch bound).
    static let unbound = ConfigBinding(nil)

    /// The binding of `name`: the one made last when it names the same config (a loop that
    /// binds each new model, `Model().use("backup")`, makes one).
    static func named(_ name: String) -> ConfigBinding {
        last.withLock { last in
            if let last, last.name == name { return last }
            let made = ConfigBinding(name)
            last = made
            return made
        }
    }
    private static let last = Guarded<ConfigBinding?>(nil)
}

/// A model's own config binding and loaded references, in one word: most models have neither, a
/// model bound with `use(_:)` shares its binding object, and only a model that loaded a
/// reference has an object of its own (`ModelExtras`).
enum ModelSide {
    case none
    case bound(ConfigBinding)
    case withReferences(ModelExtras)
}

/// What a model that loaded a reference keeps: its binding, and the references by name. Used
/// by its model alone (a model is used by one thread at a time).
final class ModelExtras {
    var binding: ConfigBinding?
    var loadedReferences: [String: LoadedReference] = [:]

    init(binding: ConfigBinding?) {
        self.binding = binding
    }
}
