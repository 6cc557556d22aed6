import BenchHarness
import CPostgreSQLBench
import Foundation

/// libpq used directly: one connection, statements prepared once, binary results.
final class RawPostgres {
    let handle: OpaquePointer
    /// The name each prepared SQL text got.
    private var prepared: [String: String] = [:]

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
        if let name = prepared[sql] { return name }
        let name = "s\(prepared.count)"
        prepared[sql] = name
        do {
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

    /// The checksum of row `row` of a binary result of (id, i, r, t).
    static func checksum(_ result: OpaquePointer, _ row: Int) -> Int {
        let real = Double(bitPattern: UInt64(bigEndian: UnsafeRawPointer(PQgetvalue(result, Int32(row), 2)).loadUnaligned(as: UInt64.self)))
        let text = String(decoding: UnsafeRawBufferPointer(start: PQgetvalue(result, Int32(row), 3), count: Int(PQgetlength(result, Int32(row), 3))), as: UTF8.self)
        return rowChecksum(id: int8(result, row, 0), i: int8(result, row, 1), r: real, t: text)
    }
}

/// Raw libpq's implementations of the workloads.
extension RawPostgres {
    static func int8(_ result: OpaquePointer, _ row: Int, _ column: Int32) -> Int {
        Int(Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, Int32(row), column)).loadUnaligned(as: Int64.self)))
    }

    /// The sum of the row checksums of a binary (id, i, r, t) result.
    static func checksum(_ result: OpaquePointer, rows: Int) -> Int {
        (0..<rows).reduce(0) { $0 &+ checksum(result, $1) }
    }

    func fetch(_ w: Workload) {
        w.measure("raw") {
            try self.query(Sql.dollar(Sql.fetch), []) { result, count in RawPostgres.checksum(result, rows: count) }
        }
    }

    func lookup(_ w: Workload, ids: [Int]) {
        w.measure("raw") {
            var sum = 0
            for id in ids {
                sum &+= try self.query(Sql.dollar(Sql.lookup), [Int64(id)]) { result, _ in RawPostgres.checksum(result, 0) }
            }
            return sum
        }
    }

    /// Pipelined (what DicRecord's batch does) is "raw"; one INSERT per round trip is shown for scale.
    func insert(_ w: Workload, rows: Int, clear: @escaping () -> Void) {
        w.measure("raw", setUp: clear) {
            try self.exec("BEGIN")
            var n = 1
            while n <= rows {
                let end = min(n + 255, rows)
                try self.pipeline { send in
                    for k in n...end { let row = fixtureRow(k); send(Int64(row.id), Int64(row.i), row.r, row.t) }
                }
                n = end + 1
            }
            try self.exec("COMMIT")
            return rows
        }
        w.measure("raw, one INSERT per round trip", setUp: clear) {
            try self.exec("BEGIN")
            for k in 1...rows { let row = fixtureRow(k); try self.insert(Int64(row.id), Int64(row.i), row.r, row.t) }
            try self.exec("COMMIT")
            return rows
        }
    }

    func paginate(_ w: Workload, config: PgConfig) {
        w.measure("raw") {
            var sum = try self.query(Sql.count, []) { result, _ in RawPostgres.int8(result, 0, 0) }
            sum &+= try self.query(Sql.dollar(Sql.page), [Int64(config.pageSize), Int64((config.deepPage - 1) * config.pageSize)]) { result, count in
                RawPostgres.checksum(result, rows: count)
            }
            return sum
        }
    }

    func keyset(_ w: Workload, config: PgConfig) {
        w.measure("raw") {
            var sum = 0, key = config.keysetAfter
            for _ in 0..<config.keysetPages {
                (sum, key) = try self.query(Sql.dollar(Sql.keyset), [Int64(key), Int64(config.pageSize)]) { result, count in
                    (sum &+ RawPostgres.checksum(result, rows: count), RawPostgres.int8(result, count - 1, 0))
                }
            }
            return sum
        }
    }
}
