import Foundation
import Testing
@testable import DicRecord

/// Readonly contexts open readers only and leave nothing next to the file they read.
@Suite struct ReadonlyFolderTests {
    /// Writes a database with a table of 3 rows in `folder`, in `mode`, and closes it.
    private func makeDatabase(in folder: URL, mode: DbContext.JournalMode) throws -> String {
        let path = folder.appendingPathComponent("data.sqlite").path
        var options = DbContext.Options()
        options.journalMode = mode
        try DbContext.withIsolatedRegistry {
            let context = try DbContext(path: path, configName: "maker", options: options)
            try context.start()
            defer { context.stop() }
            try Db.use("maker").update("create table t (id integer primary key, v text)")
            try Db.use("maker").batch("insert into t (v) values (?)", [["a"], ["b"], ["c"]])
        }
        return path
    }

    private func names(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    private func readonlyOptions() -> DbContext.Options {
        var options = DbContext.Options()
        options.readonly = true
        return options
    }

    private func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-ro-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test func readonlyContextCreatesNoFilesNextToARollbackJournalDatabase() throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try makeDatabase(in: folder, mode: .delete)
        #expect(try names(in: folder) == ["data.sqlite"])
        try DbContext.withIsolatedRegistry {
            let context = try DbContext(path: path, configName: "ro", options: readonlyOptions())
            try context.start()
            defer { context.stop() }
            #expect(try Db.use("ro").query("select v from t order by id", as: String.self) == ["a", "b", "c"])
            #expect(throws: DicRecordError.self) { try Db.use("ro").update("delete from t") }
            #expect(try names(in: folder) == ["data.sqlite"])
        }
        #expect(try names(in: folder) == ["data.sqlite"])
    }

    /// A WAL database in a folder nobody may write to (made so with `chattr +i`, which binds root
    /// too): SQLite alone cannot open it (it would create the `-shm` file); DicRecord reads it and
    /// creates nothing.
    @Test func readonlyContextReadsAWalDatabaseInAReadonlyFolder() throws {
        let folder = try temporaryFolder()
        defer {
            _ = runTool("/usr/bin/chattr", ["-i", folder.path])
            try? FileManager.default.removeItem(at: folder)
        }
        let path = try makeDatabase(in: folder, mode: .wal)
        #expect(try names(in: folder) == ["data.sqlite"])  // -wal and -shm go away on close
        guard runTool("/usr/bin/chattr", ["+i", folder.path]) == 0, access(folder.path, W_OK) != 0 else {
            // Without chattr (another file system), the folder cannot be made read-only for root.
            print("ReadonlyFolderTests: chattr +i unavailable here; the read-only folder case was not exercised")
            return
        }
        try DbContext.withIsolatedRegistry {
            let context = try DbContext(path: path, configName: "ro", options: readonlyOptions())
            try context.start()
            defer { context.stop() }
            #expect(try Db.use("ro").query("select v from t order by id", as: String.self) == ["a", "b", "c"])
            #expect(try Db.use("ro").findById("t", 2)?["v"] as String? == "b")
            #expect(try names(in: folder) == ["data.sqlite"])
        }
        #expect(try names(in: folder) == ["data.sqlite"])
    }

    private func runTool(_ tool: String, _ arguments: [String]) -> Int32 {
        guard FileManager.default.isExecutableFile(atPath: tool) else { return -1 }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        } catch {
            return -1
        }
    }
}

/// A readonly context lets SQLite judge statements its own SQL classifier would send to the
/// (absent) writer: read-only PRAGMAs run, typos get SQLite's syntax error.
@Suite struct ReadonlyStatementTests {
    @Test func readonlyContextRunsReadingPragmasAndReportsTypos() throws {
        try withDatabase { t in
            try t.db.update("create table t (id integer primary key, v text)")
            var options = DbContext.Options()
            options.readonly = true
            let readonly = try DbContext(path: t.path, configName: "ro", options: options)
            try readonly.start()
            defer { readonly.stop() }
            let ro = Db.use("ro")
            #expect(try ro.find("pragma table_info(t)").map { $0["name"] as String? } == ["id", "v"])
            let typo = try #require(throws: DatabaseError.self) { try ro.find("selec * from t") }
            #expect(typo.message.contains("syntax error"))
            let write = try #require(throws: DicRecordError.self) { try ro.update("delete from t") }
            #expect(write.kind == DicRecordError.Kind.readonly)
        }
    }
}
