import BenchHarness
import Foundation

// swift run -c release --package-path Benchmarks bench [workload…] [--quick] [--only TEXT[,TEXT…]]
//
// --only TEXT[,TEXT…] runs only the implementations whose name contains one of them (to profile one:
// `perf record -g .build/release/bench fetch_positional --only "dicrecord each"`).
//
// Times DicRecord against the raw SQLite C API and GRDB on the workloads of
// ../shared/reference/anchor-benchmarks.md and prints one Markdown table. Exits non-zero when
// two implementations of a workload disagree on their checksum. The PostgreSQL workloads are the
// package in ./Postgres (`bench-pg`).

let workloads = ["fetch_positional", "fetch_named", "fetch_records", "fetch_mixed", "insert", "lookup_pk", "paginate",
                 "concurrency", "read_during_write", "one_task_tx", "observe_insert", "observe_latency", "record_sharing"]

let arguments = BenchArguments(program: "bench", workloads: workloads)
let (quick, only, selected) = (arguments.quick, arguments.only, arguments.selected)

let config = BenchConfig(quick: quick)

// --scaling: cost against table size (ScalingBenchmarks.swift), written to scaling.csv and scaling.svg.
if arguments.scaling {
    do {
        try FileManager.default.createDirectory(at: config.directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: config.directory) }
        let points = try ScalingBenchmarks(config: config).run()
        try ScalingBenchmarks.csv(points).write(toFile: "scaling.csv", atomically: true, encoding: .utf8)
        let title = "DicRecord scaling, \(ISO8601DateFormatter().string(from: Date())), SQLite \(config.sqliteVersion), release build"
        try ScalingBenchmarks.svg(points, title: title).write(toFile: "scaling.svg", atomically: true, encoding: .utf8)
        print(ScalingBenchmarks.csv(points), terminator: "")
        print("wrote scaling.csv and scaling.svg")
    } catch {
        FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
let bench = Bench(quick: quick, only: only)
let clock = ContinuousClock()
let start = clock.now
var footer: [String] = []
do {
    let fixtures = try Fixtures(config: config)
    defer { fixtures.removeAll() }
    try FetchBenchmarks(bench: bench, fixtures: fixtures).run(selected)
    if selected("insert") { try InsertBenchmarks(bench: bench, config: config).run() }
    if selected("lookup_pk") { try LookupBenchmarks(bench: bench, fixtures: fixtures).run() }
    if selected("paginate") { try PaginateBenchmarks(bench: bench, fixtures: fixtures).run() }
    try ConcurrencyBenchmarks(bench: bench, config: config).run(selected)
    footer = try ObservationBenchmarks(bench: bench, config: config).run(selected)
    if selected("record_sharing") { try SharingBenchmarks(bench: bench, config: config).run() }
} catch {
    FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
    exit(1)
}
Report.print(bench.measurements, title: "DicRecord benchmarks", quick: quick, details: [
    "SQLite \(config.sqliteVersion), release build, file-backed databases, journal DELETE and synchronous FULL for every implementation (DicRecord's default WAL is set to DELETE here)",
    "reads run inside one transaction per call: raw BEGIN…COMMIT, GRDB `DatabaseQueue.read`, DicRecord `Db.transaction`",
    "rows: items \(config.itemRows), people \(config.peopleRows), lookups \(config.peopleRows), inserts \(config.insertRows), paginate \(config.pageRows)",
], footer: footer.map { "observe_latency, " + $0 }, wallTime: clock.now - start)
