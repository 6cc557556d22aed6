import CPostgreSQLBench
import DicRecord
import DicRecordPostgres
import Foundation

/// PostgreSQL, a first look (issue 15): fetch 100k rows, look rows up by key, insert 100k rows,
/// ("raw" is libpq here),
/// DicRecord next to raw libpq (prepared statements, binary results) on the server named by
/// DICRECORD_POSTGRES_URL. The comparison with PostgresNIO and Fluent comes with the next issue.
struct PostgresBenchmarks {
    let bench: Bench
    let config: BenchConfig
    let url: String
    /// A streaming replica of `url` (DICRECORD_POSTGRES_REPLICA_URL) for `pg_replica`.
    let replicaURL: String?

    static let fetchSQL = "SELECT id, i, r, t FROM bench_items"
    static let lookupSQL = "SELECT id, i, r, t FROM bench_items WHERE id = ?"

    var rows: Int { config.quick ? 2_000 : 100_000 }
    var lookups: Int { config.quick ? 500 : 20_000 }

    func run(_ selected: (String) -> Bool) throws {
        let raw = try RawPostgres(url: url)
        defer { raw.close() }
        let schema = "dicrecord_bench_\(UInt32.random(in: 0...UInt32.max))"
        try raw.exec("CREATE SCHEMA \(schema)")
        defer { try? raw.exec("DROP SCHEMA \(schema) CASCADE") }
        try raw.exec("SET search_path TO \(schema)")
        try raw.exec("CREATE TABLE bench_items (id bigint PRIMARY KEY, i bigint NOT NULL, r double precision NOT NULL, t text NOT NULL)")
        try raw.exec("INSERT INTO bench_items SELECT g, g * 7, g / 3.0, 'item ' || g FROM generate_series(1, \(rows)) g")
        let context = try DbContext(postgres: url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)", configName: "pg")
        try context.start()
        defer { context.stop() }
        let db = Db.use("pg")

        if selected("pg_fetch") {
            try bench.workload("pg_fetch") { w in
                w.measure("raw") {
                    try raw.query(Self.fetchSQL, []) { result, count in
                        var sum = 0
                        for row in 0..<count { sum &+= RawPostgres.checksum(result, row) }
                        return sum
                    }
                }
                w.measure("dicrecord find, then typed reads by name") {
                    var sum = 0
                    for r in try db.find(Self.fetchSQL) { sum &+= Self.checksum(r) }
                    return sum
                }
            }
        }
        if selected("pg_lookup") {
            let ids = (0..<lookups).map { ($0 &* 7_919) % rows + 1 }
            try bench.workload("pg_lookup") { w in
                w.measure("raw") {
                    var sum = 0
                    for id in ids {
                        sum &+= try raw.query(Self.lookupSQL.replacingOccurrences(of: "?", with: "$1"), [Int64(id)]) { result, _ in
                            RawPostgres.checksum(result, 0)
                        }
                    }
                    return sum
                }
                w.measure("dicrecord findById") {
                    var sum = 0
                    for id in ids { sum &+= Self.checksum(try db.findById("bench_items", id, columns: "id, i, r, t")!) }
                    return sum
                }
            }
        }
        if selected("pg_replica") {
            if let replicaURL {
                try replicaWorkload(schema: schema, replicaURL: replicaURL, primary: db)
            } else {
                bench.log("pg_replica: skipped (set DICRECORD_POSTGRES_REPLICA_URL to a streaming replica of DICRECORD_POSTGRES_URL)")
            }
        }
        if selected("pg_insert") {
            let clear = { try? raw.exec("TRUNCATE bench_items") }
            try bench.workload("pg_insert") { w in
                w.measure("raw", setUp: { clear() }) {
                    try raw.exec("BEGIN")
                    for n in 1...rows { try raw.insert(Int64(n), Int64(n * 7), Double(n) / 3, "item \(n)") }
                    try raw.exec("COMMIT")
                    return rows
                }
                // The same rows in libpq's pipeline mode (what DicRecord's batch does), 256 per sync.
                w.measure("raw pipelined", setUp: { clear() }) {
                    try raw.exec("BEGIN")
                    var n = 1
                    while n <= rows {
                        let end = min(n + 255, rows)
                        try raw.pipeline { send in
                            for k in n...end { send(Int64(k), Int64(k * 7), Double(k) / 3, "item \(k)") }
                        }
                        n = end + 1
                    }
                    try raw.exec("COMMIT")
                    return rows
                }
                w.measure("dicrecord batch(sql, rows)", setUp: { clear() }) {
                    try db.batch("INSERT INTO bench_items (id, i, r, t) VALUES (?, ?, ?, ?)",
                                 (1...rows).map { [$0, $0 * 7, Double($0) / 3, "item \($0)"] }).count
                }
            }
        }
    }

    /// Reads on a replica next to reads on the primary ("raw": libpq on the replica), and
    /// write-then-read rounds ("raw": libpq on the primary) with
    /// read-your-writes (the WAL position taken after each write, the replica asked before each
    /// read) next to the same rounds on a config without replicas.
    private func replicaWorkload(schema: String, replicaURL: String, primary db: Db) throws {
        func inSchema(_ url: String) -> String { url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)" }
        let replicated = try DbContext(postgres: inSchema(url), replicas: [inSchema(replicaURL)], configName: "pgr")
        try replicated.start()
        defer { replicated.stop() }
        let rdb = Db.use("pgr")
        // Wait until the replica has the table (and this context has written nothing).
        let deadline = Date(timeIntervalSinceNow: 30)
        while (try? rdb.queryFirst("select pg_is_in_recovery() from bench_items limit 1", as: Bool.self)) != true {
            guard Date() < deadline else { throw BenchError("the replica never caught up") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        let raw = try RawPostgres(url: inSchema(replicaURL))
        defer { raw.close() }
        let ids = (0..<lookups).map { ($0 &* 7_919) % rows + 1 }
        try bench.workload("pg_replica_reads") { w in
            w.measure("raw") {
                var sum = 0
                for id in ids {
                    sum &+= try raw.query(Self.lookupSQL.replacingOccurrences(of: "?", with: "$1"), [Int64(id)]) { result, _ in
                        RawPostgres.checksum(result, 0)
                    }
                }
                return sum
            }
            w.measure("dicrecord findById, replicas (on the replica)") {
                var sum = 0
                for id in ids { sum &+= Self.checksum(try rdb.findById("bench_items", id, columns: "id, i, r, t")!) }
                return sum
            }
            w.measure("dicrecord findById, primary only") {
                var sum = 0
                for id in ids { sum &+= Self.checksum(try db.findById("bench_items", id, columns: "id, i, r, t")!) }
                return sum
            }
        }
        let rounds = config.quick ? 100 : 2_000
        let rawPrimary = try RawPostgres(url: inSchema(url))
        defer { rawPrimary.close() }
        try bench.workload("pg_replica_write_then_read") { w in
            w.measure("raw") {
                var sum = 0
                for n in 1...rounds {
                    try rawPrimary.exec("UPDATE bench_items SET i = \(n) WHERE id = 1")
                    sum &+= try rawPrimary.query("SELECT i FROM bench_items WHERE id = $1", [1]) { result, _ in
                        Int(Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, 0, 0)).loadUnaligned(as: Int64.self)))
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

    static func checksum(_ r: Record) -> Int {
        let id: Int? = r.id, i: Int? = r.i, real: Double? = r.r, t: String? = r.t
        return (id ?? 0) &+ (i ?? 0) &+ Int(real ?? 0) &+ (t?.utf8.count ?? 0)
    }
}

/// libpq used directly: one connection, statements prepared once, binary results.
final class RawPostgres {
    let handle: OpaquePointer
    private var prepared: Set<String> = []

    init(url: String) throws {
        guard let handle = PQconnectdb(url), PQstatus(handle) == CONNECTION_OK else {
            throw BenchError("cannot connect to \(url)")
        }
        self.handle = handle
    }

    func close() { PQfinish(handle) }

    func exec(_ sql: String) throws {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw BenchError(String(cString: PQerrorMessage(handle)))
        }
    }

    private func prepare(_ sql: String, types: [Oid]) throws -> String {
        let name = "s\(abs(sql.hashValue))"
        if prepared.insert(name).inserted {
            let result = PQprepare(handle, name, sql, Int32(types.count), types)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchError(String(cString: PQerrorMessage(handle))) }
        }
        return name
    }

    /// Runs a prepared query with int8 arguments (binary), binary results; `read` gets the result and its row count.
    func query<T>(_ sql: String, _ arguments: [Int64], _ read: (OpaquePointer, Int) throws -> T) throws -> T {
        let name = try prepare(sql, types: Array(repeating: 20, count: arguments.count))
        var values = arguments.map { $0.bigEndian }
        let result = values.withUnsafeMutableBytes { bytes -> OpaquePointer? in
            let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
            let pointers: [UnsafePointer<CChar>?] = (0..<arguments.count).map { UnsafePointer(base! + 8 * $0) }
            let lengths = [Int32](repeating: 8, count: arguments.count), formats = [Int32](repeating: 1, count: arguments.count)
            return PQexecPrepared(handle, name, Int32(arguments.count), pointers, lengths, formats, 1)
        }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_TUPLES_OK, let result else { throw BenchError(String(cString: PQerrorMessage(handle))) }
        return try read(result, Int(PQntuples(result)))
    }

    /// Sends the inserts `body` hands to `send` in pipeline mode, then one sync, and reads every result.
    func pipeline(_ body: ((Int64, Int64, Double, String) -> Void) -> Void) throws {
        let name = try prepare("INSERT INTO bench_items (id, i, r, t) VALUES ($1, $2, $3, $4)", types: [20, 20, 701, 25])
        guard PQenterPipelineMode(handle) == 1 else { throw BenchError(String(cString: PQerrorMessage(handle))) }
        defer { PQexitPipelineMode(handle) }
        var sent = 0
        body { id, i, r, t in
            var a = id.bigEndian, b = i.bigEndian, c = r.bitPattern.bigEndian
            withUnsafeBytes(of: &a) { a in withUnsafeBytes(of: &b) { b in withUnsafeBytes(of: &c) { c in
                t.withCString { text in
                    let pointers: [UnsafePointer<CChar>?] = [a.baseAddress!.assumingMemoryBound(to: CChar.self), b.baseAddress!.assumingMemoryBound(to: CChar.self),
                                                            c.baseAddress!.assumingMemoryBound(to: CChar.self), text]
                    if PQsendQueryPrepared(handle, name, 4, pointers, [8, 8, 8, 0], [1, 1, 1, 0], 1) == 1 { sent += 1 }
                }
            } } }
        }
        guard PQpipelineSync(handle) == 1 else { throw BenchError(String(cString: PQerrorMessage(handle))) }
        for _ in 0..<sent {
            guard let result = PQgetResult(handle) else { throw BenchError(String(cString: PQerrorMessage(handle))) }
            let status = PQresultStatus(result)
            PQclear(result)
            guard status == PGRES_COMMAND_OK else { throw BenchError(String(cString: PQerrorMessage(handle))) }
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        while let result = PQgetResult(handle) {
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
    }

    func insert(_ id: Int64, _ i: Int64, _ r: Double, _ t: String) throws {
        let name = try prepare("INSERT INTO bench_items (id, i, r, t) VALUES ($1, $2, $3, $4)", types: [20, 20, 701, 25])
        var a = id.bigEndian, b = i.bigEndian, c = r.bitPattern.bigEndian
        let result = withUnsafeBytes(of: &a) { a in withUnsafeBytes(of: &b) { b in withUnsafeBytes(of: &c) { c in
            t.withCString { text -> OpaquePointer? in
                let pointers: [UnsafePointer<CChar>?] = [a.baseAddress!.assumingMemoryBound(to: CChar.self), b.baseAddress!.assumingMemoryBound(to: CChar.self),
                                                        c.baseAddress!.assumingMemoryBound(to: CChar.self), text]
                return PQexecPrepared(handle, name, 4, pointers, [8, 8, 8, 0], [1, 1, 1, 0], 1)
            }
        } } }
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchError(String(cString: PQerrorMessage(handle))) }
    }

    /// The checksum of row `row` of a binary result of (id, i, r, t), as `PostgresBenchmarks.checksum` computes it.
    static func checksum(_ result: OpaquePointer, _ row: Int) -> Int {
        func int8(_ column: Int32) -> Int64 {
            Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, Int32(row), column)).loadUnaligned(as: Int64.self))
        }
        let real = Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(PQgetvalue(result, Int32(row), 2)).loadUnaligned(as: UInt64.self)))
        let text = String(decoding: UnsafeRawBufferPointer(start: PQgetvalue(result, Int32(row), 3), count: Int(PQgetlength(result, Int32(row), 3))), as: UTF8.self)
        return Int(int8(0)) &+ Int(int8(1)) &+ Int(real) &+ text.utf8.count
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
