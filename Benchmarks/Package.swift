// swift-tools-version: 6.0
import PackageDescription

// A package of its own so that GRDB never reaches DicRecord's users.
let package = Package(
    name: "DicRecordBenchmarks",
    platforms: [.macOS(.v15), .iOS(.v18)],
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
        // The raw libpq baseline for the PostgreSQL workloads.
        .systemLibrary(
            name: "CPostgreSQLBench",
            path: "Sources/CPostgreSQLBench",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .executableTarget(
            name: "bench",
            dependencies: [
                "CSQLiteBench",
                "CPostgreSQLBench",
                .product(name: "DicRecord", package: "DicRecord"),
                .product(name: "DicRecordPostgres", package: "DicRecord"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Sources/bench"
        ),
    ],
    swiftLanguageModes: [.v6]
)
