// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "DicRecord",
    // Synchronization.Mutex (the lock inside Record and the registries) needs these releases.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "DicRecord", targets: ["DicRecord"]),
        .executable(name: "tour", targets: ["Tour"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
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
        .testTarget(name: "DicRecordConvertersTests", dependencies: ["DicRecordConverters"]),
        // A child process for the crash-consistency and two-process tests (it is killed mid-write).
        .executableTarget(name: "CrashWriter", dependencies: ["DicRecord"], path: "Tests/CrashWriter"),
        .testTarget(
            name: "DicRecordTests",
            dependencies: [
                "DicRecord",
                "CrashWriter",
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
