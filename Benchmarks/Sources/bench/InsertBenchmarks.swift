import CSQLiteBench
import DicRecord
import Foundation
import GRDB

/// insert: `insertRows` rows × 10 INTEGER into an empty `items` table, in one transaction;
/// BEGIN…COMMIT is timed. Every run starts untimed from a new file with the empty table and a
/// new connection (so statement caches start empty too).
///
/// What each implementation inserts is built before the clock starts, for every library alike:
/// GRDB's `StatementArguments` and `Item`s, DicRecord's `[[DatabaseArgument]]` and `Record`s
/// (records are rebuilt for each run, since saving writes the generated rowid back into them).
/// Raw C binds the loop counter and builds nothing.
struct InsertBenchmarks {
    let bench: Bench
    let config: BenchConfig

    func run() throws {
        let rows = config.insertRows
        try bench.workload("insert") { w in
            let path = config.path("insert.sqlite")
            let checksum = { (_: Void) throws -> Int in
                try RawDatabase(path: path).queryInt("SELECT sum(i0 + i1 + i2 + i3 + i4 + i5 + i6 + i7 + i8 + i9) FROM items")
            }

            var raw: RawDatabase?
            try w.measure("raw", setUp: {
                raw = nil
                raw = try RawDatabase(path: Self.newFile(path))
                try raw!.execute(Fixtures.itemsSchema)
            }, checksum: checksum) {
                let raw = raw!
                try raw.transaction {
                    let statement = try raw.prepare(Fixtures.itemsInsert)
                    defer { sqlite3_finalize(statement) }
                    for n in 1...rows {
                        sqlite3_reset(statement)
                        for column in 1...Int32(10) { sqlite3_bind_int64(statement, column, Int64(n)) }
                        try raw.check(sqlite3_step(statement))
                    }
                }
            }
            raw = nil

            var queue: DatabaseQueue?
            let newQueue = {
                queue = nil
                queue = try DatabaseQueue(path: Self.newFile(path))
                try queue!.write { db in try db.execute(sql: Fixtures.itemsSchema) }
            }
            let argumentLists = (1...rows).map { StatementArguments(Array(repeating: $0, count: 10)) }
            try w.measure("grdb cached statement, setUncheckedArguments + execute", setUp: newQueue, checksum: checksum) {
                try queue!.write { db in
                    let statement = try db.cachedStatement(sql: Fixtures.itemsInsert)
                    for arguments in argumentLists {
                        statement.setUncheckedArguments(arguments)
                        try statement.execute()
                    }
                }
            }
            let items = (1...rows).map { n in Item(i0: n, i1: n, i2: n, i3: n, i4: n, i5: n, i6: n, i7: n, i8: n, i9: n) }
            try w.measure("grdb PersistableRecord insert", setUp: newQueue, checksum: checksum) {
                try queue!.write { db in
                    for item in items { try item.insert(db) }
                }
            }
            queue = nil

            var context: DbContext?
            defer { context?.stop() }
            let newContext = {
                context?.stop()
                context = try Fixtures.startContext("insert", path: Self.newFile(path))
                try Db.use("insert").update(Fixtures.itemsSchema)
            }
            let db = Db.use("insert")
            let argumentRows: [[DatabaseArgument]] = (1...rows).map { Array(repeating: $0, count: 10) }
            try w.measure("dicrecord batch(sql, rows)", setUp: newContext, checksum: checksum) {
                _ = try db.batch(Fixtures.itemsInsert, argumentRows)
            }
            var records: [DicRecord.Record] = []
            try w.measure("dicrecord batchSave(table, records)", setUp: {
                records = []
                try newContext()
                records = try (1...rows).map { n in
                    try DicRecord.Record(["i0": n, "i1": n, "i2": n, "i3": n, "i4": n, "i5": n, "i6": n, "i7": n, "i8": n, "i9": n])
                }
            }, checksum: checksum) {
                _ = try db.batchSave("items", records)
            }
        }
    }

    /// Deletes the file at `path` (and its journal) and returns the path.
    static func newFile(_ path: String) -> String {
        for file in [path, path + "-journal", path + "-wal", path + "-shm"] {
            try? FileManager.default.removeItem(atPath: file)
        }
        return path
    }
}
