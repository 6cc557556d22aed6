import Foundation
import Testing

// The README's ```swift blocks are the examples' one home: this suite reads them from README.md and
// builds them as a library user would. The Install block is the `Package.swift` of a scratch
// package (`.build/readme-blocks`, kept between runs so that rebuilds are incremental) that depends
// on this repository by path; each other block is the `main.swift` of an executable target of it,
// and all of them pasted in order are the `main.swift` of the block's own target `MyApp`. Every
// program is built with warnings as errors and run twice in a fresh empty folder.

/// One ```swift block of the README, with the `## ` heading it sits under.
private struct ReadmeBlock: Sendable {
    let section: String
    let text: String
}

/// A finished process: its exit status and both outputs.
private struct Finished: Sendable {
    let status: Int32
    let output: String
    let errors: String
}

/// The scratch package built from the README, and its build's outcome.
private struct BlocksPackage: Sendable {
    let folder: URL
    let blocks: [ReadmeBlock]
    /// Executable name → the README section its main.swift comes from ("" for all blocks in order).
    let programs: [(name: String, section: String)]
    let build: Finished
    let binFolder: URL?
}

private struct ReadmeProblem: Error, CustomStringConvertible {
    let description: String
}

private enum Readme {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func blocks() throws -> [ReadmeBlock] {
        let text = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var blocks: [ReadmeBlock] = []
        var section = ""
        var current: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if var lines = current {
                if line == "```" {
                    blocks.append(ReadmeBlock(section: section, text: lines.joined(separator: "\n") + "\n"))
                    current = nil
                } else {
                    lines.append(line)
                    current = lines
                }
            } else if line == "```swift" {
                current = []
            } else if line.hasPrefix("## ") {
                section = String(line.dropFirst(3))
            }
        }
        return blocks
    }

    /// Writes `text` to `url` unless it already holds it, so that an unchanged block is not rebuilt.
    static func write(_ text: String, to url: URL) throws {
        if (try? String(contentsOf: url, encoding: .utf8)) == text { return }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: url, atomically: true, encoding: .utf8)
    }

    /// Runs `arguments` (found on PATH) in `folder`; waits without holding a thread of the
    /// cooperative pool, and kills the process after `timeout` seconds.
    static func run(_ arguments: [String], in folder: URL, timeout: Double, environment: [String: String]? = nil) async throws -> Finished {
        let id = UUID().uuidString
        let outURL = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-readme-out-\(id)")
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-readme-err-\(id)")
        try Data().write(to: outURL)
        try Data().write(to: errURL)
        defer {
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
        }
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        process.currentDirectoryURL = folder
        if let environment { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let exited = Once()   // claimed by whichever comes first: the exit or the timeout's kill
        let status = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int32, any Error>) in
            process.terminationHandler = {
                _ = exited.claim()
                continuation.resume(returning: $0.terminationStatus)
            }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                if exited.claim() { kill(pid, SIGKILL) }
            }
        }
        try out.close()
        try err.close()
        return Finished(status: status,
                        output: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                        errors: String(decoding: try Data(contentsOf: errURL), as: UTF8.self))
    }

    /// The scratch package, written and built once for the whole suite.
    static let package = Task { try await makePackage() }

    private static func makePackage() async throws -> BlocksPackage {
        let blocks = try blocks()
        let folder = root.appendingPathComponent(".build/readme-blocks")
        let manifests = blocks.filter { $0.text.hasPrefix("// swift-tools-version") }
        guard manifests.count == 1, let install = manifests.first else {
            throw ReadmeProblem(description: "the README should have one Package.swift block (Install)")
        }
        let programs = blocks.filter { !$0.text.hasPrefix("// swift-tools-version") }

        // The user's manifest, pointing at this checkout, plus one target per block.
        let placeholder = "path: \"../DicRecord\""
        guard install.text.components(separatedBy: placeholder).count == 2 else {
            throw ReadmeProblem(description: "the Install block should say \(placeholder) once")
        }
        let repository = root.path.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        var manifest = install.text.replacingOccurrences(of: placeholder, with: "path: \"\(repository)\"")
        manifest += """

            // Added by ReadmeBlocksTests: every README block as a program of its own, warnings as errors.
            let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]
            for target in package.targets { target.swiftSettings = strict }

            """
        var names: [(name: String, section: String)] = [("MyApp", "")]
        // MyApp is every SQLite block pasted in order (the PostgreSQL one needs its product and a server).
        try write(programs.filter { !$0.text.contains("import DicRecordPostgres") }.map(\.text).joined(separator: "\n"),
                  to: folder.appendingPathComponent("Sources/MyApp/main.swift"))
        for block in programs {
            // "Concurrency and async" -> ConcurrencyAndAsync, so that a compiler error names the section.
            let name = block.section.split { !$0.isLetter && !$0.isNumber }.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
            names.append((name, block.section))
            // A block that imports DicRecordPostgres depends on that product as an app would.
            let products = block.text.contains("import DicRecordPostgres") ? ["DicRecord", "DicRecordPostgres"] : ["DicRecord"]
            manifest += """
                package.targets.append(.executableTarget(name: "\(name)", dependencies: [\(products.map { ".product(name: \"\($0)\", package: \"DicRecord\")" }.joined(separator: ", "))],
                                                         path: "Blocks/\(name)", swiftSettings: strict))

                """
            try write(block.text, to: folder.appendingPathComponent("Blocks/\(name)/main.swift"))
        }
        try write(manifest, to: folder.appendingPathComponent("Package.swift"))

        var build = try await run(["swift", "build"], in: folder, timeout: 1800)
        if build.status != 0 {
            // SwiftPM's incremental plan can miss a file added to the library since the last run
            // ("cannot find … in scope"): a failing build is tried once more from scratch.
            try? FileManager.default.removeItem(at: folder.appendingPathComponent(".build"))
            build = try await run(["swift", "build"], in: folder, timeout: 1800)
        }
        var binFolder: URL?
        if build.status == 0 {
            let bin = try await run(["swift", "build", "--show-bin-path"], in: folder, timeout: 300)
            let path = bin.output.trimmingCharacters(in: .whitespacesAndNewlines)
            if bin.status == 0, !path.isEmpty { binFolder = URL(fileURLWithPath: path) }
        }
        return BlocksPackage(folder: folder, blocks: blocks, programs: names, build: build, binFolder: binFolder)
    }
}

@Suite(.serialized) struct ReadmeBlocksTests {
    /// The sections whose example is a ```swift block; a block dropped from the README, or
    /// turned into another kind of fence, fails here.
    @Test func everyExampleSectionStillHasItsSwiftBlock() throws {
        let sections = try Readme.blocks().map(\.section)
        #expect(sections == ["Install", "Quick start", "Models", "Concurrency and async", "Live queries", "PostgreSQL", "Scaling out: read replicas",
                             "Building SQL at run time"])
    }

    /// Issue 13.8: each block compiles as it stands with its imports, and so do all of them pasted
    /// in order into one main.swift; each program runs twice in a row in a fresh folder.
    @Test(.timeLimit(.minutes(30))) func everyBlockCompilesAndRunsTwiceInAFreshFolder() async throws {
        let package = try await Readme.package.value
        try #require(package.build.status == 0, "swift build of the README blocks failed:\n\(package.build.output)\n\(package.build.errors)")
        let bin = try #require(package.binFolder)
        // A line each example prints on its first and its second run: counts that grow by the rows
        // the first run left behind ("" is all blocks in order, which ends with the SQL block).
        let lines: [String: [String]] = [
            "Quick start": ["1 1", "2 2"],
            "Models": ["1 15", "2 15"],
            "Concurrency and async": ["1 100", "1 100"],
            "Live queries": ["2 1", "2 1"],
            "PostgreSQL": ["2 2", "3 3"],
            "Scaling out: read replicas": ["2.0 token", "3.0 token"],
            "Building SQL at run time": ["0 0", "0 0"],
            "": ["0 0", "0 0"],
        ]
        for program in package.programs {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-readme-run-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let label = program.section.isEmpty ? "all blocks in order" : program.section
            // The PostgreSQL block runs against the suites' server: a fresh schema for its two runs.
            var environment: [String: String]?
            var scratch: PostgresServer.Scratch?
            defer { scratch?.finish() }
            if program.section == "PostgreSQL" || program.section.hasPrefix("Scaling out") {
                let replicas = program.section.hasPrefix("Scaling out")
                guard PostgresServer.url != nil, !replicas || ReplicaServer.url != nil else {
                    if PostgresServer.isCI { Issue.record("CI=true but DICRECORD_POSTGRES_URL or _REPLICA_URL is not set: the \(program.section) block cannot run") }
                    continue
                }
                let schema = try PostgresServer.scratch()
                scratch = schema
                environment = ["DICRECORD_POSTGRES_URL": try #require(PostgresServer.url(searchPath: schema.schema))]
                if replicas { environment?["DICRECORD_POSTGRES_REPLICA_URL"] = ReplicaServer.url(searchPath: schema.schema) }
            }
            for run in 0..<2 {
                let result = try await Readme.run([bin.appendingPathComponent(program.name).path], in: folder, timeout: 120,
                                                  environment: environment)
                #expect(result.status == 0, "\(label), run \(run + 1): exit \(result.status)\n\(result.output)\n\(result.errors)")
                let printed = result.output.split(separator: "\n")
                let expected = try #require(lines[program.section], "no expected output for \(label)")
                #expect(printed.contains { $0.hasSuffix(expected[run]) }, "\(label), run \(run + 1) printed \(result.output)")
            }
        }
        #expect(package.programs.map(\.name) == ["MyApp", "QuickStart", "Models", "ConcurrencyAndAsync", "LiveQueries", "PostgreSQL", "ScalingOutReadReplicas",
                                                  "BuildingSQLAtRunTime"])
    }

    /// Issue 13.9: pasted into a main.swift, the async block calls the async twins. An `await` in
    /// front of a synchronous method draws "no 'async' operations occur within 'await' expression",
    /// an error here (warnings are errors), and the async block's program runs to the end.
    @Test(.timeLimit(.minutes(30))) func asyncBlockCallsTheAsyncTwins() async throws {
        let package = try await Readme.package.value
        let log = package.build.output + package.build.errors
        #expect(!log.contains("no 'async' operations occur within 'await' expression"), "\(log)")
        #expect(package.build.status == 0, "\(log)")
        let block = try #require(package.blocks.first { $0.section == "Concurrency and async" })
        #expect(block.text.contains("try await Db.use(\"bank\").tx"))
        #expect(block.text.contains("async throws {"))
    }

    /// Issue 13.10: an app whose manifest is the README's Install block depends on DicRecord and
    /// resolves swift-log only: no swift-argument-parser, no plugin, no test-only package.
    @Test(.timeLimit(.minutes(30))) func aLibraryUserResolvesSwiftLogOnly() async throws {
        let package = try await Readme.package.value
        let shown = try await Readme.run(["swift", "package", "show-dependencies", "--format", "json"], in: package.folder, timeout: 600)
        try #require(shown.status == 0, "\(shown.output)\n\(shown.errors)")
        let start = try #require(shown.output.firstIndex(of: "{"))
        let tree = try #require(try JSONSerialization.jsonObject(with: Data(shown.output[start...].utf8)) as? [String: Any])
        var names: [String] = []
        func walk(_ node: [String: Any]) {
            for child in node["dependencies"] as? [[String: Any]] ?? [] {
                names.append((child["name"] as? String ?? "?").lowercased())
                walk(child)
            }
        }
        walk(tree)
        #expect(Set(names) == ["dicrecord", "swift-log"], "\(shown.output)")
        let resolved = try String(contentsOf: package.folder.appendingPathComponent("Package.resolved"), encoding: .utf8)
        #expect(resolved.contains("swift-log"))
        #expect(!resolved.contains("swift-argument-parser"))
    }
}
