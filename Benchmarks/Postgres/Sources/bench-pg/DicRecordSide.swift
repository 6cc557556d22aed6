import BenchHarness
import DicRecord
import DicRecordPostgres
import Foundation

/// DicRecord's model of `bench_items` (the key `id` is implicit).
final class PgItem: Model {
    @Column var i: Int = 0
    @Column var r: Double = 0
    @Column var t: String = ""
    override class var tableName: String { "bench_items" }

    var checksum: Int { rowChecksum(id: id ?? 0, i: i, r: r, t: t) }
}

/// DicRecord's implementations of the workloads, on the config `db` names.
struct DicRecordSide {
    let db: Db

    static func checksum(_ r: Record) -> Int {
        let id: Int? = r.id, i: Int? = r.i, real: Double? = r.r, t: String? = r.t
        return rowChecksum(id: id ?? 0, i: i ?? 0, r: real ?? 0, t: t ?? "")
    }

    func fetch(_ w: Workload) {
        w.measure("dicrecord find, then typed reads by name") {
            try db.find(Sql.fetch).reduce(0) { $0 &+ Self.checksum($1) }
        }
        w.measure("dicrecord each, typed reads by name") {
            var sum = 0
            try db.each(Sql.fetch) { r in
                sum &+= Self.checksum(r)
                return true
            }
            return sum
        }
        let dao = PgItem.dao.use(db.configName)
        w.measure("dicrecord Model dao.find, then @Column reads") {
            try dao.find(Sql.fetch).reduce(0) { $0 &+ $1.checksum }
        }
    }

    func lookup(_ w: Workload, ids: [Int]) {
        w.measure("dicrecord findById") {
            var sum = 0
            for id in ids { sum &+= Self.checksum(try db.findById("bench_items", id, columns: "id, i, r, t")!) }
            return sum
        }
        let dao = PgItem.dao.use(db.configName)
        w.measure("dicrecord Model dao.findById") {
            var sum = 0
            for id in ids { sum &+= try dao.findById(id)!.checksum }
            return sum
        }
    }

    func insert(_ w: Workload, rows: Int, clear: @escaping () -> Void) {
        w.measure("dicrecord batch(sql, rows)", setUp: clear) {
            try db.batch(Sql.insert, (1...rows).map { n in let row = fixtureRow(n); return [row.id, row.i, row.r, row.t] }).count
        }
        w.measure("dicrecord batchSave(table, records), records built in the timed block", setUp: clear) {
            let records = try (1...rows).map { n in
                let row = fixtureRow(n)
                return try Record(["id": row.id, "i": row.i, "r": row.r, "t": row.t])
            }
            return try db.batchSave("bench_items", records).count
        }
    }

    func paginate(_ w: Workload, config: PgConfig) {
        w.measure("dicrecord paginate") {
            let page = try db.paginate(config.deepPage, config.pageSize, "SELECT id, i, r, t", "FROM bench_pages ORDER BY id")
            return page.list.reduce(page.totalRow) { $0 &+ Self.checksum($1) }
        }
    }

    func keyset(_ w: Workload, config: PgConfig) {
        w.measure("dicrecord paginate(after:)") {
            var sum = 0
            var key: DatabaseArgument = config.keysetAfter
            for _ in 0..<config.keysetPages {
                let page = try db.paginate(after: key, config.pageSize, "SELECT id, i, r, t", "FROM bench_pages ORDER BY id")
                sum = page.list.reduce(sum) { $0 &+ Self.checksum($1) }
                key = page.nextKey
            }
            return sum
        }
    }
}
