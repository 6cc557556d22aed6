import Foundation
import Testing
@testable import DicRecord
import DicRecordPostgres

/// A fresh database for one test: a temporary folder, an isolated context registry (so tests
/// running in parallel never share "main"), and a context named "main" started in it. Every
/// statement the context runs is recorded in `statements`.
final class TestDatabase: Sendable {
    let folder: URL
    let context: DbContext
    let engine: Engine
    private let log = SqlLog()
    /// The PostgreSQL schema of its own (dropped after), for an engine's database.
    private let scratch: PostgresServer.Scratch?
    /// Where the context connects, for a PostgreSQL database (a second context can open it too).
    let postgresURL: String?

    var path: String { context.path }
    var db: Db { Db.use(context.configName) }
    var statements: [String] { log.statements }

    init(configName: String = "main", options: DbContext.Options = DbContext.Options(), inMemory: Bool = false,
         engine: Engine = .sqlite) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-tests-\(UUID().uuidString)")
        self.engine = engine
        var options = options
        let log = self.log
        let previous = options.onSql
        options.onSql = { trace in
            log.append(trace.sql)
            previous?(trace)
        }
        switch engine {
        case .sqlite:
            scratch = nil
            postgresURL = nil
            context = inMemory
                ? try DbContext.inMemory(configName: configName, options: options)
                : try DbContext(path: folder.appendingPathComponent("db/test.sqlite").path, configName: configName, options: options)
        case .postgres:
            let scratch = try PostgresServer.scratch()
            self.scratch = scratch
            postgresURL = PostgresServer.url(searchPath: scratch.schema)
            do {
                context = try DbContext(postgres: postgresURL ?? "", configName: configName, options: options)
            } catch {
                scratch.finish()
                throw error
            }
        }
    }

    deinit { scratch?.finish() }

    /// Runs `body` inside an isolated registry with the context started, then stops it and
    /// removes the folder.
    func run<T>(_ body: (TestDatabase) throws -> T) throws -> T {
        try DbContext.withIsolatedRegistry {
            try context.start()
            defer {
                context.stop()
                try? FileManager.default.removeItem(at: folder)
            }
            return try body(self)
        }
    }

    func clearLog() { log.clear() }

    /// A new, unstarted context on this test's database (the same file, or the same PostgreSQL schema).
    func reopen(configName: String = "main", options: DbContext.Options = DbContext.Options()) throws -> DbContext {
        switch engine {
        case .sqlite: try DbContext(path: path, configName: configName, options: options)
        case .postgres: try DbContext(postgres: postgresURL ?? "", configName: configName, options: options)
        }
    }
}

/// Convenience: `try withDatabase { t in ... }`.
func withDatabase<T>(configName: String = "main", options: DbContext.Options = DbContext.Options(), inMemory: Bool = false,
                     engine: Engine = .sqlite, _ body: (TestDatabase) throws -> T) throws -> T {
    try TestDatabase(configName: configName, options: options, inMemory: inMemory, engine: engine).run(body)
}

final class SqlLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ sql: String) { lock.lock(); items.append(sql); lock.unlock() }
    func clear() { lock.lock(); items.removeAll(); lock.unlock() }
    var statements: [String] { lock.lock(); defer { lock.unlock() }; return items }
}

extension TestDatabase {
    /// The async form of `run(_:)`.
    func run<T>(_ body: (TestDatabase) async throws -> T) async throws -> T {
        try await DbContext.withIsolatedRegistry {
            try context.start()
            defer {
                context.stop()
                try? FileManager.default.removeItem(at: folder)
            }
            return try await body(self)
        }
    }
}

/// The async form of `withDatabase`.
func withDatabase<T>(configName: String = "main", options: DbContext.Options = DbContext.Options(), inMemory: Bool = false,
                     engine: Engine = .sqlite, _ body: (TestDatabase) async throws -> T) async throws -> T {
    try await TestDatabase(configName: configName, options: options, inMemory: inMemory, engine: engine).run(body)
}

/// How many times longer the ThreadSanitizer build (`.ci/run` passes -Xswiftc -DDICRECORD_TSAN)
/// may take: it runs 5-15x slower. The suites it runs scale their watchdogs and time limits by it.
#if DICRECORD_TSAN
let sanitizerSlowdown = 10
#else
let sanitizerSlowdown = 1
#endif

/// Runs `body` and fails the test if it has not finished after `seconds` (a hang shows up as a
/// failure instead of a stuck run). The stuck work is left behind; the test returns.
func withWatchdog(seconds: Double, _ body: @escaping @Sendable () async throws -> Void,
                  sourceLocation: SourceLocation = #_sourceLocation) async throws {
    let outcome = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
        let once = Once()
        Task {
            do {
                try await body()
                if once.claim() { continuation.resume(returning: true) }
            } catch {
                if once.claim() { continuation.resume(throwing: error) }
            }
        }
        Task {
            try? await Task.sleep(for: .seconds(seconds))
            if once.claim() { continuation.resume(returning: false) }
        }
    }
    if !outcome {
        Issue.record("watchdog: the work did not finish within \(seconds) s (deadlock or hang)", sourceLocation: sourceLocation)
    }
}

final class Once: @unchecked Sendable {
    private let lock = NSLock()
    private var claimed = false
    func claim() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        if claimed { return false }
        claimed = true
        return true
    }
}

/// SplitMix64: a tiny seeded generator, so a failing run can be repeated; `stream` gives each
/// iteration of a loop its own sequence, so one input can be replayed alone.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64, stream: UInt64 = 0) {
        state = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        _ = next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func chance(_ oneIn: Int) -> Bool { Int.random(in: 0..<oneIn, using: &self) == 0 }
    mutating func pick<T>(_ items: [T]) -> T { items.randomElement(using: &self)! }
}

/// An executable target of this package (`dicrecord`, `stop-race`), built next to the test binary
/// by `swift build --build-tests`.
func builtExecutable(_ name: String) throws -> URL {
    var folders: [URL] = []
    var folder = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.deletingLastPathComponent()
    // Up a few levels too: on Apple platforms the binary sits inside an .xctest bundle.
    for _ in 0..<4 {
        folders.append(folder)
        folder = folder.deletingLastPathComponent()
    }
    folders.append(Bundle.main.bundleURL)
    let candidates = folders.map { $0.appendingPathComponent(name) }
    let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    return try #require(found, "\(name) executable not found (build with `swift build --build-tests`); looked at: \(candidates.map(\.path))")
}

/// A finished child process: its exit status and both outputs.
struct ProcessRun: Sendable {
    let status: Int32
    let output: Data
    let errors: String
    /// True when it was killed after its time limit.
    let timedOut: Bool
    var text: String { String(decoding: output, as: UTF8.self) }
}

/// Runs `executable` with `arguments` in `folder` (for its scratch files too) and waits, killing it
/// after `timeout` seconds. Outputs go through files, so that neither pipe can fill up and stall it.
func runProcess(_ executable: URL, _ arguments: [String], scratch folder: URL, timeout: Double = 120) throws -> ProcessRun {
    let id = UUID().uuidString
    let outURL = folder.appendingPathComponent(".out-\(id)"), errURL = folder.appendingPathComponent(".err-\(id)")
    try Data().write(to: outURL)
    try Data().write(to: errURL)
    defer {
        try? FileManager.default.removeItem(at: outURL)
        try? FileManager.default.removeItem(at: errURL)
    }
    let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let deadline = Date(timeIntervalSinceNow: timeout)
    while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    let timedOut = process.isRunning
    if timedOut { process.terminate() }
    process.waitUntilExit()
    try out.close()
    try err.close()
    return ProcessRun(status: process.terminationStatus, output: try Data(contentsOf: outURL),
                      errors: String(decoding: try Data(contentsOf: errURL), as: UTF8.self), timedOut: timedOut)
}

/// A converter that replaces Int: it stores ten times the value (a context registers it to see
/// that its own converter, not the built-in rule, binds and reads).
struct TenfoldInt: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: Int) throws -> DatabaseValue { .integer(Int64(value) * 10) }
    func decode(_ value: DatabaseValue) throws -> Int { try IntegerConverter<Int>().decode(value) / 10 }
}
