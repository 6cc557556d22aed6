// swift-tools-version: 6.0
import PackageDescription

// The PostgreSQL benchmarks: raw libpq, PostgresNIO, Fluent and DicRecord side by side in one run.
// A package of its own (next to the SQLite one in ..) so that the SwiftNIO and Fluent stack, which
// takes minutes to build, never reaches DicRecord's users nor the SQLite benchmarks.
let package = Package(
    name: "DicRecordPostgresBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
    dependencies: [
        .package(name: "DicRecord", path: "../.."),
        .package(name: "DicRecordBenchmarks", path: ".."),
        .package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2"),
        .package(url: "https://github.com/vapor/fluent-kit", exact: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver", exact: "2.14.0"),
    ],
    targets: [
        // The raw baseline: libpq, prepared statements, binary results.
        .systemLibrary(
            name: "CPostgreSQLBench",
            path: "Sources/CPostgreSQLBench",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .executableTarget(
            name: "bench-pg",
            dependencies: [
                "CPostgreSQLBench",
                .product(name: "BenchHarness", package: "DicRecordBenchmarks"),
                .product(name: "DicRecord", package: "DicRecord"),
                .product(name: "DicRecordPostgres", package: "DicRecord"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
            ],
            path: "Sources/bench-pg"
        ),
    ],
    swiftLanguageModes: [.v6]
)
