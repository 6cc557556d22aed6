import Foundation
import Testing
@testable import DicRecord
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Crash consistency: the CrashWriter child (Tests/CrashWriter) is killed with SIGKILL mid-write,
// again and again, and the file must still be a sound database holding every batch the child
// reported committed. And two processes writing one file at the same time both finish.

/// A deterministic generator, so that a failing run can be replayed with its seed.
private func sendSigkill(_ pid: Int32) {
    _ = kill(pid, SIGKILL)
}

/// A CrashWriter process whose stdout and stderr are collected by reader threads.
private final class Child: @unchecked Sendable {
    let process = Process()
    private let condition = NSCondition()
    private var output = Data()        // guarded by condition
    private var errors = Data()        // guarded by condition
    private var openPipes = 2          // guarded by condition
    private var exited = false         // guarded by condition

    init(_ executable: URL, _ arguments: [String]) throws {
        process.executableURL = executable
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [condition] _ in
            condition.lock()
            self.exited = true
            condition.broadcast()
            condition.unlock()
        }
        try process.run()
        drain(out.fileHandleForReading, isError: false)
        drain(err.fileHandleForReading, isError: true)
    }

    private func drain(_ handle: FileHandle, isError: Bool) {
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                condition.lock()
                if chunk.isEmpty { openPipes -= 1 } else if isError { errors.append(chunk) } else { output.append(chunk) }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { return }
            }
        }.start()
    }

    /// The complete lines the child wrote to stdout so far.
    var lines: [String] {
        condition.lock()
        defer { condition.unlock() }
        var text = String(decoding: output, as: UTF8.self)
        if let lastNewline = text.lastIndex(of: "\n") {
            text = String(text[..<lastNewline])
        } else {
            return []
        }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    var standardError: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: errors, as: UTF8.self)
    }

    /// Waits until stdout holds a complete line or the child ended; false after `timeout` (a watchdog).
    func waitForFirstLine(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !output.contains(UInt8(ascii: "\n")) && !exited {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    /// Waits until the child has exited and both pipes reached end of file; false after `timeout`.
    func waitForExit(timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !exited || openPipes > 0 {
            if !condition.wait(until: deadline) { return false }
        }
        return true
    }

    var isRunning: Bool {
        condition.lock()
        defer { condition.unlock() }
        return !exited
    }

    func kill() {
        // Only while it runs: after exit its pid may belong to another process.
        if isRunning { sendSigkill(process.processIdentifier) }
    }

    var wasKilled: Bool { process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL }
}

@Suite("Crash consistency: SIGKILL mid-write, two processes on one file")
struct CrashConsistencyTests {
    /// Generous limit for anything a child does; reaching it fails the test (it is a hang), never a timing check.
    private static let watchdog: Double = 60

    /// The CrashWriter built next to the test binary, or nil with the places looked at.
    private static func crashWriter() -> (url: URL?, searched: [String]) {
        var folders: [URL] = []
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
        var folder = binary.deletingLastPathComponent()
        // Up a few levels too: on Apple platforms the binary sits inside an .xctest bundle.
        for _ in 0..<4 {
            folders.append(folder)
            folder = folder.deletingLastPathComponent()
        }
        folders.append(Bundle.main.bundleURL)
        folders.append(Bundle.main.bundleURL.deletingLastPathComponent())
        let candidates = folders.map { $0.appendingPathComponent("CrashWriter") }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return (found, candidates.map(\.path))
    }

    private static func requireCrashWriter() throws -> URL {
        let (url, searched) = crashWriter()
        return try #require(url, "CrashWriter executable not found (build with `swift build --build-tests`); looked at: \(searched.joined(separator: ", "))")
    }

    /// Opens `path` with a context of its own, as a fresh process would, and runs `body` on it.
    private static func inspect<T>(_ path: String, _ body: (Db) throws -> T) throws -> T {
        try DbContext.withIsolatedRegistry {
            let context = try DbContext(path: path, configName: "inspect")
            try context.start()
            defer { context.stop() }
            return try body(Db.use("inspect"))
        }
    }

    @Test func killedMidBatchTheFileKeepsEveryCommittedBatchWhole() throws {
        let executable = try Self.requireCrashWriter()
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("crash.sqlite").path

        let seed = ProcessInfo.processInfo.environment["DICRECORD_CRASH_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        print("CrashConsistencyTests: seed \(seed) (replay with DICRECORD_CRASH_SEED=\(seed))")
        var random = SplitMix64(seed: seed)

        var reported = Set<Int>()
        var killedWhileWriting = 0
        for round in 1...20 {
            let child = try Child(executable, ["batches", path])
            defer { child.kill() }
            // Most rounds kill once writing is under way; every fourth counts from the launch,
            // so that some kills land while the child opens the file (WAL recovery, schema setup).
            if round % 4 != 0 {
                guard child.waitForFirstLine(timeout: Self.watchdog) else {
                    Issue.record("round \(round) (seed \(seed)): CrashWriter reported no commit within \(Self.watchdog) s; stderr: \(child.standardError)")
                    return
                }
            }
            let delay = Int.random(in: 3...200, using: &random)
            Thread.sleep(forTimeInterval: Double(delay) / 1000)
            let runningAtKill = child.isRunning
            child.kill()
            guard child.waitForExit(timeout: Self.watchdog) else {
                Issue.record("round \(round) (seed \(seed)): CrashWriter did not end within \(Self.watchdog) s of SIGKILL")
                return
            }
            guard runningAtKill, child.wasKilled else {
                Issue.record("round \(round) (seed \(seed)): CrashWriter ended by itself (status \(child.process.terminationStatus)); stderr: \(child.standardError)")
                return
            }
            if round % 4 != 0 { killedWhileWriting += 1 }
            let lines = child.lines
            let batches = lines.compactMap { Int($0) }
            #expect(batches.count == lines.count, "round \(round): unexpected output \(lines.filter { Int($0) == nil })")
            reported.formUnion(batches)

            let (integrity, counts) = try Self.inspect(path) { db -> (String?, [Int: Int]) in
                let integrity = try db.queryString("PRAGMA integrity_check")
                guard try db.queryInt("select count(*) from sqlite_master where name = 'crash_batch'") == 1 else { return (integrity, [:]) }
                var counts: [Int: Int] = [:]
                for row in try db.find("select batch, count(*) as n from crash_batch group by batch") {
                    counts[DbSuiteKit.int(row, "batch") ?? -1] = DbSuiteKit.int(row, "n")
                }
                return (integrity, counts)
            }
            #expect(integrity == "ok", "round \(round) (seed \(seed)): integrity_check says \(integrity ?? "nothing")")
            let total = counts.values.reduce(0, +)
            #expect(total % 100 == 0, "round \(round) (seed \(seed)): \(total) rows, not whole batches")
            let partial = counts.filter { $0.value != 100 }
            #expect(partial.isEmpty, "round \(round) (seed \(seed)): batches not of 100 rows: \(partial)")
            let missing = reported.subtracting(counts.keys)
            #expect(missing.isEmpty, "round \(round) (seed \(seed)): batches reported committed but missing: \(missing.sorted())")
            // Batches are numbered on from the file's last one: no gaps.
            if let last = counts.keys.max() {
                #expect(counts.count == last, "round \(round) (seed \(seed)): batch numbers have gaps")
            }
            if !partial.isEmpty || !missing.isEmpty || integrity != "ok" { return }
        }
        #expect(killedWhileWriting == 15)
        #expect(!reported.isEmpty)
    }

    @Test func twoProcessesInsertingIntoOneFileBothFinishWithEveryRow() throws {
        let executable = try Self.requireCrashWriter()
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("shared.sqlite").path

        let a = try Child(executable, ["rows", path, "1000", "A"])
        let b = try Child(executable, ["rows", path, "1000", "B"])
        defer {
            a.kill()
            b.kill()
        }
        for (tag, child) in [("A", a), ("B", b)] {
            guard child.waitForExit(timeout: 120) else {
                Issue.record("CrashWriter rows \(tag) did not finish within 120 s (a hang); killed. stderr: \(child.standardError)")
                return
            }
            #expect(child.process.terminationReason == .exit && child.process.terminationStatus == 0,
                    "CrashWriter rows \(tag) failed with status \(child.process.terminationStatus): \(child.standardError)")
            #expect(child.lines == ["done"], "CrashWriter rows \(tag) printed \(child.lines)")
        }
        let (integrity, byTag, distinct) = try Self.inspect(path) { db in
            (try db.queryString("PRAGMA integrity_check"),
             try db.find("select tag, count(*) as n from crash_rows group by tag order by tag")
                .map { "\(DbSuiteKit.string($0, "tag") ?? "?")=\(DbSuiteKit.int($0, "n") ?? -1)" },
             try db.queryInt("select count(*) from (select distinct tag, n from crash_rows)"))
        }
        #expect(integrity == "ok")
        #expect(byTag == ["A=1000", "B=1000"])
        #expect(distinct == 2000)          // each (tag, n) exactly once
    }
}
