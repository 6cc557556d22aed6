import Foundation

// swift run -c release --package-path Benchmarks bench [workload…] [--quick] [--only TEXT[,TEXT…]]
//
// --only TEXT[,TEXT…] runs only the implementations whose name contains one of them (to profile one:
// `perf record -g .build/release/bench fetch_positional --only "dicrecord each"`).
//
// Times DicRecord against the raw SQLite C API and GRDB on the workloads of
// ../shared/reference/anchor-benchmarks.md and prints one Markdown table. Exits non-zero when
// two implementations of a workload disagree on their checksum.

let workloads = ["fetch_positional", "fetch_named", "fetch_records", "fetch_mixed", "insert", "lookup_pk", "paginate",
                 "concurrency", "read_during_write", "pg_fetch", "pg_lookup", "pg_insert", "pg_replica"]

var quick = false
var only: [String]?
var chosen: [String] = []
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--quick":
        quick = true
    case "--only":
        only = arguments.popFirst().map { $0.split(separator: ",").map(String.init) }
    case "-h", "--help":
        print("usage: bench [workload…] [--quick] [--only TEXT[,TEXT…]]\nworkloads: \(workloads.joined(separator: " "))")
        exit(0)
    case _ where workloads.contains(argument):
        chosen.append(argument)
    default:
        FileHandle.standardError.write(Data("bench: unknown argument '\(argument)'; workloads: \(workloads.joined(separator: " "))\n".utf8))
        exit(2)
    }
}
let selected = { (workload: String) in chosen.isEmpty || chosen.contains(workload) }

let config = BenchConfig(quick: quick)
let bench = Bench(quick: quick, only: only)
let clock = ContinuousClock()
let start = clock.now
do {
    let fixtures = try Fixtures(config: config)
    defer { fixtures.removeAll() }
    try FetchBenchmarks(bench: bench, fixtures: fixtures).run(selected)
    if selected("insert") { try InsertBenchmarks(bench: bench, config: config).run() }
    if selected("lookup_pk") { try LookupBenchmarks(bench: bench, fixtures: fixtures).run() }
    if selected("paginate") { try PaginateBenchmarks(bench: bench, fixtures: fixtures).run() }
    try ConcurrencyBenchmarks(bench: bench, config: config).run(selected)
    // PostgreSQL: on the server DICRECORD_POSTGRES_URL names (.ci/run starts one), else skipped.
    if selected("pg_fetch") || selected("pg_lookup") || selected("pg_insert") || selected("pg_replica") {
        if let url = ProcessInfo.processInfo.environment["DICRECORD_POSTGRES_URL"], !url.isEmpty {
            let replica = ProcessInfo.processInfo.environment["DICRECORD_POSTGRES_REPLICA_URL"].flatMap { $0.isEmpty ? nil : $0 }
            try PostgresBenchmarks(bench: bench, config: config, url: url, replicaURL: replica).run(selected)
        } else {
            bench.log("pg_*: skipped (set DICRECORD_POSTGRES_URL to a PostgreSQL server to run them)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("bench: \(error)\n".utf8))
    exit(1)
}
Report.print(bench.measurements, config: config, wallTime: clock.now - start)
