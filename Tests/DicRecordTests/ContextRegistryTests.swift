import Foundation
import Testing
@testable import DicRecord

// DbContext and the registry of config names: which context is main, unknown and duplicate
// names, stop/start, isolation between contexts, options (onOpen, foreign keys, WAL, showSql).
// Every test runs inside its own `DbContext.withIsolatedRegistry`.

@Suite("Context registry")
struct ContextRegistryTests {
    /// Runs `body` in an isolated registry with a fresh temporary folder; stops the contexts it
    /// lists in `started` and removes the folder afterwards.
    private func isolated(_ body: (_ folder: URL, _ track: (DbContext) -> Void) throws -> Void) throws {
        let folder = DbSuiteKit.temporaryFolder()
        var contexts: [DbContext] = []
        defer {
            contexts.forEach { $0.stop() }
            DbSuiteKit.cleanUp(folder)
        }
        try DbContext.withIsolatedRegistry {
            try body(folder) { contexts.append($0) }
        }
    }

    private func path(_ folder: URL, _ name: String) -> String {
        folder.appendingPathComponent(name).path
    }

    // MARK: Which context is main

    /// A scope's registry is in force inside it, and for a task made there even after the scope
    /// ended (tasks copy the binding): `active` skips the task-local only in a process that never
    /// scoped one.
    @Test func aTaskMadeInAScopeKeepsItsRegistryAfterTheScopeEnds() async throws {
        let (task, scoped) = DbContext.withIsolatedRegistry { () -> (Task<ObjectIdentifier, Never>, ObjectIdentifier) in
            let task = Task {
                try? await Task.sleep(for: .milliseconds(50))
                return ObjectIdentifier(ContextRegistry.active)
            }
            return (task, ObjectIdentifier(ContextRegistry.active))
        }
        #expect(scoped != ObjectIdentifier(ContextRegistry.global))
        #expect(await task.value == scoped)
        #expect(ContextRegistry.active === ContextRegistry.global)
    }

    @Test func theContextNamedMainIsMainEvenWhenStartedSecond() throws {
        try isolated { folder, track in
            let first = try DbContext(path: path(folder, "first.sqlite"), configName: "first")
            track(first)
            try first.start()
            #expect(try Db.main.context().configName == "first")
            let main = try DbContext(path: path(folder, "main.sqlite"))
            track(main)
            try main.start()
            #expect(main.configName == "main")
            #expect(try Db.main.context().configName == "main")
            // Static calls go to main's file.
            try Db.update("create table whereami(name text)")
            try Db.update("insert into whereami values ('main')")
            #expect(try Db.use("main").queryString("select name from whereami") == "main")
            #expect(throws: DatabaseError.self) { _ = try Db.use("first").queryString("select name from whereami") }
        }
    }

    @Test func otherwiseTheFirstStartedIsMain() throws {
        try isolated { folder, track in
            let alpha = try DbContext(path: path(folder, "alpha.sqlite"), configName: "alpha")
            let beta = try DbContext(path: path(folder, "beta.sqlite"), configName: "beta")
            track(alpha); track(beta)
            try alpha.start()
            try beta.start()
            #expect(try Db.main.context().configName == "alpha")
            try Db.update("create table marker(x)")
            #expect(try Db.use("alpha").queryInt("select count(*) from sqlite_master where name = 'marker'") == 1)
            #expect(try Db.use("beta").queryInt("select count(*) from sqlite_master where name = 'marker'") == 0)
            // When the first one stops, the next one still running becomes main.
            alpha.stop()
            #expect(try Db.main.context().configName == "beta")
        }
    }

    @Test func useNilAndEmptyAreMain() throws {
        try isolated { folder, track in
            let other = try DbContext(path: path(folder, "other.sqlite"), configName: "other")
            let main = try DbContext(path: path(folder, "main.sqlite"))
            track(other); track(main)
            try other.start()
            try main.start()
            #expect(try Db.use(nil).context().configName == "main")
            #expect(try Db.use("").context().configName == "main")
            #expect(try Db.main.use(nil).context().configName == "main")
            #expect(try Db.use("other").use("").context().configName == "main")
            try Db.use(nil).update("create table t(x)")
            try Db.use("").update("insert into t values (5)")
            #expect(try Db.main.queryInt("select x from t") == 5)
            // Names are case-insensitive.
            #expect(try Db.use("OTHER").context().configName == "other")
        }
    }

    // MARK: Unknown and duplicate names

    @Test func anUnknownNameThrowsListingTheKnownNames() throws {
        try isolated { folder, track in
            let main = try DbContext(path: path(folder, "main.sqlite"))
            let backup = try DbContext(path: path(folder, "backup.sqlite"), configName: "backup")
            track(main); track(backup)
            try main.start()
            try backup.start()
            let handle = Db.use("nope")   // no error until it is used
            let error = DbSuiteKit.expectError(.unknownConfig) { _ = try handle.find("select 1") }
            #expect(error?.message.contains("nope") == true)
            #expect(error?.message.contains("main") == true)
            #expect(error?.message.contains("backup") == true)
            DbSuiteKit.expectError(.unknownConfig) { _ = try Db.use("nope").queryInt("select 1") }
            DbSuiteKit.expectError(.unknownConfig) { try Db.use("nope").update("create table x(y)") }
            DbSuiteKit.expectError(.unknownConfig) { try Db.use("nope").tx { _ in true } }
        }
    }

    @Test func noContextAtAllIsAnError() throws {
        DbContext.withIsolatedRegistry {
            let error = DbSuiteKit.expectError(.unknownConfig) { _ = try Db.find("select 1") }
            #expect(error?.message.contains("none") == true)
            DbSuiteKit.expectError(.unknownConfig) { _ = try Db.main.queryInt("select 1") }
        }
    }

    @Test func aDuplicateNameFails() throws {
        try isolated { folder, track in
            let first = try DbContext(path: path(folder, "a.sqlite"))
            track(first)
            try first.start()
            let second = try DbContext(path: path(folder, "b.sqlite"))
            track(second)
            DbSuiteKit.expectError(.duplicateConfig) { try second.start() }
            let capitalized = try DbContext(path: path(folder, "c.sqlite"), configName: "Main")
            track(capitalized)
            let error = DbSuiteKit.expectError(.duplicateConfig) { try capitalized.start() }
            #expect(error?.message.contains("main") == true)
            #expect(!second.isStarted)
            #expect(!capitalized.isStarted)
            // Starting the same context twice fails too.
            DbSuiteKit.expectError(.duplicateConfig) { try first.start() }
            // The first one is untouched and still main.
            #expect(first.isStarted)
            #expect(try Db.main.context() === first)
            try Db.update("create table t(x)")
            #expect(FileManager.default.fileExists(atPath: path(folder, "a.sqlite")))
            #expect(!FileManager.default.fileExists(atPath: path(folder, "b.sqlite")))
        }
    }

    @Test func aStoppedContextsNameIsFree() throws {
        try isolated { folder, track in
            let old = try DbContext(path: path(folder, "old.sqlite"), configName: "shared")
            track(old)
            try old.start()
            try Db.use("shared").update("create table which(name text)")
            try Db.use("shared").update("insert into which values ('old')")
            old.stop()
            #expect(!old.isStarted)
            let new = try DbContext(path: path(folder, "new.sqlite"), configName: "shared")
            track(new)
            try new.start()
            try Db.use("shared").update("create table which(name text)")
            try Db.use("shared").update("insert into which values ('new')")
            #expect(try Db.use("shared").query("select name from which", as: String.self) == ["new"])
        }
    }

    @Test func callsOnAStoppedContextThrow() throws {
        try isolated { folder, track in
            let context = try DbContext(path: path(folder, "s.sqlite"), configName: "s")
            track(context)
            try context.start()
            let handle = Db.use("s")
            try handle.update("create table t(x)")
            context.stop()
            #expect(throws: DicRecordError.self) { _ = try handle.find("select * from t") }
            #expect(throws: DicRecordError.self) { try handle.update("insert into t values (1)") }
            #expect(throws: DicRecordError.self) { try handle.tx { _ in true } }
            #expect(throws: DicRecordError.self) { _ = try Db.main.queryInt("select 1") }
            // Stopping twice is harmless.
            context.stop()
        }
    }

    @Test func stopThenStartAgainKeepsTheData() throws {
        try isolated { folder, track in
            let context = try DbContext(path: path(folder, "persist.sqlite"))
            track(context)
            try context.start()
            try DbSuiteKit.makeStudents(Db.main, count: 3)
            context.stop()
            try context.start()
            #expect(context.isStarted)
            #expect(try Db.queryInt("select count(*) from student") == 3)
            try Db.update("insert into student(name, age) values ('after', 4)")
            context.stop()
            // A new context on the same file sees everything.
            let again = try DbContext(path: path(folder, "persist.sqlite"))
            track(again)
            try again.start()
            #expect(try Db.query("select name from student order by id", as: String.self) == ["s1", "s2", "s3", "after"])
        }
    }

    @Test func twoContextsStayApart() throws {
        try isolated { folder, track in
            let a = try DbContext(path: path(folder, "a.sqlite"), configName: "a")
            let b = try DbContext(path: path(folder, "b.sqlite"), configName: "b")
            track(a); track(b)
            try a.start()
            try b.start()
            for (name, rows) in [("a", 2), ("b", 5)] {
                try DbSuiteKit.makeStudents(Db.use(name), count: rows)
                try Db.use(name).update("update student set name = ? || name", name + "-")
            }
            #expect(try Db.use("a").query("select name from student order by id", as: String.self) == ["a-s1", "a-s2"])
            #expect(try Db.use("b").queryInt("select count(*) from student") == 5)
            #expect(try Db.use("b").findFirst("select * from student order by id").map { DbSuiteKit.string($0, "name") } == "b-s1")
            // A transaction on one does not hold the other.
            try Db.use("a").tx { _ throws -> Bool in
                #expect(try Db.use("b").update("delete from student where id = 5") == 1)
                return false
            }
            #expect(try Db.use("b").queryInt("select count(*) from student") == 4)
            #expect(try Db.use("a").queryInt("select count(*) from student") == 2)
        }
    }

    @Test func isolatedRegistriesDoNotSeeEachOther() throws {
        try isolated { folder, track in
            let outer = try DbContext(path: path(folder, "outer.sqlite"), configName: "outer")
            track(outer)
            try outer.start()
            try DbContext.withIsolatedRegistry {
                DbSuiteKit.expectError(.unknownConfig) { _ = try Db.use("outer").queryInt("select 1") }
                // The same name can be started here.
                let inner = try DbContext.inMemory(configName: "outer")
                try inner.start()
                defer { inner.stop() }
                #expect(try Db.main.context() === inner)
            }
            #expect(try Db.main.context() === outer)
        }
    }

    // MARK: In memory, folders

    @Test func inMemoryContextsWork() throws {
        try DbContext.withIsolatedRegistry {
            let scratch = try DbContext.inMemory(configName: "scratch")
            let other = try DbContext.inMemory(configName: "other")
            try scratch.start()
            try other.start()
            defer { scratch.stop(); other.stop() }
            #expect(scratch.path == ":memory:")
            #expect(try Db.main.context() === scratch)
            try DbSuiteKit.makeStudents(Db.use("scratch"), count: 4)
            #expect(try Db.use("scratch").queryInt("select count(*) from student") == 4)
            // Each in-memory context is its own database.
            #expect(throws: DatabaseError.self) { _ = try Db.use("other").queryInt("select count(*) from student") }
            // Reads, writes, transactions and each all work on it.
            try Db.use("scratch").tx { db in
                try db.update("delete from student where id = 1")
                return false
            }
            var seen = 0
            try Db.use("scratch").each("select * from student") { _ in seen += 1; return true }
            #expect(seen == 4)
            #expect(try Db.use("scratch").queryString("pragma journal_mode") == "memory")
            // Stopping drops the data: a restarted in-memory context is empty.
            scratch.stop()
            try scratch.start()
            #expect(try Db.use("scratch").queryInt("select count(*) from sqlite_master where name = 'student'") == 0)
        }
    }

    @Test func aContextCreatesItsMissingFolder() throws {
        try isolated { folder, track in
            let nested = folder.appendingPathComponent("a/b/c")
            #expect(!FileManager.default.fileExists(atPath: nested.path))
            let context = try DbContext(path: nested.appendingPathComponent("db.sqlite").path)
            track(context)
            try context.start()
            try Db.update("create table t(x)")
            var isDirectory: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: nested.path, isDirectory: &isDirectory))
            #expect(isDirectory.boolValue)
            #expect(FileManager.default.fileExists(atPath: nested.appendingPathComponent("db.sqlite").path))
        }
    }

    @Test func aFileThatIsNotADatabaseFailsToStartAndFreesTheName() throws {
        try isolated { folder, track in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let bogus = folder.appendingPathComponent("bogus.sqlite")
            try Data(repeating: 0x41, count: 4096).write(to: bogus)
            let context = try DbContext(path: bogus.path)
            track(context)
            #expect(throws: DatabaseError.self) { try context.start() }
            #expect(!context.isStarted)
            let good = try DbContext(path: path(folder, "good.sqlite"))
            track(good)
            try good.start()
            #expect(try Db.main.context() === good)
        }
    }

    @Test func aReadonlyContextNeverCreatesItsFile() throws {
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        let missing = path(folder, "missing/ro.sqlite")
        var options = DbContext.Options()
        options.readonly = true
        let context = try DbContext(path: missing, configName: "ro", options: options)
        defer { context.stop() }
        DbContext.withIsolatedRegistry {
            #expect(throws: DatabaseError.self) { try context.start() }
            #expect(!context.isStarted)
            #expect(!FileManager.default.fileExists(atPath: missing))
            DbSuiteKit.expectError(.unknownConfig) { _ = try Db.use("ro").queryInt("select 1") }
        }
    }

    @Test func withoutReadersReadsRunOnTheWriter() throws {
        var options = DbContext.Options()
        options.readerCount = 0
        let opened = DbSuiteKit.Counter()
        options.onOpen = { _ in opened.increment() }
        try withDatabase(options: options) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 3)
            #expect(try t.db.find("select * from student").count == 3)
            var rows = 0
            try t.db.each("select * from student") { _ throws -> Bool in
                rows += 1
                #expect(try t.db.update("update student set age = age + 1 where id = 1") == 1)
                return true
            }
            #expect(rows == 3)
            #expect(opened.value == 1)
            #expect(try t.db.queryInt("select age from student where id = 1") == 4)
        }
    }

    // MARK: Options and logging

    @Test func showSqlSurvivesPercentSigns() throws {
        try DbContext.withIsolatedRegistry {
            let context = try DbContext.inMemory()
            try context.start()
            defer { context.stop() }
            context.showSql = true
            #expect(context.showSql)
            #expect(try Db.queryString("select '%s %d %@ %n %%' || ?", "%n%s%@") == "%s %d %@ %n %%%n%s%@")
            try Db.update("create table \"100%\"(\"50%\" text)")
            try Db.update("insert into \"100%\" values (?)", "%x%n")
            #expect(try Db.queryString("select \"50%\" from \"100%\" where \"50%\" like '%\\%%' escape '\\'") == "%x%n")
            context.showSql = false
            #expect(!context.showSql)
        }
    }

    @Test func onOpenRunsForEachConnection() throws {
        let opened = DbSuiteKit.Counter()
        let names = DbSuiteKit.Locked<[String]>([])
        var options = DbContext.Options()
        options.onOpen = { connection in
            opened.increment()
            names.update { $0.append(connection.configName) }
            try connection.execute("PRAGMA cache_size = -4321")
        }
        try withDatabase(options: options) { t throws in
            #expect(opened.value == 1)   // the writer
            // The writer has the setting (PRAGMA statements run on the writer).
            #expect(try t.db.queryInt("PRAGMA cache_size") == -4321)
            // A read opens a reader, which runs the hook too.
            #expect(try t.db.queryInt("select cache_size from pragma_cache_size()") == -4321)
            #expect(opened.value == 2)
            // Two concurrent reads need a second reader.
            let db = t.db
            try t.db.each("select 1 union all select 2") { _ in
                let inner = DbSuiteKit.onThread(timeout: 20) { try db.queryInt("select cache_size from pragma_cache_size()") }
                #expect((try? inner?.get()) == -4321)
                return false
            }
            #expect(opened.value == 3)
            #expect(names.value == ["main", "main", "main"])
        }
    }

    struct HookFailed: Error {}

    @Test func onOpenFailureFailsTheStart() throws {
        try isolated { folder, track in
            var options = DbContext.Options()
            options.onOpen = { _ in throw HookFailed() }
            let context = try DbContext(path: path(folder, "hook.sqlite"), options: options)
            track(context)
            #expect(throws: HookFailed.self) { try context.start() }
            #expect(!context.isStarted)
            DbSuiteKit.expectError(.unknownConfig) { _ = try Db.main.queryInt("select 1") }
        }
    }

    @Test func foreignKeysAreOn() throws {
        try withDatabase { t throws in
            #expect(try t.db.queryInt("PRAGMA foreign_keys") == 1)
            #expect(try t.db.queryInt("select foreign_keys from pragma_foreign_keys()") == 1)   // on a reader
            try t.db.update("create table parent(id integer primary key)")
            try t.db.update("create table child(id integer primary key, parent_id integer references parent(id))")
            try t.db.update("insert into parent values (1)")
            try t.db.update("insert into child values (1, 1)")
            let error = #expect(throws: DatabaseError.self) { try t.db.update("insert into child values (2, 99)") }
            #expect(error?.resultCode == 19)
            #expect(error?.extendedResultCode == 787)   // SQLITE_CONSTRAINT_FOREIGNKEY
            #expect(try t.db.queryInt("select count(*) from child") == 1)
        }
        var options = DbContext.Options()
        options.foreignKeys = false
        try withDatabase(options: options) { t throws in
            #expect(try t.db.queryInt("PRAGMA foreign_keys") == 0)
        }
    }

    @Test func walModeIsOnForFiles() throws {
        try withDatabase { t throws in
            #expect(try t.db.queryString("PRAGMA journal_mode") == "wal")
            #expect(try t.db.queryString("select journal_mode from pragma_journal_mode()") == "wal")
        }
        var options = DbContext.Options()
        options.journalMode = .delete
        try withDatabase(options: options) { t throws in
            #expect(try t.db.queryString("PRAGMA journal_mode") == "delete")
            // Without WAL there are no readers: reads still work (on the writer).
            try t.db.update("create table t(x)")
            #expect(try t.db.queryInt("select count(*) from t") == 0)
        }
        try withDatabase(inMemory: true) { t throws in
            #expect(try t.db.queryString("PRAGMA journal_mode") == "memory")
        }
    }

    @Test func busyTimeoutIsAppliedToConnections() throws {
        var options = DbContext.Options()
        options.busyTimeout = 1.25
        try withDatabase(options: options) { t throws in
            #expect(try t.db.queryInt("PRAGMA busy_timeout") == 1250)
        }
    }
}

final class ResolvedNote: Model {
    @Column var text: String?
    override class var tableName: String { "resolved_note" }
}

/// A model class remembers the context it resolved to (`ModelSchema.context(in:named:)`): every
/// change to the registries must make it resolve again.
@Suite("A model's remembered context")
struct ResolvedContextTests {
    private func file(_ folder: URL, _ name: String) -> String { folder.appendingPathComponent(name).path }

    private func count(_ config: String) throws -> Int? {
        try Db.use(config).queryInt("select count(*) from resolved_note")
    }

    @Test func aContextStartedAgainUnderTheSameNameIsTheOneUsed() throws {
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        try DbContext.withIsolatedRegistry {
            let first = try DbContext(path: file(folder, "first.sqlite"), configName: "notes")
            first.register(ResolvedNote.self)
            try first.start()
            let a = ResolvedNote().use("notes"); a.text = "a"; try a.save()
            #expect(try count("notes") == 1)
            first.stop()
            // Stopped: refused by name, not written to the stopped file.
            let b = ResolvedNote().use("notes"); b.text = "b"
            #expect(throws: DicRecordError.self) { try b.save() }
            let second = try DbContext(path: file(folder, "second.sqlite"), configName: "notes")
            second.register(ResolvedNote.self)
            try second.start()
            defer { second.stop() }
            let c = ResolvedNote().use("notes"); c.text = "c"; try c.save()
            #expect(try count("notes") == 1)
            #expect(try ResolvedNote.dao.use("notes").findAll().map(\.text) == ["c"])
        }
    }

    @Test func aModelRegisteredAfterARefusalIsThenFound() throws {
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        try DbContext.withIsolatedRegistry {
            let main = try DbContext(path: file(folder, "main.sqlite"))
            try main.start()
            defer { main.stop() }
            let other = try DbContext(path: file(folder, "other.sqlite"), configName: "other")
            try other.start()
            defer { other.stop() }
            other.register(ResolvedNote.self)
            // Unnamed: the one context that declares it.
            let a = ResolvedNote(); a.text = "a"; try a.save()
            #expect(try count("other") == 1)
            // Declared on main too, later: main comes first among the candidates now.
            main.register(ResolvedNote.self)
            let b = ResolvedNote(); b.text = "b"; try b.save()
            #expect(try count("main") == 1)
            #expect(try count("other") == 1)
        }
    }

    @Test func eachIsolatedRegistryResolvesItsOwnContext() throws {
        let folder = DbSuiteKit.temporaryFolder()
        defer { DbSuiteKit.cleanUp(folder) }
        for name in ["one", "two"] {
            try DbContext.withIsolatedRegistry {
                let main = try DbContext(path: file(folder, "\(name).sqlite"))
                main.register(ResolvedNote.self)
                try main.start()
                defer { main.stop() }
                let note = ResolvedNote(); note.text = name; try note.save()
                #expect(try ResolvedNote.dao.findAll().map(\.text) == [name])
            }
        }
    }
}
