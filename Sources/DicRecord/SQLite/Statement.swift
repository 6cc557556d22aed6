import CSQLite
import Foundation

/// SQLite's "let SQLite copy the bytes" destructor.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement. Owned by one connection and used by one caller at a time
/// (`inUse` guards the cached ones against reentrant use).
final class Statement {
    let handle: OpaquePointer
    let sql: String
    let parameterCount: Int32
    var inUse = false
    var lastUsed: UInt64 = 0
    /// What it writes and which savepoint it begins or ends (the writer's authorizer told, see
    /// `ChangeTracker`); nil for a statement that only reads, and on readers.
    /// Boxed: a statement run again and again reads it with one retain, not a copy of each field.
    var effects: TrackedEffects?
    /// What the layer above made of this statement's result columns (the row layout its records
    /// share), with SQLite's re-prepare count when it was made: stale once SQLite re-prepares.
    private var resultShape: (shape: AnyObject, reprepares: Int32)?
    /// The stored bytes of non-UTF-8 TEXT values decoded since they were last taken, by column
    /// (see `decode`); nil when there is none. Read once per row: the runtime's exclusivity
    /// check would cost more than the read (a statement has one user at a time, see `inUse`).
    @exclusivity(unchecked) private var invalidTexts: [Int: Data]?

    init(handle: OpaquePointer, sql: String) {
        self.handle = handle
        self.sql = sql
        parameterCount = sqlite3_bind_parameter_count(handle)
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// The number of result columns. Read live: SQLite may re-prepare the statement inside
    /// `step` after a schema change, and `select *` then has other columns.
    var columnCount: Int32 { sqlite3_column_count(handle) }

    /// True when the statement cannot write (SQLite's own judgement).
    var isReadOnly: Bool { sqlite3_stmt_readonly(handle) != 0 }

    /// The names of the result columns, as SQLite gives them (`column1`… for a missing one).
    func columnNames() -> [String] {
        let count = sqlite3_column_count(handle)
        var names: [String] = []
        names.reserveCapacity(Int(count))
        for i in 0..<count {
            names.append(sqlite3_column_name(handle, i).map { String(cString: $0) } ?? "column\(i + 1)")
        }
        return names
    }

    /// The `T` the caller keeps for this statement's result columns: the one made before while
    /// SQLite has not re-prepared the statement (its columns may differ after) and `isCurrent`
    /// accepts it, otherwise a new one from `make`.
    func resultShape<T: AnyObject>(_ isCurrent: (T) -> Bool, make: () -> T) -> T {
        let reprepares = sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_REPREPARE, 0)
        // An exact type check (one metadata compare) instead of `as? T`, a dynamic cast paid on
        // every query (findById's lookups); the downcast is then to the type just compared.
        if let kept = resultShape, kept.reprepares == reprepares, type(of: kept.shape) == T.self {
            let shape = unsafeDowncast(kept.shape, to: T.self)
            if isCurrent(shape) { return shape }
        }
        let made = make()
        resultShape = (made, reprepares)
        return made
    }

    /// The storage class of a value as `find`'s compact blocks sort it.
    enum CompactKind {
        case null, integer, real, object
    }

    /// The current row's value at `index` for a compact block, in registers: its kind, the bits
    /// of an INTEGER or REAL, and for TEXT or BLOB the value to hand to `compactObject` (one
    /// `sqlite3_column_value`, then the value readers, as `value(at:)`).
    @inline(__always)
    func compactValue(at index: Int32) -> (kind: CompactKind, bits: UInt64, value: OpaquePointer?) {
        guard let value = sqlite3_column_value(handle, index) else { return (.null, 0, nil) }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return (.integer, UInt64(bitPattern: sqlite3_value_int64(value)), nil)
        case SQLITE_FLOAT: return (.real, sqlite3_value_double(value).bitPattern, nil)
        case SQLITE_NULL: return (.null, 0, nil)
        default: return (.object, 0, value)
        }
    }

    /// The TEXT or BLOB `value` (from `compactValue`) of column `index` decoded (see `decode`),
    /// with the byte count SQLite holds for it.
    @inline(__always)
    func compactObject(_ value: OpaquePointer?, at index: Int32) -> (value: DatabaseValue, bytes: Int) {
        guard let value else { return (.null, 0) }   // compactValue gives every object its value
        return (decode(value, type: sqlite3_value_type(value), column: Int(index)), Int(sqlite3_value_bytes(value)))
    }

    /// The current row's value at `index`, copied out of SQLite (text keeps embedded NULs).
    /// One `sqlite3_column_value` per value, then the `sqlite3_value_*` readers, which take no
    /// mutex and set no error state: half the library calls of `column_type` + `column_int64`.
    /// The value is read at once on the thread that holds the connection, as SQLite requires
    /// for the unprotected values `column_value` returns.
    @inline(__always)
    func value(at index: Int32) -> DatabaseValue {
        guard let value = sqlite3_column_value(handle, index) else { return .null }
        return decode(value, type: sqlite3_value_type(value), column: Int(index))
    }

    /// A column value of SQLite's storage class `type` as a `DatabaseValue`. TEXT that is not
    /// UTF-8 (written by another program) decodes with U+FFFD for the bad bytes, and its stored
    /// bytes are noted in `invalidTexts` under `column`, for the row's reader to keep.
    @inline(__always)
    func decode(_ value: OpaquePointer, type: Int32, column: Int) -> DatabaseValue {
        switch type {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            guard let text = sqlite3_value_text(value) else { return .text("") }
            let count = Int(sqlite3_value_bytes(value))
            // SQLite ends its text with a NUL. Validating as a C string costs what
            // `String(decoding:)` does (`String(validating:)` costs twice that); text with an
            // embedded NUL or bad bytes takes the slow way.
            let cString = UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)
            if strlen(cString) == count, let string = String(validatingCString: cString) { return .text(string) }
            return unusualText(UnsafeBufferPointer(start: text, count: count), column: column)
        case SQLITE_BLOB:
            // The pointer first, then the size (SQLite's advice).
            let bytes = sqlite3_value_blob(value)
            let count = Int(sqlite3_value_bytes(value))
            guard count > 0, let bytes else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: count))
        default:
            return .null
        }
    }

    /// TEXT with an embedded NUL, or that is not UTF-8: its bytes noted in `invalidTexts` when invalid.
    @inline(never)
    func unusualText(_ bytes: UnsafeBufferPointer<UInt8>, column: Int) -> DatabaseValue {
        if let string = String(validating: bytes, as: UTF8.self) { return .text(string) }
        var noted = invalidTexts ?? [:]
        noted[column] = Data(bytes)
        invalidTexts = noted
        return .text(String(decoding: bytes, as: UTF8.self))
    }

    /// Takes the bytes of the current row's non-UTF-8 TEXT values, by column (nil: none, as
    /// almost always). A reader that keeps rows calls it once per row; `reset` drops what no one took.
    @inline(__always)
    func takeInvalidTexts() -> [Int: Data]? {
        guard let taken = invalidTexts else { return nil }
        invalidTexts = nil
        return taken
    }

    /// Binds `arguments`, checking that they match the statement's placeholders exactly.
    func bind(_ arguments: Arguments, registry: Converters, configName: String) throws {
        switch arguments {
        case .values(let values):
            try checkCount(values.count, configName: configName)
            for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1), configName: configName) }
        case .stored(let stored):
            try bind(.values(stored.values), registry: registry, configName: configName)
            if !stored.rawTexts.isEmpty { try bindText(stored.rawTexts, configName: configName) }
        case .positional(let values):
            try checkCount(values.count, configName: configName)
            // In place for the common types (see `InlineArgument`); through the registry otherwise,
            // whose own fast path covers the same types when the layout check fails.
            let peek = registry.fastPathEnabled && InlineArgument.isReadable
            try values.withUnsafeBufferPointer { arguments in
                guard let base = arguments.baseAddress else { return }
                for offset in arguments.indices {
                    let index = Int32(offset + 1)
                    if peek, let value = InlineArgument.value(at: base + offset) {
                        // Integers (the most common argument) bound here, the rest by the general binder.
                        if case .integer(let v) = value {
                            let code = sqlite3_bind_int64(handle, index, v)
                            if code != SQLITE_OK { try check(code, value, at: index, configName: configName) }
                        } else {
                            try bind(value, at: index, configName: configName)
                        }
                        continue
                    }
                    guard let argument = arguments[offset] else {
                        try check(sqlite3_bind_null(handle, index), .null, at: index, configName: configName)
                        continue
                    }
                    try bind(argument, at: index, registry: registry, configName: configName)
                }
            }
        case .named(let values):
            var usedKeys = Set<String>()
            for index in Int32(1)..<(parameterCount + 1) {
                guard let cName = sqlite3_bind_parameter_name(handle, index) else {
                    throw DicRecordError(.argumentCount, "parameter \(index) is positional but named arguments were given",
                                         sql: sql, configName: configName)
                }
                let fullName = String(cString: cName)
                let bareName = String(fullName.dropFirst())
                // The full name first: with `:a` and `$a` in the SQL, ":a" and "a" are two keys.
                guard let key = values[fullName] != nil ? fullName : (values[bareName] != nil ? bareName : nil) else {
                    throw DicRecordError(.argumentCount, "no argument for parameter \(fullName)", sql: sql, configName: configName)
                }
                usedKeys.insert(key)
                try bind(values[key] ?? nil, at: index, registry: registry, configName: configName)
            }
            if usedKeys.count != values.count {
                let unused = values.keys.filter { !usedKeys.contains($0) }.sorted()
                throw DicRecordError(.argumentCount, "arguments \(unused) match no parameter of the SQL",
                                     sql: sql, configName: configName)
            }
        }
    }

    /// Binds `count` values, given by `value` for positions 0..<count.
    @inline(__always)
    func bind(count: Int, _ value: (Int) -> DatabaseValue, configName: String) throws {
        try checkCount(count, configName: configName)
        for i in 0..<count { try bind(value(i), at: Int32(i + 1), configName: configName) }
    }

    /// Binds `first` then `second` to the parameters in order.
    func bind(_ first: UnsafeBufferPointer<DatabaseValue>, _ second: UnsafeBufferPointer<DatabaseValue>,
              configName: String) throws {
        try checkCount(first.count + second.count, configName: configName)
        for i in first.indices { try bind(first[i], at: Int32(i + 1), configName: configName) }
        let offset = first.count + 1
        for i in second.indices { try bind(second[i], at: Int32(offset + i), configName: configName) }
    }

    /// Binds each of `texts` (bytes by 0-based parameter) as TEXT of exactly those bytes: a
    /// value read back from TEXT that is not UTF-8 is written back as it was stored.
    func bindText(_ texts: [Int: Data], configName: String) throws {
        for (position, bytes) in texts {
            let index = Int32(position + 1)
            let code = bytes.withUnsafeBytes { buffer in
                // A NULL pointer would bind NULL: no bytes bind an empty TEXT.
                guard let base = buffer.baseAddress, buffer.count > 0 else { return sqlite3_bind_text(handle, index, "", 0, SQLITE_TRANSIENT) }
                return sqlite3_bind_text64(handle, index, base.assumingMemoryBound(to: CChar.self), UInt64(buffer.count),
                                           SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
            }
            if code != SQLITE_OK { try check(code, nil, at: index, configName: configName) }
        }
    }

    private func checkCount(_ count: Int, configName: String) throws {
        guard count != Int(parameterCount) else { return }
        throw DicRecordError(.argumentCount,
            "the SQL has \(parameterCount) parameter\(parameterCount == 1 ? "" : "s") but \(count) argument\(count == 1 ? " was" : "s were") given",
            sql: sql, configName: configName)
    }

    private func bind(_ argument: DatabaseArgument, at index: Int32, registry: Converters, configName: String) throws {
        let value: DatabaseValue
        do {
            value = try registry.encode(argument: argument)
        } catch let error as ConversionError {
            throw DicRecordError(.unsupportedArgument, "argument \(index): \(error)", sql: sql, configName: configName)
        }
        try bind(value, at: index, configName: configName)
    }

    /// Binds one encoded value. Every bind's result is checked: SQLite refuses a TEXT or BLOB over
    /// its length limit (`SQLITE_TOOBIG`) and the parameter would silently stay NULL.
    @inline(__always)
    func bind(_ value: DatabaseValue, at index: Int32, configName: String) throws {
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, index)
        case .integer(let v):
            code = sqlite3_bind_int64(handle, index, v)
        case .real(let v):
            // SQLite binds NaN as NULL: refused, as the converters refuse it.
            code = v.isNaN ? SQLITE_MISMATCH : sqlite3_bind_double(handle, index, v)
        case .text(var s):
            code = s.withUTF8 { buffer in
                // An empty buffer may have no base address, and a NULL pointer would bind NULL.
                if let base = buffer.baseAddress, buffer.count > 0 {
                    return sqlite3_bind_text64(handle, index, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                               UInt64(buffer.count), SQLITE_TRANSIENT, UInt8(SQLITE_UTF8))
                }
                return sqlite3_bind_text(handle, index, "", 0, SQLITE_TRANSIENT)
            }
        case .blob(let data):
            if data.isEmpty {
                // bind_blob with no bytes would bind NULL: an empty blob must stay a blob.
                code = sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                code = data.withUnsafeBytes { bytes in
                    return sqlite3_bind_blob64(handle, index, bytes.baseAddress, UInt64(bytes.count), SQLITE_TRANSIENT)
                }
            }
        }
        if code != SQLITE_OK { try check(code, value, at: index, configName: configName) }
    }

    /// Turns a failed bind into an error naming the parameter and the value's size; SQLite's own
    /// message for the code is kept.
    private func check(_ code: Int32, _ value: DatabaseValue?, at index: Int32, configName: String) throws {
        guard code != SQLITE_OK else { return }
        let name = sqlite3_bind_parameter_name(handle, index).map { " (\(String(cString: $0)))" } ?? ""
        let what: String
        switch value {
        case .text(let s)?: what = "TEXT of \(s.utf8.count) bytes"
        case .blob(let d)?: what = "BLOB of \(d.count) bytes"
        case .integer?: what = "INTEGER"
        case .real?: what = "REAL"
        case .null?, nil: what = "value"
        }
        if case .real(let v)? = value, v.isNaN {
            throw DicRecordError(.unsupportedArgument, "argument \(index)\(name): REAL NaN has no SQLite representation (it would be stored as NULL); nothing was written",
                                 sql: sql, configName: configName)
        }
        let reason = code == SQLITE_TOOBIG
            ? "is larger than this connection's length limit of \(sqlite3_limit(sqlite3_db_handle(handle), SQLITE_LIMIT_LENGTH, -1)) bytes (SQLITE_LIMIT_LENGTH)"
            : "was refused by SQLite: \(String(cString: sqlite3_errstr(code)))"
        throw DicRecordError(.invalidArgument, "argument \(index)\(name): \(what) \(reason); nothing was written",
                             sql: sql, configName: configName)
    }

    /// The arguments as they would be bound, for logs and error messages (unencodable ones show as NULL).
    func describe(_ arguments: Arguments, registry: Converters) -> [DatabaseValue] {
        switch arguments {
        case .values(let values):
            return values
        case .stored(let stored):
            return stored.values
        case .positional(let values):
            return values.map { (try? registry.encode($0)) ?? .null }
        case .named(let values):
            return (0..<Int(parameterCount)).map { i in
                guard let cName = sqlite3_bind_parameter_name(handle, Int32(i + 1)) else { return .null }
                let full = String(cString: cName)
                let value = values[full] ?? values[String(full.dropFirst())] ?? nil
                return (try? registry.encode(value)) ?? .null
            }
        }
    }

    /// Ready for the next use. Bindings are not cleared: every use binds every parameter
    /// (the argument count is checked), so clearing would only cost a pass over them.
    func reset() {
        sqlite3_reset(handle)
        invalidTexts = nil
    }
}
