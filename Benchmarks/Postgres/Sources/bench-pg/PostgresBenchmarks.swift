import BenchHarness
import DicRecord
import DicRecordPostgres
import Foundation

/// The PostgreSQL workloads on a database of their own: each workload registers raw libpq first
/// (the checksum and ratio reference), then PostgresNIO, Fluent and DicRecord.
struct PostgresBenchmarks {
    let bench: Bench
    let config: PgConfig
    let url: String
    /// A streaming replica of `url` (DICRECORD_POSTGRES_REPLICA_URL) for `pg_replica`.
    let replicaURL: String?

    func run(_ selected: (String) -> Bool) throws {
        let raw = try RawPostgres(url: url)
        defer { raw.close() }
        for table in ["bench_items", "bench_pages"] {
            try raw.exec("CREATE TABLE \(table) (id bigint PRIMARY KEY, i bigint NOT NULL, r double precision NOT NULL, t text NOT NULL)")
        }
        let fill = { (table: String, rows: Int) in
            try raw.exec("INSERT INTO \(table) SELECT g, g * 7, g / 3.0, 'item ' || g FROM generate_series(1, \(rows)) g")
        }
        try fill("bench_items", config.rows)
        try fill("bench_pages", config.pageRows)
        try raw.exec("VACUUM ANALYZE")

        let context = try DbContext(postgres: url, configName: "pg")
        try context.start()
        defer { context.stop() }
        context.register(PgItem.self)   // adopts the table
        let dicrecord = DicRecordSide(db: Db.use("pg"))
        let nio = try NIOSide(url: url)
        defer { nio.close() }
        let fluent = try FluentSide(url: url)
        defer { fluent.close() }

        if selected("pg_fetch") {
            try bench.workload("pg_fetch") { w in
                raw.fetch(w); nio.fetch(w); fluent.fetch(w); dicrecord.fetch(w)
            }
        }
        if selected("pg_lookup") {
            let ids = config.lookupIds
            try bench.workload("pg_lookup") { w in
                raw.lookup(w, ids: ids); nio.lookup(w, ids: ids); fluent.lookup(w, ids: ids); dicrecord.lookup(w, ids: ids)
            }
        }
        if selected("pg_paginate") {
            try bench.workload("pg_paginate_deep") { w in
                raw.paginate(w, config: config); nio.paginate(w, config: config); fluent.paginate(w, config: config); dicrecord.paginate(w, config: config)
            }
        }
        if selected("pg_keyset") {
            try bench.workload("pg_paginate_keyset") { w in
                raw.keyset(w, config: config); nio.keyset(w, config: config); fluent.keyset(w, config: config); dicrecord.keyset(w, config: config)
            }
        }
        if selected("pg_replica") {
            if let replicaURL {
                try replicaWorkload(replicaURL: replicaURL, primary: dicrecord.db)
            } else {
                bench.log("pg_replica: skipped (set DICRECORD_POSTGRES_REPLICA_URL to a streaming replica of DICRECORD_POSTGRES_URL)")
            }
        }
        if selected("pg_insert") {
            let clear = { try? raw.exec("TRUNCATE bench_items") }
            let rows = config.rows
            try bench.workload("pg_insert") { w in
                raw.insert(w, rows: rows, clear: { clear() }); nio.insert(w, rows: rows, clear: { clear() })
                fluent.insert(w, rows: rows, clear: { clear() }); dicrecord.insert(w, rows: rows, clear: { clear() })
            }
        }
    }

    /// Reads on a replica next to reads on the primary ("raw": libpq on the replica), and
    /// write-then-read rounds ("raw": libpq on the primary) with
    /// read-your-writes (the WAL position taken after each write, the replica asked before each
    /// read) next to the same rounds on a config without replicas.
    private func replicaWorkload(replicaURL: String, primary db: Db) throws {
        let replicated = try DbContext(postgres: url, replicas: [replicaURL], configName: "pgr")
        try replicated.start()
        defer { replicated.stop() }
        let rdb = Db.use("pgr")
        // Wait until the replica has the table (and this context has written nothing).
        let deadline = Date(timeIntervalSinceNow: 30)
        while (try? rdb.queryFirst("select pg_is_in_recovery() from bench_items limit 1", as: Bool.self)) != true {
            guard Date() < deadline else { throw BenchError("the replica never caught up") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let raw = try RawPostgres(url: replicaURL)
        defer { raw.close() }
        let ids = config.lookupIds
        try bench.workload("pg_replica_reads") { w in
            w.measure("raw") {
                var sum = 0
                for id in ids {
                    sum &+= try raw.query(Sql.dollar(Sql.lookup), [Int64(id)]) { result, _ in
                        RawPostgres.checksum(result, 0)
                    }
                }
                return sum
            }
            w.measure("dicrecord findById, replicas (on the replica)") {
                var sum = 0
                for id in ids { sum &+= DicRecordSide.checksum(try rdb.findById("bench_items", id, columns: "id, i, r, t")!) }
                return sum
            }
            w.measure("dicrecord findById, primary only") {
                var sum = 0
                for id in ids { sum &+= DicRecordSide.checksum(try db.findById("bench_items", id, columns: "id, i, r, t")!) }
                return sum
            }
        }
        let rounds = config.quick ? 100 : 2_000
        let rawPrimary = try RawPostgres(url: url)
        defer { rawPrimary.close() }
        try bench.workload("pg_replica_write_then_read") { w in
            w.measure("raw") {
                var sum = 0
                for n in 1...rounds {
                    try rawPrimary.exec("UPDATE bench_items SET i = \(n) WHERE id = 1")
                    sum &+= try rawPrimary.query("SELECT i FROM bench_items WHERE id = $1", [1]) { result, _ in
                        RawPostgres.int8(result, 0, 0)
                    }
                }
                return sum
            }
            w.measure("dicrecord, replicas (read-your-writes)") {
                var sum = 0
                for n in 1...rounds {
                    try rdb.update("update bench_items set i = ? where id = 1", n)
                    sum &+= try rdb.queryInt("select i from bench_items where id = 1") ?? 0
                }
                return sum
            }
            w.measure("dicrecord, primary only") {
                var sum = 0
                for n in 1...rounds {
                    try db.update("update bench_items set i = ? where id = 1", n)
                    sum &+= try db.queryInt("select i from bench_items where id = 1") ?? 0
                }
                return sum
            }
        }
    }

}
