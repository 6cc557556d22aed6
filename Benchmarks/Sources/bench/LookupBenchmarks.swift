import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation
import GRDB

/// lookup_pk: one `SELECT * FROM people WHERE id = ?` per id of a fixed pseudo-random
/// permutation of the table's ids, each row read into a `Person`, all inside one transaction.
struct LookupBenchmarks {
    let bench: Bench
    let fixtures: Fixtures

    static let sql = "SELECT * FROM people WHERE id = ?"

    func run() throws {
        let path = try fixtures.peoplePath
        let ids = lookupOrder(count: fixtures.config.peopleRows)
        let raw = try RawDatabase(path: path)
        let queue = try DatabaseQueue(path: path)
        let context = try Fixtures.startContext("people", path: path)
        defer { context.stop() }
        let db = Db.use("people")

        try bench.workload("lookup_pk") { w in
            w.measure("raw") {
                try raw.transaction {
                    // Prepared once per run, then bind, step, read, reset per id.
                    let statement = try raw.prepare(Self.sql)
                    defer { sqlite3_finalize(statement) }
                    var sum = 0
                    for id in ids {
                        sqlite3_bind_int64(statement, 1, Int64(id))
                        guard sqlite3_step(statement) == SQLITE_ROW else { throw raw.error(sqlite3_errcode(raw.handle)) }
                        sum &+= Person(statement: statement).checksum
                        sqlite3_reset(statement)
                    }
                    return sum
                }
            }
            w.measure("grdb cached statement, Row.fetchOne") {
                try queue.read { db in
                    let statement = try db.cachedStatement(sql: Self.sql)
                    var sum = 0
                    for id in ids {
                        let row = try Row.fetchOne(statement, arguments: [id])!
                        sum &+= Person(row: row).checksum
                    }
                    return sum
                }
            }
            w.measure("grdb Person.fetchOne(db, key:)") {
                try queue.read { db in
                    var sum = 0
                    for id in ids { sum &+= try Person.fetchOne(db, key: id)!.checksum }
                    return sum
                }
            }
            w.measure("dicrecord findById") {
                try db.transaction { db in
                    var sum = 0
                    for id in ids { sum &+= Person(record: try db.findById("people", id)!).checksum }
                    return sum
                }
            }
            // The async hop: the same lookups, each a call of its own (no enclosing transaction),
            // synchronous and awaited; the difference per lookup is what an await costs.
            w.measure("dicrecord findById, each its own call") {
                var sum = 0
                for id in ids { sum &+= Person(record: try db.findById("people", id)!).checksum }
                return sum
            }
            w.measure("dicrecord findById, each its own call, awaited") {
                try blocking {
                    var sum = 0
                    for id in ids { sum &+= Person(record: try await db.findById("people", id)!).checksum }
                    return sum
                }
            }
            w.measure("dicrecord findFirst(sql, id)") {
                try db.transaction { db in
                    var sum = 0
                    for id in ids { sum &+= Person(record: try db.findFirst(Self.sql, id)!).checksum }
                    return sum
                }
            }
        }
    }
}
