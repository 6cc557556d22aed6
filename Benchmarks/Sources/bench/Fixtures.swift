import CSQLiteBench
import DicRecord
import Foundation

/// Sizes and places for one run of the benchmark.
struct BenchConfig {
    let quick: Bool
    /// Rows of `items` read by the fetch workloads.
    let itemRows: Int
    /// Rows of `people` read by fetch_mixed, and looked up one by one (each once) by lookup_pk.
    let peopleRows: Int
    /// Rows inserted by the insert workload.
    let insertRows: Int
    /// Rows of the paginated table.
    let pageRows: Int
    let pageSize = 20
    /// The pages read: the anchor's 1, 100, 10,000 and 49,999 of 50,000, or the same spread over --quick's table.
    let pages: [Int]
    /// A temporary folder holding every database file of the run.
    let directory: URL

    init(quick: Bool) {
        self.quick = quick
        itemRows = quick ? 2_000 : 100_000
        peopleRows = quick ? 2_000 : 100_000
        insertRows = quick ? 2_000 : 100_000
        pageRows = quick ? 50_000 : 1_000_000
        pages = quick ? [1, 100, 1_250, 2_499] : [1, 100, 10_000, 49_999]
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("dicrecord-bench-\(ProcessInfo.processInfo.processIdentifier)")
    }

    var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    func path(_ file: String) -> String {
        directory.appendingPathComponent(file).path
    }
}

struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    var description: String { "SQLite error \(code): \(message)" }
}

/// A bare `sqlite3*` for the raw C baseline and for building fixtures: no wrapper between the
/// benchmark and SQLite beyond these few helpers, none of which runs inside a timed loop.
final class RawDatabase {
    let handle: OpaquePointer

    init(path: String) throws {
        var db: OpaquePointer?
        let code = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
        guard code == SQLITE_OK, let db else {
            sqlite3_close_v2(db)
            throw SQLiteError(code: code, message: "cannot open \(path)")
        }
        handle = db
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// A prepared statement; the caller finalizes it.
    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        return statement
    }

    /// The first column of the first row as an integer.
    func queryInt(_ sql: String) throws -> Int {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW else { throw error(sqlite3_errcode(handle)) }
        return Int(sqlite3_column_int64(statement, 0))
    }

    func error(_ code: Int32) -> SQLiteError {
        SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// SQLite's "copy the bytes now" destructor.
let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Builds the database files once per run, with raw C in one transaction each.
final class Fixtures {
    let config: BenchConfig
    private var built: Set<String> = []

    init(config: BenchConfig) throws {
        self.config = config
        try FileManager.default.createDirectory(at: config.directory, withIntermediateDirectories: true)
    }

    func removeAll() {
        try? FileManager.default.removeItem(at: config.directory)
    }

    /// items(i0…i9 INTEGER): every column of row n holds n, n = 1…itemRows.
    var itemsPath: String {
        get throws { try fixture("items.sqlite", "\(config.itemRows) items") { try Self.createItems(at: $0, rows: config.itemRows) } }
    }

    /// people, peopleRows rows (fetch_mixed, lookup_pk).
    var peoplePath: String {
        get throws { try fixture("people.sqlite", "\(config.peopleRows) people") { try Self.createPeople(at: $0, rows: config.peopleRows) } }
    }

    /// people, pageRows rows (paginate).
    var pagesPath: String {
        get throws { try fixture("pages.sqlite", "\(config.pageRows) people for paginate") { try Self.createPeople(at: $0, rows: config.pageRows) } }
    }

    /// The path of fixture `file`, built by `build` the first time it is asked for.
    private func fixture(_ file: String, _ what: String, build: (String) throws -> Void) throws -> String {
        let path = config.path(file)
        if built.insert(path).inserted {
            config.log("building \(what)")
            try build(path)
        }
        return path
    }

    static let itemsSchema = "CREATE TABLE items (i0 INTEGER, i1 INTEGER, i2 INTEGER, i3 INTEGER, i4 INTEGER, i5 INTEGER, i6 INTEGER, i7 INTEGER, i8 INTEGER, i9 INTEGER)"
    static let itemsInsert = "INSERT INTO items (i0, i1, i2, i3, i4, i5, i6, i7, i8, i9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
    static let peopleSchema = "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT, born REAL, homepage TEXT, avatar BLOB, score REAL, active INTEGER)"

    static func createItems(at path: String, rows: Int) throws {
        try? FileManager.default.removeItem(atPath: path)
        let db = try RawDatabase(path: path)
        try db.execute(itemsSchema)
        try fillTenIntegers(db, insert: itemsInsert, rows: rows)
    }

    /// Runs `insert` (10 placeholders) for n = 1...rows with n bound to every column, with raw C in
    /// one transaction (the items fixture, the raw insert of `bench --scaling`).
    static func fillTenIntegers(_ db: RawDatabase, insert: String, rows: Int) throws {
        try db.execute("BEGIN")
        let statement = try db.prepare(insert)
        defer { sqlite3_finalize(statement) }
        for n in 1...rows {
            sqlite3_reset(statement)
            for column in 1...Int32(10) { sqlite3_bind_int64(statement, column, Int64(n)) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw db.error(sqlite3_errcode(db.handle)) }
        }
        try db.execute("COMMIT")
    }

    static func createPeople(at path: String, rows: Int) throws {
        try? FileManager.default.removeItem(atPath: path)
        let db = try RawDatabase(path: path)
        try db.execute(peopleSchema)
        try db.execute("BEGIN")
        let statement = try db.prepare("INSERT INTO people (id, name, born, homepage, avatar, score, active) VALUES (?, ?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        for n in 1...rows {
            let person = Person.fixture(n)
            sqlite3_reset(statement)
            sqlite3_bind_int64(statement, 1, Int64(person.id))
            sqlite3_bind_text(statement, 2, person.name, -1, SQLITE_TRANSIENT)
            sqlite3_bind_double(statement, 3, person.born.timeIntervalSince1970)
            sqlite3_bind_text(statement, 4, person.homepage.absoluteString, -1, SQLITE_TRANSIENT)
            person.avatar.withUnsafeBytes { bytes in
                _ = sqlite3_bind_blob(statement, 5, bytes.baseAddress, Int32(bytes.count), SQLITE_TRANSIENT)
            }
            sqlite3_bind_double(statement, 6, person.score)
            sqlite3_bind_int64(statement, 7, person.active ? 1 : 0)
            guard sqlite3_step(statement) == SQLITE_DONE else { throw db.error(sqlite3_errcode(db.handle)) }
        }
        try db.execute("COMMIT")
    }

    /// Starts a DicRecord context on `path`. DicRecord defaults to WAL; the benchmark asks for
    /// DELETE so that every implementation runs with SQLite's default journal (and synchronous FULL).
    static func startContext(_ configName: String, path: String) throws -> DbContext {
        var options = DbContext.Options()
        options.journalMode = .delete
        let context = try DbContext(path: path, configName: configName, options: options)
        try context.start()
        return context
    }
}

extension BenchConfig {
    func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// A fixed pseudo-random permutation of 1...count: (48271·k + 12345) mod count + 1, k = 0..<count.
/// 48271 is prime, so it is coprime with (and the map a permutation for) any count it does not divide.
func lookupOrder(count: Int) -> [Int] {
    precondition(count % 48271 != 0)
    return (0..<count).map { k in (48271 &* k &+ 12345) % count + 1 }
}
