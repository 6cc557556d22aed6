import BenchHarness
import CSQLiteBench
import DicRecord
import Foundation
import GRDB

/// `bench --scaling`: how cost grows with the table. A table `grid` of N rows × 10 INTEGER
/// columns (`id` the rowid) at N = 1k, 10k, 100k, 1M, and 10M for `each` and keyset paging; raw
/// C, GRDB and DicRecord on:
/// - fetch: every row into memory, every value read (raw: into an array of `[Int]`);
/// - each: every row streamed, every value read;
/// - insert: N rows in one transaction (a new file);
/// - lookup: min(N, 100,000) point lookups by id, in one transaction;
/// - paginate: the last page of 20 by count + OFFSET (DicRecord `paginate`), and by keyset
///   (`paginate(after:)`).
/// Each point is the best of 3 runs up to 100k rows, 1 run above; peak memory is the timed
/// block's. Writes `scaling.csv` and `scaling.svg` (time per row and peak memory against rows,
/// log scales) to the current directory.
struct ScalingBenchmarks {
    let config: BenchConfig

    struct Point {
        let workload: String
        let implementation: String
        let rows: Int
        /// Rows the timed block handled (lookups made, rows paged over).
        let units: Int
        let seconds: Double
        let peakMiB: Double
        var nanosecondsPerUnit: Double { seconds * 1e9 / Double(units) }
    }

    static let schema = "CREATE TABLE grid (id INTEGER PRIMARY KEY, i1 INTEGER, i2 INTEGER, i3 INTEGER, i4 INTEGER, i5 INTEGER, i6 INTEGER, i7 INTEGER, i8 INTEGER, i9 INTEGER)"
    static let insertSQL = "INSERT INTO grid (id, i1, i2, i3, i4, i5, i6, i7, i8, i9) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"

    func run() throws -> [Point] {
        let sizes = config.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000, 1_000_000]
        let huge = config.quick ? 100_000 : 10_000_000
        var points: [Point] = []
        /// The first implementation's checksum per workload and size: the others must agree.
        var reference: [String: (String, Int)] = [:]
        /// `finish`, when given, runs after the clock stops (closing what the body wrote to) and
        /// gives the checksum in place of the body's result.
        func measure(_ workload: String, _ implementation: String, rows: Int, units: Int, setUp: () throws -> Void = {},
                     finish: (() throws -> Int)? = nil, _ body: () throws -> Int) throws {
            var best = Double.infinity, peak = 0.0, checksum: Int?
            for _ in 0..<(rows <= 100_000 ? 3 : 1) {
                try setUp()
                _ = MemoryMeter.resetPeak()
                let start = ContinuousClock.now
                var sum = try body()
                let elapsed = ContinuousClock.now - start
                if let finish { sum = try finish() }
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                best = min(best, seconds)
                peak = max(peak, Double(MemoryMeter.peakBytes() ?? 0) / 1_048_576)
                checksum = sum
            }
            let key = "\(workload) \(rows)"
            if let (first, expected) = reference[key], expected != checksum {
                throw ChecksumMismatch(workload: key, reference: (first, expected), implementation: implementation, checksum: checksum ?? 0)
            }
            if reference[key] == nil { reference[key] = (implementation, checksum ?? 0) }
            points.append(Point(workload: workload, implementation: implementation, rows: rows, units: units, seconds: best, peakMiB: peak))
            config.log("scaling \(workload) \(implementation) \(rows): \(String(format: "%.4f", best)) s, checksum \(checksum ?? 0)")
        }

        for rows in sizes + [huge] {
            let path = config.path("scaling-\(rows).sqlite")
            try Self.create(at: path, rows: rows)
            defer { for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let raw = try RawDatabase(path: path)
            let queue = try DatabaseQueue(path: path)
            let context = try Fixtures.startContext("scaling", path: path)
            defer { context.stop() }
            let db = Db.use("scaling")
            let full = rows != huge

            // each: streamed, every value read.
            try measure("each", "raw", rows: rows, units: rows) { try raw.transaction { try Self.rawSum(raw, "SELECT * FROM grid") } }
            try measure("each", "grdb", rows: rows, units: rows) {
                try queue.read { db in
                    var sum = 0
                    let rows = try Row.fetchCursor(db, sql: "SELECT * FROM grid")
                    while let row = try rows.next() { for i in 0..<10 { sum &+= row[i] as Int } }
                    return sum
                }
            }
            try measure("each", "dicrecord", rows: rows, units: rows) {
                try db.transaction { db in
                    var sum = 0
                    try db.each("SELECT * FROM grid") { (r: DicRecord.Record) -> Bool in
                        for i in 0..<10 { sum &+= (r[i] as Int?) ?? 0 }
                        return true
                    }
                    return sum
                }
            }
            // keyset: the last page of 20.
            let last = rows - 20
            try measure("keyset", "raw", rows: rows, units: 20) {
                try raw.transaction { try Self.rawSum(raw, "SELECT * FROM grid WHERE id > \(last) ORDER BY id LIMIT 20") }
            }
            try measure("keyset", "dicrecord", rows: rows, units: 20) {
                try db.transaction { db in
                    try Self.sum(db.paginate(after: last, 20, "select *", "from grid").list)
                }
            }
            guard full else { continue }

            // fetch: all rows in memory, every value read.
            try measure("fetch", "raw", rows: rows, units: rows) {
                try raw.transaction {
                    let statement = try raw.prepare("SELECT * FROM grid")
                    defer { sqlite3_finalize(statement) }
                    var all: [[Int]] = []
                    while sqlite3_step(statement) == SQLITE_ROW { all.append((0..<10).map { Int(sqlite3_column_int64(statement, Int32($0))) }) }
                    return all.reduce(0) { $0 &+ $1.reduce(0, &+) }
                }
            }
            try measure("fetch", "grdb", rows: rows, units: rows) {
                try queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM grid").reduce(0) { sum, row in (0..<10).reduce(sum) { $0 &+ (row[$1] as Int) } } }
            }
            try measure("fetch", "dicrecord", rows: rows, units: rows) {
                try db.transaction { db in try db.find("SELECT * FROM grid").reduce(0) { sum, r in (0..<10).reduce(sum) { $0 &+ ((r[$1] as Int?) ?? 0) } } }
            }
            // lookup: point reads by id.
            let lookups = min(rows, 100_000)
            let ids = (0..<lookups).map { k in (48271 &* k &+ 12345) % rows + 1 }
            try measure("lookup", "raw", rows: rows, units: lookups) {
                try raw.transaction {
                    let statement = try raw.prepare("SELECT * FROM grid WHERE id = ?")
                    defer { sqlite3_finalize(statement) }
                    var sum = 0
                    for id in ids {
                        sqlite3_reset(statement)
                        sqlite3_bind_int64(statement, 1, Int64(id))
                        if sqlite3_step(statement) == SQLITE_ROW { sum &+= Int(sqlite3_column_int64(statement, 1)) }
                    }
                    return sum
                }
            }
            try measure("lookup", "grdb", rows: rows, units: lookups) {
                try queue.read { db in
                    let statement = try db.cachedStatement(sql: "SELECT * FROM grid WHERE id = ?")
                    return try ids.reduce(0) { sum, id in sum &+ ((try Row.fetchOne(statement, arguments: [id])?[1] as Int?) ?? 0) }
                }
            }
            try measure("lookup", "dicrecord", rows: rows, units: lookups) {
                try db.transaction { db in try ids.reduce(0) { sum, id in sum &+ ((try db.findById("grid", id)?[1] as Int?) ?? 0) } }
            }
            // paginate: the last page by count + OFFSET.
            try measure("paginate", "raw", rows: rows, units: 20) {
                try raw.transaction {
                    try raw.queryInt("SELECT count(*) FROM grid") &+ Self.rawSum(raw, "SELECT * FROM grid ORDER BY id LIMIT 20 OFFSET \(last)")
                }
            }
            try measure("paginate", "dicrecord", rows: rows, units: 20) {
                try db.transaction { db in
                    let page = try db.paginate(rows / 20, 20, "select *", "from grid order by id")
                    return page.totalRow &+ Self.sum(page.list)
                }
            }
            // insert: N rows into a new file, one transaction; opening and closing are not timed.
            let insertPath = config.path("scaling-insert.sqlite")
            func fresh() throws {
                for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: insertPath + suffix) }
                try RawDatabase(path: insertPath).execute(Self.schema)
            }
            /// The checksum of what an insert wrote: the sum of every value.
            func written() throws -> Int {
                let check = try RawDatabase(path: insertPath)
                return try Self.rawSum(check, "SELECT * FROM grid")
            }
            var rawTarget: RawDatabase?
            try measure("insert", "raw", rows: rows, units: rows, setUp: { try fresh(); rawTarget = try RawDatabase(path: insertPath) },
                        finish: { rawTarget = nil; return try written() }) {
                try Self.fill(rawTarget!, rows: rows)
                return rows
            }
            do {
                let arguments = (1...rows).map { n in GRDB.StatementArguments(Array(repeating: n, count: 10)) }
                var queue: DatabaseQueue?
                try measure("insert", "grdb", rows: rows, units: rows, setUp: { try fresh(); queue = try DatabaseQueue(path: insertPath) },
                            finish: { queue = nil; return try written() }) {
                    try queue!.write { db in
                        let statement = try db.cachedStatement(sql: Self.insertSQL)
                        for row in arguments {
                            statement.setUncheckedArguments(row)
                            try statement.execute()
                        }
                    }
                    return rows
                }
            }
            do {
                let values: [[DatabaseArgument]] = (1...rows).map { Array(repeating: $0, count: 10) }
                var target: DbContext?
                try measure("insert", "dicrecord", rows: rows, units: rows,
                            setUp: { try fresh(); target = try Fixtures.startContext("scaling_insert", path: insertPath) },
                            finish: { target?.stop(); target = nil; return try written() }) {
                    _ = try Db.use("scaling_insert").batch(Self.insertSQL, values)
                    return rows
                }
            }
        }
        return points
    }

    static func create(at path: String, rows: Int) throws {
        for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let db = try RawDatabase(path: path)
        try db.execute(schema)
        try fill(db, rows: rows)
    }

    /// N rows in one transaction: row n holds n in every column.
    static func fill(_ db: RawDatabase, rows: Int) throws {
        try Fixtures.fillTenIntegers(db, insert: insertSQL, rows: rows)
    }

    /// The sum of every value of `records` (the checksum raw's `rawSum` computes).
    static func sum(_ records: [DicRecord.Record]) -> Int {
        records.reduce(0) { sum, r in (0..<10).reduce(sum) { $0 &+ ((r[$1] as Int?) ?? 0) } }
    }

    /// The sum of every value of `sql`'s rows.
    static func rawSum(_ raw: RawDatabase, _ sql: String) throws -> Int {
        let statement = try raw.prepare(sql)
        defer { sqlite3_finalize(statement) }
        var sum = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            for i in 0..<sqlite3_column_count(statement) { sum &+= Int(sqlite3_column_int64(statement, i)) }
        }
        return sum
    }

    // MARK: Output

    static func csv(_ points: [Point]) -> String {
        var out = "workload,implementation,rows,units,seconds,ns_per_unit,peak_mib\n"
        for p in points {
            out += "\(p.workload),\(p.implementation),\(p.rows),\(p.units),\(String(format: "%.6f", p.seconds)),\(String(format: "%.1f", p.nanosecondsPerUnit)),\(String(format: "%.1f", p.peakMiB))\n"
        }
        return out
    }

    /// Small multiples: time per unit for each workload, and peak memory of fetch and each, against
    /// rows; both axes log scale.
    static func svg(_ points: [Point], title: String) -> String {
        let panels: [(String, String, (Point) -> Double)] = [
            ("fetch", "fetch: ns per row", { $0.nanosecondsPerUnit }),
            ("each", "each: ns per row", { $0.nanosecondsPerUnit }),
            ("insert", "insert: ns per row", { $0.nanosecondsPerUnit }),
            ("lookup", "lookup: ns per lookup", { $0.nanosecondsPerUnit }),
            ("paginate", "last page, count + OFFSET: ns per page row", { $0.nanosecondsPerUnit }),
            ("keyset", "last page, keyset: ns per page row", { $0.nanosecondsPerUnit }),
            ("fetch", "fetch: peak MiB", { $0.peakMiB }),
            ("each", "each: peak MiB", { $0.peakMiB }),
        ]
        let colors = ["raw": "#222222", "grdb": "#1f77b4", "dicrecord": "#d62728"]
        let width = 300.0, height = 220.0, columns = 2
        let rowsCount = (panels.count + columns - 1) / columns
        var out = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width) * columns + 20)" height="\(Int(height) * rowsCount + 60)" font-family="sans-serif" font-size="11">
            <rect width="100%" height="100%" fill="white"/>
            <text x="10" y="20" font-size="14">\(title)</text>
            """
        var legendX = 10.0
        for (name, color) in colors.sorted(by: { $0.key > $1.key }) {
            out += "<line x1=\"\(legendX)\" y1=\"38\" x2=\"\(legendX + 20)\" y2=\"38\" stroke=\"\(color)\" stroke-width=\"2\"/><text x=\"\(legendX + 24)\" y=\"42\">\(name)</text>"
            legendX += 90
        }
        for (index, panel) in panels.enumerated() {
            let ox = 10 + Double(index % columns) * width, oy = 50 + Double(index / columns) * height
            let plotX = ox + 50, plotY = oy + 20, plotW = width - 70, plotH = height - 60
            let chosen = points.filter { $0.workload == panel.0 }
            let xs = chosen.map { log10(Double($0.rows)) }, ys = chosen.map { log10(max(panel.2($0), 1e-3)) }
            guard let x0 = xs.min(), let x1 = xs.max(), let y0 = ys.min().map(floor), let y1 = ys.max().map({ ceil($0) }) else { continue }
            let spanX = max(x1 - x0, 1), spanY = max(y1 - y0, 1)
            func px(_ x: Double) -> Double { plotX + (x - x0) / spanX * plotW }
            func py(_ y: Double) -> Double { plotY + plotH - (y - y0) / spanY * plotH }
            out += "<text x=\"\(ox + 10)\" y=\"\(oy + 12)\">\(panel.1)</text>"
            out += "<rect x=\"\(plotX)\" y=\"\(plotY)\" width=\"\(plotW)\" height=\"\(plotH)\" fill=\"none\" stroke=\"#bbbbbb\"/>"
            for decade in stride(from: y0, through: y0 + spanY, by: 1) {
                out += "<line x1=\"\(plotX)\" y1=\"\(py(decade))\" x2=\"\(plotX + plotW)\" y2=\"\(py(decade))\" stroke=\"#eeeeee\"/>"
                out += "<text x=\"\(plotX - 4)\" y=\"\(py(decade) + 4)\" text-anchor=\"end\">\(Self.label(pow(10, decade)))</text>"
            }
            for decade in stride(from: x0, through: x1, by: 1) {
                out += "<text x=\"\(px(decade))\" y=\"\(plotY + plotH + 14)\" text-anchor=\"middle\">\(Self.label(pow(10, decade)))</text>"
            }
            out += "<text x=\"\(plotX + plotW / 2)\" y=\"\(plotY + plotH + 28)\" text-anchor=\"middle\" fill=\"#666666\">rows</text>"
            for (name, color) in colors {
                let line = chosen.filter { $0.implementation == name }.sorted { $0.rows < $1.rows }
                guard !line.isEmpty else { continue }
                let coordinates = line.map { "\(px(log10(Double($0.rows)))),\(py(log10(max(panel.2($0), 1e-3))))" }.joined(separator: " ")
                out += "<polyline points=\"\(coordinates)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"/>"
                for point in line {
                    out += "<circle cx=\"\(px(log10(Double(point.rows))))\" cy=\"\(py(log10(max(panel.2(point), 1e-3))))\" r=\"2.5\" fill=\"\(color)\"/>"
                }
            }
        }
        return out + "</svg>\n"
    }

    static func label(_ value: Double) -> String {
        switch value {
        case 1e6...: "\(Int(value / 1e6))M"
        case 1e3...: "\(Int(value / 1e3))k"
        case 1...: "\(Int(value))"
        default: String(format: "%g", value)
        }
    }
}
