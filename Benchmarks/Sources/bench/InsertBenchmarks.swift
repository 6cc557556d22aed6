import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation
import GRDB

/// insert: `insertRows` rows × 10 INTEGER into an empty `items` table, in one transaction;
/// BEGIN…COMMIT is timed. Before each run, untimed, every implementation gets a new file (one
/// per library) with the empty table and a new connection, so statement caches start empty too.
///
/// What each implementation inserts is also built before the clock starts, for every library
/// alike, and dropped after the run: GRDB's `StatementArguments` and `Item`s, DicRecord's
/// `[[DatabaseArgument]]` and `Record`s (rebuilt for each run, since saving writes the generated
/// rowid back into them). Raw C binds the loop counter and builds nothing.
struct InsertBenchmarks {
    let bench: Bench
    let config: BenchConfig

    func run() throws {
        let rows = config.insertRows
        try bench.workload("insert") { w in
            // The checksum reads the table back after the run.
            let checksum = { (path: String) in
                { (_: Void) throws -> Int in
                    try RawDatabase(path: path).queryInt("SELECT sum(i0 + i1 + i2 + i3 + i4 + i5 + i6 + i7 + i8 + i9) FROM items")
                }
            }

            // Raw C: prepared once, then reset + 10 binds + step per row.
            let rawPath = config.path("insert-raw.sqlite")
            var raw: RawDatabase?
            w.measure("raw", setUp: {
                raw = try RawDatabase(path: Self.newFile(rawPath))
                try raw!.execute(Fixtures.itemsSchema)
            }, tearDown: { raw = nil }, checksum: checksum(rawPath)) {
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

            // GRDB: its fastest path (a cached statement with unchecked arguments), and records.
            let grdbPath = config.path("insert-grdb.sqlite")
            var queue: DatabaseQueue?
            let newQueue = {
                queue = try DatabaseQueue(path: Self.newFile(grdbPath))
                try queue!.write { db in try db.execute(sql: Fixtures.itemsSchema) }
            }
            var argumentLists: [GRDB.StatementArguments] = []
            w.measure("grdb cached statement, setUncheckedArguments + execute", setUp: {
                try newQueue()
                argumentLists = (1...rows).map { StatementArguments(Array(repeating: $0, count: 10)) }
            }, tearDown: {
                queue = nil
                argumentLists = []
            }, checksum: checksum(grdbPath)) {
                try queue!.write { db in
                    let statement = try db.cachedStatement(sql: Fixtures.itemsInsert)
                    for arguments in argumentLists {
                        statement.setUncheckedArguments(arguments)
                        try statement.execute()
                    }
                }
            }
            var items: [Item] = []
            w.measure("grdb PersistableRecord insert", setUp: {
                try newQueue()
                items = (1...rows).map { n in Item(i0: n, i1: n, i2: n, i3: n, i4: n, i5: n, i6: n, i7: n, i8: n, i9: n) }
            }, tearDown: {
                queue = nil
                items = []
            }, checksum: checksum(grdbPath)) {
                try queue!.write { db in
                    for item in items { try item.insert(db) }
                }
            }

            // DicRecord: `batch` and `batchSave`, each one transaction of its own.
            let dicrecordPath = config.path("insert-dicrecord.sqlite")
            var context: DbContext?
            let newContext = {
                context = try Fixtures.startContext("insert", path: Self.newFile(dicrecordPath))
                try Db.use("insert").update(Fixtures.itemsSchema)
            }
            let db = Db.use("insert")
            var argumentRows: [[DatabaseArgument]] = []
            w.measure("dicrecord batch(sql, rows)", setUp: {
                try newContext()
                argumentRows = (1...rows).map { Array(repeating: $0, count: 10) }
            }, tearDown: {
                context?.stop()
                argumentRows = []
            }, checksum: checksum(dicrecordPath)) {
                _ = try db.batch(Fixtures.itemsInsert, argumentRows)
            }
            var records: [DicRecord.Record] = []
            w.measure("dicrecord batchSave(table, records)", setUp: {
                try newContext()
                records = try (1...rows).map { n in
                    try DicRecord.Record(["i0": n, "i1": n, "i2": n, "i3": n, "i4": n, "i5": n, "i6": n, "i7": n, "i8": n, "i9": n])
                }
            }, tearDown: {
                context?.stop()
                records = []
            }, checksum: checksum(dicrecordPath)) {
                _ = try db.batchSave("items", records)
            }
            // Building the records is timed too: the JFinal way of writing data is to build records
            // in code and save them (raw C binds the same values, and builds nothing).
            w.measure("dicrecord build from dictionary literals + batchSave", setUp: newContext, tearDown: { context?.stop() },
                      checksum: checksum(dicrecordPath)) {
                var built: [DicRecord.Record] = []
                built.reserveCapacity(rows)
                for n in 1...rows {
                    built.append(try DicRecord.Record(["i0": n, "i1": n, "i2": n, "i3": n, "i4": n, "i5": n, "i6": n, "i7": n, "i8": n, "i9": n]))
                }
                _ = try db.batchSave("items", built)
            }
            w.measure("dicrecord build Record() + 10 member writes + batchSave", setUp: newContext, tearDown: { context?.stop() },
                      checksum: checksum(dicrecordPath)) {
                var built: [DicRecord.Record] = []
                built.reserveCapacity(rows)
                for n in 1...rows {
                    let r = DicRecord.Record()
                    r.i0 = n; r.i1 = n; r.i2 = n; r.i3 = n; r.i4 = n
                    r.i5 = n; r.i6 = n; r.i7 = n; r.i8 = n; r.i9 = n
                    built.append(r)
                }
                _ = try db.batchSave("items", built)
            }
            var models: [ItemModel] = []
            w.measure("dicrecord Model.save() in one transaction", setUp: {
                try newContext()
                context?.register(ItemModel.self)   // adopts the table just created
                models = (1...rows).map { n in
                    let m = ItemModel().use("insert")
                    m.i0 = n; m.i1 = n; m.i2 = n; m.i3 = n; m.i4 = n
                    m.i5 = n; m.i6 = n; m.i7 = n; m.i8 = n; m.i9 = n
                    return m
                }
            }, tearDown: {
                context?.stop()
                models = []
            }, checksum: checksum(dicrecordPath)) {
                try db.transaction { _ in
                    for model in models { try model.save() }
                }
            }
            // The typed form of the JFinal way, building timed too: a new model, its ten `@Column`
            // properties set, saved; all in one transaction.
            w.measure("dicrecord build models by @Column writes + save(), in one transaction", setUp: {
                try newContext()
                context?.register(ItemModel.self)
            }, tearDown: { context?.stop() }, checksum: checksum(dicrecordPath)) {
                try db.transaction { _ in
                    for n in 1...rows {
                        let m = ItemModel().use("insert")
                        m.i0 = n; m.i1 = n; m.i2 = n; m.i3 = n; m.i4 = n
                        m.i5 = n; m.i6 = n; m.i7 = n; m.i8 = n; m.i9 = n
                        try m.save()
                    }
                }
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
