import Foundation

/// Raw SQL on one config (PSDb / JFinal's Db): `Db.main`, `Db.use("backup")`, and static
/// shortcuts such as `Db.find(...)` that run on main.
///
/// ```swift
/// let teachers = try Db.use("backup").find("select * from teacher where age > ?", 40)
/// let page = try Db.paginate(1, 10, "select *", "from student where name like ?", "张%")
/// try Db.tx { db in
///     try db.update("update account set balance = balance - ? where id = ?", 10, 1)
///     try db.update("update account set balance = balance + ? where id = ?", 10, 2)
///     return true
/// }
/// ```
/// Every method throws; "not found" is nil or an empty array. A call made inside `tx`,
/// `transaction`, `batch` or an `each` callback on the same config, from the same thread, joins
/// the connection that call holds: it never waits for itself.
public struct Db: Sendable {
    /// The config name this handle was made for; nil means "main, whichever it is at call time".
    /// ```swift
    /// Db.use("backup").configName   // "backup"
    /// ```
    public var configName: String? { name.isEmpty ? nil : name }
    /// `configName`, "" for nil. Not optional: the async API copies a handle a dozen times a
    /// transaction, and the compiler copies a `String?` through Optional's generic value
    /// witnesses (a merged outlined copy), a `String` with one retain.
    private let name: String
    /// Where this handle finds its context (see `Source`).
    private let source: Source
    /// Where this handle's reads run on an engine with read replicas (`primary`, `after(_:)`).
    let route: ReadRoute

    /// The registry, where the context is looked up at each call; or a context already looked up
    /// (by a model, a dao or a transaction) beside it, so that the calls skip the registry. An
    /// enum, not a `DbContext?` beside the registry: that too was copied through Optional's
    /// generic value witnesses.
    private enum Source: Sendable {
        case registry(ContextRegistry)
        case known(DbContext, ContextRegistry)

        var registry: ContextRegistry {
            switch self {
            case .registry(let registry), .known(_, let registry): registry
            }
        }
    }

    init(configName: String?, contexts: ContextRegistry) {
        self.init(name: configName ?? "", source: .registry(contexts), route: .any)
    }

    init(context: DbContext, contexts: ContextRegistry) {
        self.init(name: context.configName, source: .known(context, contexts), route: .any)
    }

    /// This handle with its context looked up once: a transaction hands it to its body, whose
    /// calls then skip the registry (the transaction holds that context's connection anyway).
    func bound(to context: DbContext) -> Db {
        Db(name: name, source: .known(context, source.registry), route: route)
    }

    /// This handle with its reads routed by `route`.
    func routed(_ route: ReadRoute) -> Db {
        Db(name: name, source: source, route: route)
    }

    private init(name: String, source: Source, route: ReadRoute) {
        self.name = name
        self.source = source
        self.route = route
    }

    /// The main config's handle: the config named "main", or else the first one started. It is
    /// resolved at each call, so it follows a restart of main.
    /// ```swift
    /// let students = try Db.main.find("select * from student")
    /// ```
    public static var main: Db { Db(configName: nil, contexts: .active) }

    /// The handle of config `configName` (nil or "" means main). An unknown name throws at
    /// first use, listing the known names.
    /// ```swift
    /// let teachers = try Db.use("backup").findAll("teacher")
    /// ```
    public static func use(_ configName: String?) -> Db {
        Db(configName: configName, contexts: .active)
    }

    /// The handle of config `configName` (nil or "" means main), looked up in the same registry as this handle.
    /// ```swift
    /// let backup = Db.main.use("backup")
    /// ```
    public func use(_ configName: String?) -> Db {
        Db(configName: configName, contexts: source.registry)
    }

    /// The context behind this handle; throws when its config is not started.
    /// ```swift
    /// let context = try Db.use("backup").context()
    /// context.showSql = true
    /// ```
    public func context() throws -> DbContext {
        switch source {
        case .known(let context, _): context
        case .registry(let registry): try registry.context(named: configName)
        }
    }

    /// The SQL words of this config's engine.
    func dialect() throws -> EngineDialect {
        try context().externalPool()?.dialect ?? .sqlite
    }

    /// Runs `body` on this config's writer, of whichever engine (schema questions, upserts).
    func onWriter<T>(_ body: (any EngineConnection) throws -> T) throws -> T {
        let context = try context()
        if let engine = try context.externalPool() { return try engine.write(body) }
        return try context.pool().write { try body($0) }
    }

    /// Runs `body` on a connection of this config fit for reading, of whichever engine.
    func onReader<T>(_ body: (any EngineConnection) throws -> T) throws -> T {
        let context = try context()
        if let engine = try context.externalPool() { return try engine.read(route, body) }
        return try context.pool().read { try body($0) }
    }

    /// Queries go to a reader unless they may write (INSERT ... RETURNING and the like). On another
    /// engine's context this throws `EngineRedirect`, which only the four read paths below call it
    /// from, and catch.
    func querying<T>(_ sql: String, _ body: (Connection) throws -> T) throws -> T {
        switch SqlText.access(sql) {
        case .read: return try context().sqlitePool().read(body)
        case .write:
            // A readonly context has no writer: let SQLite judge the statement (a PRAGMA that
            // only reads runs; a typo gets SQLite's own syntax error, not "readonly").
            let pool = try context().sqlitePool()
            guard try context().options.readonly else { return try pool.write(body) }
            return try Self.asking(pool, sql) ? try pool.read(body) : try pool.write(body)
        case .ask:
            let pool = try context().sqlitePool()
            return try Self.asking(pool, sql) ? try pool.read(body) : try pool.write(body)
        }
    }

    /// Whether SQLite says `sql` only reads, asked on a reader. The question runs nothing, so an
    /// async call trying its caller's thread still must not wait for the call that follows it.
    private static func asking(_ pool: ConnectionPool, _ sql: String) throws -> Bool {
        let leases = ThreadLeases.current
        let mustNotWait = leases.mustNotWait
        defer { leases.mustNotWait = mustNotWait }
        return try pool.read { try $0.isReadOnly(sql) }
    }

    // MARK: Implementations shared by the public overloads
    // The four read paths run the SQLite code and catch `EngineRedirect` for another engine's
    // context (`EngineCalls.swift` serves it). Asking first, or the catch without `@inline(__always)`,
    // kept them from being inlined into their callers: lookups by key were 5-10% slower.

    @inline(__always)
    func findRecords(_ sql: String, _ arguments: Arguments) throws -> [Record] {
        do {
            return try querying(sql) { connection in
                try connection.withStatement(sql, arguments) { statement in
                    guard try connection.step(statement, arguments) else { return [] }
                    // The layout is taken after the first step: SQLite re-prepares there after a schema change.
                    let layout = statement.rowLayout(connection)
                    var cancellation = ThreadLeases.current.cancellation
                    return try statement.rows(arguments: arguments, connection: connection, check: { try cancellation?.check() }) {
                        Record(layout: layout, values: $0)
                    }
                }
            }
        } catch let redirect as EngineRedirect {
            return try engineFind(redirect.context, sql, arguments, limit: nil)
        }
    }

    /// `findRecords` without the records: the rows in compact blocks and the layout they share
    /// (what a dao makes its models of).
    func findRows(_ sql: String, _ arguments: Arguments) throws -> FetchedRows {
        do {
            return try querying(sql) { connection in
                try connection.withStatement(sql, arguments) { statement in
                    guard try connection.step(statement, arguments) else { return FetchedRows(layout: nil, rows: []) }
                    let layout = statement.rowLayout(connection)
                    var cancellation = ThreadLeases.current.cancellation
                    let rows = try statement.rows(arguments: arguments, connection: connection, check: { try cancellation?.check() }) { $0 }
                    return FetchedRows(layout: layout, rows: rows)
                }
            }
        } catch let redirect as EngineRedirect {
            return try engineFindRows(redirect.context, sql, arguments, limit: nil)
        }
    }

    /// `findRows`, or, when `start` takes the result's layout (SQLite), each row handed to
    /// `make` as it is stepped, before anything holds it, and what `make` made instead of rows
    /// (how a dao fills its models' wrappers with no block of rows).
    func streamRows<Element>(_ sql: String, _ arguments: Arguments, start: (RowLayout) -> Bool,
                             make: (SteppedRow) throws -> Element) throws -> StreamedRows<Element> {
        do {
            return try querying(sql) { connection in
                try connection.withStatement(sql, arguments) { statement in
                    guard try connection.step(statement, arguments) else { return .rows(FetchedRows(layout: nil, rows: [])) }
                    let layout = statement.rowLayout(connection)
                    var cancellation = ThreadLeases.current.cancellation
                    guard start(layout) else {
                        let rows = try statement.rows(arguments: arguments, connection: connection, check: { try cancellation?.check() }) { $0 }
                        return .rows(FetchedRows(layout: layout, rows: rows))
                    }
                    var made = ContiguousArray<Element>()
                    repeat {
                        try cancellation?.check()
                        made.append(try make(SteppedRow(statement: statement)))
                    } while try connection.step(statement, arguments)
                    return .streamed(made)
                }
            }
        } catch let redirect as EngineRedirect {
            return .rows(try engineFindRows(redirect.context, sql, arguments, limit: nil))
        }
    }

    @inline(__always)
    func findFirstRecord(_ sql: String, _ arguments: Arguments) throws -> Record? {
        do {
            return try querying(sql) { connection in
                try connection.withStatement(sql, arguments) { statement in
                    guard try connection.step(statement, arguments) else { return nil }
                    return Record(layout: statement.rowLayout(connection), values: statement.rowValues())
                }
            }
        } catch let redirect as EngineRedirect {
            return try engineFind(redirect.context, sql, arguments, limit: 1).first
        }
    }

    func eachRecord(_ sql: String, _ arguments: Arguments, _ body: (Record) throws -> Bool) throws {
        do {
            try querying(sql) { connection in
                try connection.withStatement(sql, arguments) { statement in
                    guard try connection.step(statement, arguments) else { return }
                    // Taken once, after the first step: SQLite re-prepares only there.
                    let layout = statement.rowLayout(connection)
                    let columnCount = statement.columnCount
                    var record: Record?
                    let cancellation = ThreadLeases.current.cancellation
                    repeat {
                        try cancellation?.checkNow()
                        // Constant memory and no allocation per row: the record is refilled in place
                        // unless the callback kept a reference to it.
                        if record != nil, isKnownUniquelyReferenced(&record) {
                            record?.reload(layout: layout, count: Int(columnCount)) { statement.value(at: Int32($0)) }
                            if let invalidTexts = statement.takeInvalidTexts() { record?.reloaded(invalidTexts: invalidTexts) }
                        } else {
                            record = Record(layout: layout, values: statement.rowValues())
                        }
                        guard let current = record, try body(current) else { return }
                    } while try connection.step(statement, arguments)
                }
            }
        } catch let redirect as EngineRedirect {
            return try engineEach(redirect.context, sql, arguments, body)
        }
    }

    @inline(__always)
    func queryValues<T>(_ sql: String, _ arguments: Arguments, as type: T.Type, limit: Int?) throws -> [T?] {
        do {
            return try querying(sql) { connection in
                try connection.withStatement(sql, arguments) { statement in
                    func checkSingleColumn() throws {
                        guard statement.columnCount == 1 else {
                            throw DicRecordError(.multipleColumns,
                                "a single-column query returned \(statement.columnCount) columns; select exactly one",
                                sql: sql, configName: connection.configName)
                        }
                    }
                    try checkSingleColumn()
                    var values: [T?] = []
                    var cancellation = ThreadLeases.current.cancellation
                    while try connection.step(statement, arguments) {
                        try cancellation?.check()
                        if values.isEmpty { try checkSingleColumn() }
                        let raw = statement.value(at: 0)
                        let invalidTexts = statement.takeInvalidTexts()
                        if case .null = raw {
                            values.append(nil)
                        } else if T.self == Data.self, let bytes = invalidTexts?[0] as? T {
                            values.append(bytes)   // TEXT that is not UTF-8, as the bytes stored
                        } else {
                            do {
                                values.append(try connection.registry.decode(raw, as: T.self))
                            } catch let error as ConversionError {
                                throw error.inColumn(statement.rowLayout(connection).names[0])
                            }
                        }
                        if let limit, values.count >= limit { break }
                    }
                    return values
                }
            }
        } catch let redirect as EngineRedirect {
            return try engineQueryValues(redirect.context, sql, arguments, as: type, limit: limit)
        }
    }

    func updateRows(_ sql: String, _ arguments: Arguments) throws -> Int {
        let context = try context()
        if context.isExternal { return try engineUpdate(context, sql, arguments) }
        return try context.pool().write { try $0.run(sql, arguments) }
    }
}
