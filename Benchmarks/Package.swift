// swift-tools-version: 6.0
import PackageDescription

// A package of its own so that GRDB never reaches DicRecord's users. The PostgreSQL workloads
// (raw libpq, PostgresNIO, Fluent, DicRecord) are the package in ./Postgres.
let package = Package(
    name: "DicRecordBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
    // The timing harness and the report, shared with the PostgreSQL benchmarks (./Postgres).
    products: [.library(name: "BenchHarness", targets: ["BenchHarness"])],
    dependencies: [
        .package(name: "DicRecord", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The raw C baseline talks to the system SQLite directly.
        .systemLibrary(
            name: "CSQLiteBench",
            path: "Sources/CSQLiteBench",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        .systemLibrary(name: "CMallocTrim", path: "Sources/CMallocTrim"),
        .target(name: "BenchHarness", dependencies: ["CMallocTrim"], path: "Sources/BenchHarness"),
        .executableTarget(
            name: "bench",
            dependencies: [
                "CSQLiteBench",
                "BenchHarness",
                .product(name: "DicRecord", package: "DicRecord"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
