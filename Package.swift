// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "DicRecord",
    // Synchronization.Mutex (the lock inside Record and the registries) needs these releases.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    // The library is the only product: an app that depends on it resolves swift-log alone. The tool and
    // the samples are executable targets, which `swift run NAME` runs in this package only.
    products: [
        .library(name: "DicRecord", targets: ["DicRecord"]),
        // PostgreSQL behind the same API; only its users build and link libpq.
        .library(name: "DicRecordPostgres", targets: ["DicRecordPostgres"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite3"])]
        ),
        .systemLibrary(
            name: "CPostgreSQL",
            path: "Sources/CPostgreSQL",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "DicRecordConverters", path: "Converters"),
        .target(
            name: "DicRecord",
            dependencies: [
                "CSQLite",
                "DicRecordConverters",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/DicRecord"
        ),
        .target(name: "DicRecordPostgres", dependencies: ["DicRecord", "CPostgreSQL"], path: "Sources/DicRecordPostgres"),
        .executableTarget(name: "tour", dependencies: ["DicRecord"], path: "Samples/Tour"),
        .executableTarget(
            name: "dicrecord",
            dependencies: ["DicRecord", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/dicrecord"
        ),
        .executableTarget(name: "multi-database", dependencies: ["DicRecord"], path: "Samples/MultiDatabase"),
        .executableTarget(name: "custom-converter", dependencies: ["DicRecord"], path: "Samples/CustomConverter"),
        .executableTarget(name: "migrations", dependencies: ["DicRecord"], path: "Samples/Migrations"),
        .executableTarget(name: "relations", dependencies: ["DicRecord"], path: "Samples/Relations"),
        .executableTarget(name: "postgres", dependencies: ["DicRecord", "DicRecordPostgres"], path: "Samples/Postgres"),
        .executableTarget(name: "postgres-replicas", dependencies: ["DicRecord", "DicRecordPostgres"], path: "Samples/PostgresReplicas"),
        .testTarget(name: "DicRecordConvertersTests", dependencies: ["DicRecordConverters"]),
        // A child process for the crash-consistency and two-process tests (it is killed mid-write).
        .executableTarget(name: "CrashWriter", dependencies: ["DicRecord"], path: "Tests/CrashWriter"),
        // A child process that StopRaceValgrindTests runs under valgrind: stop() while calls run.
        .executableTarget(name: "stop-race", dependencies: ["DicRecord"], path: "Tests/StopRace"),
        .testTarget(
            name: "DicRecordTests",
            dependencies: [
                "DicRecord",
                "DicRecordPostgres",
                "CrashWriter",
                "dicrecord",
                "stop-race",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
