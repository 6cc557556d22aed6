import BenchHarness
import CPostgreSQLBench
import DicRecord
import DicRecordPostgres
import Foundation

// swift run -c release --package-path Benchmarks/Postgres bench-pg [workload…] [--quick] [--only TEXT[,TEXT…]]
//
// The PostgreSQL workloads, side by side in one run: raw libpq (prepared statements, binary
// results), PostgresNIO, Fluent and DicRecord, on the server DICRECORD_POSTGRES_URL names (a fresh
// database is created there and dropped at the end); pg_replica also needs
// DICRECORD_POSTGRES_REPLICA_URL, a streaming replica of it. Prints one Markdown table; exits
// non-zero when two implementations of a workload disagree on their checksum.

let workloads = ["pg_fetch", "pg_lookup", "pg_insert", "pg_paginate", "pg_keyset", "pg_replica"]

let arguments = BenchArguments(program: "bench-pg", workloads: workloads)
if arguments.scaling {
    FileHandle.standardError.write(Data("bench-pg: --scaling is the SQLite benchmark's (bench --scaling)\n".utf8))
    exit(2)
}
let (quick, only, selected) = (arguments.quick, arguments.only, arguments.selected)
let environment = ProcessInfo.processInfo.environment
guard let serverURL = environment["DICRECORD_POSTGRES_URL"], !serverURL.isEmpty else {
    FileHandle.standardError.write(Data("bench-pg: set DICRECORD_POSTGRES_URL to a PostgreSQL server (.ci/postgres-server start DIR prints one)\n".utf8))
    exit(2)
}
let replicaURL = environment["DICRECORD_POSTGRES_REPLICA_URL"].flatMap { $0.isEmpty ? nil : $0 }

let config = PgConfig(quick: quick)
let bench = Bench(quick: quick, only: only)
let clock = ContinuousClock()
let start = clock.now
var serverVersion = "?"
do {
    let admin = try RawPostgres(url: serverURL)
    defer { admin.close() }
    serverVersion = String(cString: PQparameterStatus(admin.handle, "server_version"))
    let database = "dicrecord_bench_\(UInt32.random(in: 0...UInt32.max))"
    try admin.exec("CREATE DATABASE \(database)")
    defer { try? admin.exec("DROP DATABASE \(database) WITH (FORCE)") }
    try PostgresBenchmarks(bench: bench, config: config, url: url(serverURL, database: database),
                           replicaURL: try replicaURL.map { try url($0, database: database) }).run(selected)
} catch {
    FileHandle.standardError.write(Data("bench-pg: \(error)\n".utf8))
    exit(1)
}
Report.print(bench.measurements, title: "DicRecord PostgreSQL benchmarks", quick: quick, details: [
    "PostgreSQL \(serverVersion) on the same machine (loopback TCP, fsync off), release build",
    "raw: libpq, statements prepared once, binary results; PostgresNIO \(Versions.postgresNIO) (PostgresClient); Fluent: fluent-kit \(Versions.fluentKit) + fluent-postgres-driver \(Versions.fluentPostgresDriver)",
    "rows: bench_items \(config.rows), lookups \(config.lookups), inserts \(config.rows), bench_pages \(config.pageRows) (deep page \(config.deepPage) of \(config.pageSize) rows; keyset: \(config.keysetPages) pages one after the other, after key \(config.keysetAfter))",
], wallTime: clock.now - start)

/// The anchors' versions, as Package.swift pins them.
enum Versions {
    static let postgresNIO = "1.33.2", fluentKit = "1.57.0", fluentPostgresDriver = "2.14.0"
}
