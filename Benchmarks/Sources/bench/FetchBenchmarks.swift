import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation
import GRDB

/// fetch_positional, fetch_named, fetch_records (items: 10 INTEGER columns) and fetch_mixed
/// (people: one column of each type). Each implementation reads inside one transaction:
/// BEGIN…COMMIT for raw C, `DatabaseQueue.read` for GRDB, `Db.transaction` for DicRecord.
struct FetchBenchmarks {
    let bench: Bench
    let fixtures: Fixtures

    static let itemsSQL = "SELECT * FROM items"
    static let peopleSQL = "SELECT * FROM people"

    func run(_ selected: (String) -> Bool) throws {
        if selected("fetch_positional") || selected("fetch_named") || selected("fetch_records") {
            let path = try fixtures.itemsPath
            let raw = try RawDatabase(path: path)
            let queue = try DatabaseQueue(path: path)
            let context = try Fixtures.startContext("items", path: path)
            defer { context.stop() }
            context.register(ItemModel.self)   // adopts the existing table
            let db = Db.use("items")
            if selected("fetch_positional") { try positional(raw, queue, db) }
            if selected("fetch_named") { try named(raw, queue, db) }
            if selected("fetch_records") { try records(raw, queue, db) }
        }
        if selected("fetch_mixed") {
            let path = try fixtures.peoplePath
            let raw = try RawDatabase(path: path)
            let queue = try DatabaseQueue(path: path)
            let context = try Fixtures.startContext("people", path: path)
            defer { context.stop() }
            try mixed(raw, queue, Db.use("people"))
        }
    }

    // MARK: fetch_positional

    private func positional(_ raw: RawDatabase, _ queue: DatabaseQueue, _ db: Db) throws {
        try bench.workload("fetch_positional") { w in
            w.measure("raw") {
                try raw.transaction {
                    let statement = try raw.prepare(Self.itemsSQL)
                    defer { sqlite3_finalize(statement) }
                    var sum = 0
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        for i in 0..<Int32(10) { sum &+= Int(sqlite3_column_int64(statement, i)) }
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    return sum
                }
            }
            // A reference row: the floor under any `find` whose rows are objects (a `Record` is a
            // class): raw C copies each row into an object of its own holding the ten values
            // inline, the least one object a row can be, then reads them as `find`'s row does.
            w.measure("floor: raw C, an object per row, then reads") {
                try raw.transaction {
                    let statement = try raw.prepare(Self.itemsSQL)
                    defer { sqlite3_finalize(statement) }
                    var rows: [TenValues] = []
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        rows.append(TenValues { sqlite3_column_int64(statement, Int32($0)) })
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    var sum = 0
                    for row in rows {
                        for i in 0..<10 { sum &+= Int(row[i]) }
                    }
                    return sum
                }
            }
            w.measure("grdb Row.fetchCursor, row[i] as Int") {
                try queue.read { db in
                    let rows = try Row.fetchCursor(db, sql: Self.itemsSQL)
                    var sum = 0
                    while let row = try rows.next() {
                        for i in 0..<10 { sum &+= row[i] as Int }
                    }
                    return sum
                }
            }
            w.measure("grdb Row.fetchAll, then row[i] as Int") {
                try queue.read { db in
                    var sum = 0
                    for row in try Row.fetchAll(db, sql: Self.itemsSQL) {
                        for i in 0..<10 { sum &+= row[i] as Int }
                    }
                    return sum
                }
            }
            w.measure("dicrecord each, r[i] as Int?") {
                try db.transaction { db in
                    var sum = 0
                    try db.each(Self.itemsSQL) { r in
                        for i in 0..<10 { sum &+= (r[i] as Int?) ?? 0 }
                        return true
                    }
                    return sum
                }
            }
            w.measure("dicrecord find, then r[i] as Int?") {
                try db.transaction { db in
                    var sum = 0
                    for r in try db.find(Self.itemsSQL) {
                        for i in 0..<10 { sum &+= (r[i] as Int?) ?? 0 }
                    }
                    return sum
                }
            }
            // The async twin, awaited from a task: the same rows, read on the task's own thread when
            // a reader is free (else on a pool thread), looking at the task's cancellation between rows.
            w.measure("dicrecord find awaited, then r[i] as Int?") {
                try blocking {
                    var sum = 0
                    for r in try await db.find(Self.itemsSQL) {
                        for i in 0..<10 { sum &+= (r[i] as Int?) ?? 0 }
                    }
                    return sum
                }
            }
        }
    }

    // MARK: fetch_named

    private func named(_ raw: RawDatabase, _ queue: DatabaseQueue, _ db: Db) throws {
        try bench.workload("fetch_named") { w in
            // C has no read by name. This baseline finds each value's column by name in a
            // dictionary built once per statement from `sqlite3_column_name`: what a program
            // without a library does, and the shape of the anchor's raw figure (39 ms, 1.7× its
            // positional 23 ms). The next row resolves the names to indexes once, for reference.
            w.measure("raw") {
                try raw.transaction {
                    let statement = try raw.prepare(Self.itemsSQL)
                    defer { sqlite3_finalize(statement) }
                    var columns: [String: Int32] = [:]
                    for i in 0..<sqlite3_column_count(statement) { columns[String(cString: sqlite3_column_name(statement, i))] = i }
                    var sum = 0
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        for name in itemColumns { sum &+= Int(sqlite3_column_int64(statement, columns[name]!)) }
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    return sum
                }
            }
            w.measure("raw, names resolved once") {
                try raw.transaction {
                    let statement = try raw.prepare(Self.itemsSQL)
                    defer { sqlite3_finalize(statement) }
                    let columns = try raw.columnIndexes(statement, names: itemColumns)
                    var sum = 0
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        for column in columns { sum &+= Int(sqlite3_column_int64(statement, column)) }
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    return sum
                }
            }
            w.measure("grdb Row.fetchCursor, row[name] as Int") {
                try queue.read { db in
                    let rows = try Row.fetchCursor(db, sql: Self.itemsSQL)
                    var sum = 0
                    while let row = try rows.next() {
                        for name in itemColumns { sum &+= row[name] as Int }
                    }
                    return sum
                }
            }
            w.measure("grdb Row.fetchAll, then row[name] as Int") {
                try queue.read { db in
                    var sum = 0
                    for row in try Row.fetchAll(db, sql: Self.itemsSQL) {
                        for name in itemColumns { sum &+= row[name] as Int }
                    }
                    return sum
                }
            }
            w.measure("dicrecord each, r[name] as Int?") {
                try db.transaction { db in
                    var sum = 0
                    try db.each(Self.itemsSQL) { r in
                        for name in itemColumns { sum &+= (r[name] as Int?) ?? 0 }
                        return true
                    }
                    return sum
                }
            }
            w.measure("dicrecord find, then r[name] as Int?") {
                try db.transaction { db in
                    var sum = 0
                    for r in try db.find(Self.itemsSQL) {
                        for name in itemColumns { sum &+= (r[name] as Int?) ?? 0 }
                    }
                    return sum
                }
            }
            w.measure("dicrecord find, then r.i0 … r.i9 as Int?") {
                try db.transaction { db in
                    var sum = 0
                    for r in try db.find(Self.itemsSQL) {
                        let i0: Int? = r.i0, i1: Int? = r.i1, i2: Int? = r.i2, i3: Int? = r.i3, i4: Int? = r.i4
                        let i5: Int? = r.i5, i6: Int? = r.i6, i7: Int? = r.i7, i8: Int? = r.i8, i9: Int? = r.i9
                        sum &+= (i0 ?? 0) &+ (i1 ?? 0) &+ (i2 ?? 0) &+ (i3 ?? 0) &+ (i4 ?? 0)
                        sum &+= (i5 ?? 0) &+ (i6 ?? 0) &+ (i7 ?? 0) &+ (i8 ?? 0) &+ (i9 ?? 0)
                    }
                    return sum
                }
            }
        }
    }

    // MARK: fetch_records

    private func records(_ raw: RawDatabase, _ queue: DatabaseQueue, _ db: Db) throws {
        try bench.workload("fetch_records") { w in
            w.measure("raw", checksum: itemsChecksum) { () throws -> [Item] in
                try raw.transaction {
                    let statement = try raw.prepare(Self.itemsSQL)
                    defer { sqlite3_finalize(statement) }
                    // Column indexes are resolved by name once per statement.
                    let c = try raw.columnIndexes(statement, names: itemColumns)
                    var items: [Item] = []
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        func int(_ i: Int) -> Int { Int(sqlite3_column_int64(statement, c[i])) }
                        items.append(Item(i0: int(0), i1: int(1), i2: int(2), i3: int(3), i4: int(4),
                                          i5: int(5), i6: int(6), i7: int(7), i8: int(8), i9: int(9)))
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    return items
                }
            }
            // A reference row: the floor under any typed model that is a class (as `Model` is):
            // raw C copies each row into an object of its own, then makes the `Item` from it.
            w.measure("floor: raw C, an object per row, then Item", checksum: itemsChecksum) { () throws -> [Item] in
                try raw.transaction {
                    let statement = try raw.prepare(Self.itemsSQL)
                    defer { sqlite3_finalize(statement) }
                    let c = try raw.columnIndexes(statement, names: itemColumns)
                    var rows: [TenValues] = []
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        rows.append(TenValues { sqlite3_column_int64(statement, c[$0]) })
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    return rows.map { row in
                        func int(_ i: Int) -> Int { Int(row[i]) }
                        return Item(i0: int(0), i1: int(1), i2: int(2), i3: int(3), i4: int(4),
                                    i5: int(5), i6: int(6), i7: int(7), i8: int(8), i9: int(9))
                    }
                }
            }
            w.measure("grdb fetchAll, hand-written init(row:)", checksum: itemsChecksum) { () throws -> [Item] in
                try queue.read { db in try Item.fetchAll(db, sql: Self.itemsSQL) }
            }
            w.measure("grdb fetchAll, Decodable", checksum: itemsChecksum) { () throws -> [DecodableItem] in
                try queue.read { db in try DecodableItem.fetchAll(db, sql: Self.itemsSQL) }
            }
            w.measure("dicrecord find, then typed reads by name", checksum: itemsChecksum) { () throws -> [Item] in
                try db.transaction { db in try db.find(Self.itemsSQL).map(Item.init(record:)) }
            }
            w.measure("dicrecord find, then Record.decode", checksum: itemsChecksum) { () throws -> [Item] in
                try db.transaction { db in try db.find(Self.itemsSQL).map { try $0.decode(Item.self) } }
            }
            // A reference row: the floor under any Decoder over records (see `ByIndexDecoder`).
            w.measure("floor: find, then Item(from:) reading by index", checksum: itemsChecksum) { () throws -> [Item] in
                try db.transaction { db in try db.find(Self.itemsSQL).map { try Item(from: ByIndexDecoder(record: $0)) } }
            }
            let dao = ItemModel.dao.use("items")
            w.measure("dicrecord Model dao.find, then @Column reads", checksum: itemsChecksum) { () throws -> [Item] in
                try db.transaction { _ in try dao.find(Self.itemsSQL).map(Item.init(model:)) }
            }
        }
    }

    // MARK: fetch_mixed

    private func mixed(_ raw: RawDatabase, _ queue: DatabaseQueue, _ db: Db) throws {
        try bench.workload("fetch_mixed") { w in
            w.measure("raw", checksum: peopleChecksum) { () throws -> [Person] in
                try raw.transaction {
                    let statement = try raw.prepare(Self.peopleSQL)
                    defer { sqlite3_finalize(statement) }
                    var people: [Person] = []
                    var code = sqlite3_step(statement)
                    while code == SQLITE_ROW {
                        people.append(Person(statement: statement))
                        code = sqlite3_step(statement)
                    }
                    try raw.check(code)
                    return people
                }
            }
            w.measure("grdb fetchAll, init(row:) by index, URL(string:)", checksum: peopleChecksum) { () throws -> [Person] in
                try queue.read { db in try Person.fetchAll(db, sql: Self.peopleSQL) }
            }
            w.measure("grdb fetchAll, init(row:) by name, GRDB's Date and URL",
                          checksum: { (people: [ConvenientPerson]) in peopleChecksum(people.map(\.person)) }) {
                try queue.read { db in try ConvenientPerson.fetchAll(db, sql: Self.peopleSQL) }
            }
            w.measure("dicrecord find, then every field read", checksum: peopleChecksum) { () throws -> [Person] in
                try db.transaction { db in try db.find(Self.peopleSQL).map(Person.init(record:)) }
            }
            // Nothing read inside the clock: the checksum reads the records afterwards.
            w.measure("dicrecord find alone", checksum: { (records: [DicRecord.Record]) in peopleChecksum(records.map(Person.init(record:))) }) {
                try db.transaction { db in try db.find(Self.peopleSQL) }
            }
        }
    }
}

extension RawDatabase {
    /// BEGIN, `body`, COMMIT (ROLLBACK when `body` throws).
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Throws unless the last step finished the statement.
    @inline(__always)
    func check(_ code: Int32) throws {
        guard code == SQLITE_DONE else { throw error(code) }
    }

    /// The index of each of `names` in the statement's result columns.
    func columnIndexes(_ statement: OpaquePointer, names: [String]) throws -> [Int32] {
        let count = sqlite3_column_count(statement)
        return try names.map { name in
            guard let index = (0..<count).first(where: { String(cString: sqlite3_column_name(statement, $0)) == name }) else {
                throw SQLiteError(code: SQLITE_ERROR, message: "no column \(name)")
            }
            return index
        }
    }
}
