import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation

/// paginate: pages of 20 rows of a `people` table of `pageRows` rows, ordered by id; each page
/// is its own workload (paginate_p1, paginate_p100, …). Raw C counts the rows with
/// `SELECT count(*) FROM people` and reads the page with LIMIT/OFFSET, both prepared inside the
/// timed call (one call per run: there is nothing to amortize, and preparing costs microseconds
/// against milliseconds of scanning). Every implementation runs inside one transaction.
struct PaginateBenchmarks {
    let bench: Bench
    let fixtures: Fixtures

    func run() throws {
        let config = fixtures.config
        let path = try fixtures.pagesPath
        let raw = try RawDatabase(path: path)
        let context = try Fixtures.startContext("pages", path: path)
        defer { context.stop() }
        let db = Db.use("pages")
        let pageSize = config.pageSize

        for page in config.pages {
            try bench.workload("paginate_p\(page)") { w in
                // Checksum: the total row count plus the checksum of every person on the page.
                w.measure("raw") {
                    try raw.transaction {
                        var sum = try raw.queryInt("SELECT count(*) FROM people")
                        let statement = try raw.prepare("SELECT * FROM people ORDER BY id LIMIT ? OFFSET ?")
                        defer { sqlite3_finalize(statement) }
                        sqlite3_bind_int64(statement, 1, Int64(pageSize))
                        sqlite3_bind_int64(statement, 2, Int64((page - 1) * pageSize))
                        var code = sqlite3_step(statement)
                        while code == SQLITE_ROW {
                            sum &+= Person(statement: statement).checksum
                            code = sqlite3_step(statement)
                        }
                        try raw.check(code)
                        return sum
                    }
                }
                w.measure("dicrecord paginate") {
                    try db.transaction { db in
                        let result = try db.paginate(page, pageSize, "select *", "from people order by id")
                        return result.list.reduce(result.totalRow) { $0 &+ Person(record: $1).checksum }
                    }
                }
                // Beyond raw count + OFFSET: a total the caller already knows (counted once, or
                // cached) skips the count; keyset paging seeks past the previous page's last id
                // instead of skipping rows. Keyset pages count nothing, so their checksum adds the
                // known row count to the page's rows.
                w.measure("dicrecord paginate, known totalRow") {
                    try db.transaction { db in
                        let result = try db.paginate(page, pageSize, "select *", "from people order by id", totalRow: config.pageRows)
                        return result.list.reduce(result.totalRow) { $0 &+ Person(record: $1).checksum }
                    }
                }
                let lastKey: DatabaseArgument = page == 1 ? nil : (page - 1) * pageSize
                w.measure("dicrecord paginate(after:) keyset") {
                    try db.transaction { db in
                        let result = try db.paginate(after: lastKey, pageSize, "select *", "from people order by id")
                        return result.list.reduce(config.pageRows) { $0 &+ Person(record: $1).checksum }
                    }
                }
            }
        }
    }
}
