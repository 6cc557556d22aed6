// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "DicRecord",
    // Synchronization.Mutex (the lock inside Record and the registries) needs these releases.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "DicRecord", targets: ["DicRecord"]),
        .executable(name: "tour", targets: ["Tour"]),
        .executable(name: "dicrecord", targets: ["dicrecord"]),
        .executable(name: "multi-database", targets: ["MultiDatabase"]),
        .executable(name: "custom-converter", targets: ["CustomConverter"]),
        .executable(name: "migrations", targets: ["Migrations"]),
        .executable(name: "relations", targets: ["Relations"]),
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
        .executableTarget(name: "Tour", dependencies: ["DicRecord"], path: "Samples/Tour"),
        .executableTarget(
            name: "dicrecord",
            dependencies: ["DicRecord", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Samples/dicrecord"
        ),
        .executableTarget(name: "MultiDatabase", dependencies: ["DicRecord"], path: "Samples/MultiDatabase"),
        .executableTarget(name: "CustomConverter", dependencies: ["DicRecord"], path: "Samples/CustomConverter"),
        .executableTarget(name: "Migrations", dependencies: ["DicRecord"], path: "Samples/Migrations"),
        .executableTarget(name: "Relations", dependencies: ["DicRecord"], path: "Samples/Relations"),
        .testTarget(name: "DicRecordConvertersTests", dependencies: ["DicRecordConverters"]),
        // A child process for the crash-consistency and two-process tests (it is killed mid-write).
        .executableTarget(name: "CrashWriter", dependencies: ["DicRecord"], path: "Tests/CrashWriter"),
        .testTarget(
            name: "DicRecordTests",
            dependencies: [
                "DicRecord",
                "CrashWriter",
                "dicrecord",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
