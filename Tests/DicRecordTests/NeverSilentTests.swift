import CSQLite
import Foundation
import Testing
@testable import DicRecord

/// Issue 13's data-loss points: values SQLite would have refused or misread are thrown errors,
/// and nothing is written.
@Suite struct NeverSilentTests {
    /// A context whose connections accept TEXT and BLOB values of at most `limit` bytes
    /// (`SQLITE_LIMIT_LENGTH`), so that "too big" needs no gigabyte in a test.
    private func withLengthLimit<T>(_ limit: Int32, _ body: (TestDatabase) throws -> T) throws -> T {
        var options = DbContext.Options()
        options.onOpen = { connection in _ = sqlite3_limit(connection.sqliteHandle, SQLITE_LIMIT_LENGTH, limit) }
        return try withDatabase(options: options, body)
    }

    private func rows(_ db: Db) throws -> Int { try db.queryInt("select count(*) from t") ?? -1 }

    // MARK: 1. Values over SQLite's length limit

    @Test func aBlobOverTheDefaultLengthLimitIsRefusedNamingItsSize() throws {
        try withDatabase { t in
            try t.db.update("create table t(id integer primary key, data blob)")
            let huge = Data(count: 1_000_000_001)   // calloc'd: no gigabyte is touched
            let error = try #require(throws: DicRecordError.self) { try t.db.update("insert into t(data) values (?)", huge) }
            #expect(error.kind == .invalidArgument)
            #expect(error.message.contains("argument 1"))
            #expect(error.message.contains("BLOB of 1000000001 bytes"))
            #expect(error.message.contains("1000000000"))
            #expect(try rows(t.db) == 0)
        }
    }

    @Test func oversizedTextAndBlobArgumentsThrowAndWriteNothing() throws {
        try withLengthLimit(1000) { t in
            try t.db.update("create table t(id integer primary key, name text, data blob)")
            let text = String(repeating: "x", count: 1001), blob = Data(repeating: 7, count: 1001)
            let byText = try #require(throws: DicRecordError.self) { try t.db.update("insert into t(name) values (?)", text) }
            #expect(byText.message.contains("argument 1: TEXT of 1001 bytes"))
            let byName = try #require(throws: DicRecordError.self) {
                let arguments: [String: DatabaseArgument] = ["name": "ok", "data": blob]
                try t.db.update("insert into t(name, data) values (:name, :data)", arguments: StatementArguments(arguments))
            }
            #expect(byName.message.contains("(:data): BLOB of 1001 bytes"))
            // Through a registry converter (a URL is bound as its TEXT).
            let url = try #require(URL(string: "https://example.com/" + String(repeating: "p", count: 1000)))
            #expect(throws: DicRecordError.self) { try t.db.update("insert into t(name) values (?)", url) }
            #expect(try rows(t.db) == 0)
            // Under the limit it is stored exactly (the limit counts the whole row too).
            try t.db.update("insert into t(data) values (?)", Data(blob.prefix(900)))
            #expect(try t.db.queryInt("select length(data) from t") == 900)
        }
    }

    @Test func oversizedValuesInRecordSavesAndBatchesWriteNothing() throws {
        try withLengthLimit(1000) { t in
            try t.db.update("create table t(id integer primary key, name text, data blob)")
            let big = String(repeating: "y", count: 1001)

            let record = try Record(["name": big])
            let save = try #require(throws: DicRecordError.self) { try t.db.save("t", record) }
            #expect(save.message.contains("TEXT of 1001 bytes"))
            #expect(record["id"] == nil)   // no key written back

            #expect(throws: DicRecordError.self) {
                try t.db.batch("insert into t(name) values (?)", [["a"], [big], ["c"]])
            }
            #expect(throws: DicRecordError.self) {
                try t.db.batchSave("t", [try Record(["name": "a"]), try Record(["name": big]), try Record(["name": "c"])])
            }
            #expect(try rows(t.db) == 0)

            try t.db.update("insert into t(id, name) values (1, 'kept')")
            let loaded = try #require(try t.db.findById("t", 1))
            loaded["name"] = big
            #expect(throws: DicRecordError.self) { try t.db.update("t", loaded) }
            #expect(try t.db.queryString("select name from t where id = 1") == "kept")
        }
    }

    // MARK: 2. Unknown double-quoted names are errors, not text

    /// x: 13 rows. Every statement below names a column that does not exist, double-quoted
    /// because it needs quoting; SQLite's legacy rule would have read it as a string.
    private func makeX(_ db: Db) throws {
        try db.update("create table x(id integer primary key, name text)")
        try db.batch("insert into x(name) values (?)", (1...13).map { i -> [DatabaseArgument] in ["n\(i)"] })
    }

    @Test func aQuotedNameThatIsNoColumnFailsInsteadOfDeletingEveryRow() throws {
        try withDatabase { t in
            let db = t.db
            try makeX(db)
            let col = "zzz zzz"
            let delete = Delete(from: "x").where(col.eq(col))
            #expect(delete.sql.contains("\"zzz zzz\""))
            let error = try #require(throws: DatabaseError.self) { try db.update(delete) }
            #expect(error.message.contains("no such column: zzz zzz"))
            #expect(try db.queryInt("select count(*) from x") == 13)
        }
    }

    @Test func unknownQuotedNamesFailInEveryPlaceANameGoes() throws {
        try withDatabase { t in
            let db = t.db
            try makeX(db)
            let col = "zzz zzz"
            let calls: [(String, () throws -> Void)] = [
                ("where", { _ = try db.find(Select("*").from("x").where(col.eq("n1"))) }),
                ("set", { _ = try db.update(Update("x").set([col: "v"]).where("id".eq(1))) }),
                ("order by", { _ = try db.find(Select("*").from("x").orderBy(col.desc)) }),
                ("select list", { _ = try db.find(Select(col).from("x")) }),
                ("findById key", { _ = try db.findById("x", 1, primaryKey: col) }),
                ("deleteById key", { _ = try db.deleteById("x", 1, primaryKey: col) }),
                ("batchSave keys", { _ = try db.batchSave("x", [try Record(["id": 100, col: "a"])]) }),
                ("batchUpdate keys", { _ = try db.batchUpdate("x", [try Record(["id": 1, col: "a"])]) }),
                ("raw", { _ = try db.find("select * from x where \"zzz zzz\" = 'zzz zzz'") }),
            ]
            for (name, call) in calls {
                do {
                    try call()
                    Issue.record("\(name): no error")
                } catch {
                    #expect("\(error)".contains("no such column") || "\(error)".contains("has no column named zzz zzz"), "\(name): \(error)")
                }
            }
            #expect(try db.queryString("select group_concat(name, ',') from x") == (1...13).map { "n\($0)" }.joined(separator: ","))
        }
    }

    @Test func doubleQuotedTextGetsAHintToUseSingleQuotes() throws {
        try withDatabase { t in
            try makeX(t.db)
            let error = try #require(throws: DatabaseError.self) { try t.db.find("select * from x where name = \"Jack\"") }
            #expect(error.message == "no such column: Jack (a double-quoted word is a name in SQL; if you meant text, write it in single quotes: 'Jack')")
            // The suggested literal is valid SQL: a quote in it is doubled.
            let apostrophe = try #require(throws: DatabaseError.self) { try t.db.find("select * from x where name = \"Jack's\"") }
            #expect(apostrophe.message.hasSuffix("write it in single quotes: 'Jack''s')"))
            // No hint when the name was not double-quoted.
            let plain = try #require(throws: DatabaseError.self) { try t.db.find("select * from x where Jack = 1") }
            #expect(plain.message == "no such column: Jack")
            // DDL too: a DEFAULT "text" is refused rather than stored as text.
            #expect(throws: DatabaseError.self) { try t.db.update("create table y(a text default \"x\" check (a != \"b\"))") }
        }
    }

    // MARK: 3. Non-finite dates

    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func aNonFiniteDateIsRefusedAtWrite(_ seconds: Double) throws {
        try withDatabase { t in
            try t.db.update("create table t(id integer primary key, born real)")
            let date = Date(timeIntervalSince1970: seconds)
            #expect(throws: DicRecordError.self) { try t.db.update("insert into t(born) values (?)", date) }
            let record = Record()
            record.born = date
            #expect(throws: (any Error).self) { try t.db.save("t", record) }
            #expect(throws: (any Error).self) { try t.db.batchSave("t", [try Record(["born": date])]) }
            #expect(throws: ConversionError.self) { try DateConverter().encode(date) }
            #expect(try rows(t.db) == 0)
        }
    }

    @Test func aNaNStoredValueArgumentIsRefusedNotStoredAsNull() throws {
        try withDatabase { t in
            try t.db.update("create table t(id integer primary key, score real)")
            let error = try #require(throws: DicRecordError.self) {
                try t.db.update("insert into t(score) values (?)", DatabaseValue.real(.nan))
            }
            #expect(error.message.contains("argument 1: REAL NaN"))
            #expect(try rows(t.db) == 0)
            try t.db.update("insert into t(score) values (?)", DatabaseValue.real(.infinity))
            #expect(try t.db.queryDouble("select score from t") == .infinity)
        }
    }

    /// A model's Date column loads finite REAL seconds and refuses a stored infinity (written by
    /// another program) with the load's ConversionError.
    @Test func aModelLoadChecksThatAStoredDateIsFinite() throws {
        try withDatabase { t throws in
            t.context.register(DatedNote.self)
            try Db.update("insert into dated_note(id, at) values (1, 86400.5), (2, 9e999)")
            #expect(try DatedNote.dao.findById(1)?.at == Date(timeIntervalSince1970: 86400.5))
            let error = try #require(throws: ConversionError.self) { try DatedNote.dao.findById(2) }
            #expect("\(error)".contains("column \"at\""))
            #expect(throws: ConversionError.self) { try DatedNote.dao.findAll() }
        }
    }

    @Test func aNonFiniteDateInAModelIsRefusedAtSave() throws {
        try withDatabase { t throws in
            t.context.register(DatedNote.self)
            let note = DatedNote()
            note.at = Date(timeIntervalSince1970: .infinity)
            #expect(throws: (any Error).self) { try note.save() }
            #expect(try DatedNote.dao.count("id") == 0)
        }
    }

    // MARK: 4. A path with a NUL

    @Test func aPathWithANulIsRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-nul-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("a.sqlite").path + "\u{0}.evil"
        let error = try #require(throws: DicRecordError.self) { _ = try DbContext(path: path, configName: "nul") }
        #expect(error.kind == .invalidArgument)
        #expect(error.message.contains("NUL"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("a.sqlite").path))
    }

    // MARK: 12. Messages

    @Test func aNullReadAsANonOptionalSaysNullOnce() throws {
        let error = try #require(throws: ConversionError.self) { try Converters.shared.decode(.null, as: Int.self) }
        #expect(!"\(error)".contains("NULL NULL"))
        #expect("\(error)".hasPrefix("cannot convert NULL to Swift.Int"))
    }

    @Test func aReadonlyContextOnAMissingFileNamesThePathNotAnInternalURI() throws {
        try DbContext.withIsolatedRegistry {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-ro-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer {
                chmod(folder.path, 0o755)
                try? FileManager.default.removeItem(at: folder)
            }
            chmod(folder.path, 0o555)   // the folder nobody may write to: the immutable-URI case
            var options = DbContext.Options()
            options.readonly = true
            let path = folder.appendingPathComponent("missing.sqlite").path
            let context = try DbContext(path: path, configName: "ro", options: options)
            let error = try #require(throws: (any Error).self) { try context.start() }
            #expect("\(error)".contains("cannot open \(path):"))
            #expect(!"\(error)".contains("immutable"))
            #expect(!"\(error)".contains("file:"))
        }
    }

    /// The immutable open itself (what a readonly context uses in a folder nobody may write to):
    /// the test above cannot reach it when the tests run as root, who may write everywhere.
    @Test func anImmutableOpenOfAMissingFileNamesThePathNotTheURI() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-missing-\(UUID().uuidString) a#b?c.sqlite").path
        let error = try #require(throws: DatabaseError.self) {
            _ = try Connection(path: path, mode: .immutable, configName: "ro", registry: Converters(parent: .shared),
                               tracer: SqlTracer(observer: nil), busyTimeout: 1, statementCacheSize: 4)
        }
        #expect(error.message.hasPrefix("cannot open \(path): "))
        #expect(!error.message.contains("immutable"))
        #expect(!error.message.contains("file:"))
        #expect(!FileManager.default.fileExists(atPath: path))
    }
}

final class DatedNote: Model {
    @Column var at: Date?
    override class var tableName: String { "dated_note" }
}
