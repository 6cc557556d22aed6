import Foundation
import Logging
import Synchronization
import Testing
@testable import DicRecord

// Issue 13, points 5, 6, 7 and 11: typed reads that miss are visible, models refuse bad stored
// values, TEXT that is not UTF-8 keeps its bytes, and the user's logger gets what DicRecord logs.

/// A swift-log handler that keeps every message, for a logger passed in `Options.logger`
/// (no `LoggingSystem.bootstrap`: the test process's logging is left alone).
final class CapturedLog: Sendable {
    private let entries = Mutex<[(level: Logger.Level, message: String)]>([])

    var logger: Logger { Logger(label: "test") { _ in Handler(log: self) } }
    var messages: [String] { entries.withLock { $0.map(\.message) } }
    var warnings: [String] { entries.withLock { $0.filter { $0.level == .warning }.map(\.message) } }

    fileprivate func append(_ level: Logger.Level, _ message: String) {
        entries.withLock { $0.append((level, message)) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            log.append(event.level, "\(event.message)")
        }
    }
}

/// Point 6's model: a non-optional column with a default.
final class MissStudent: Model {
    @Column var name: String?
    @Column var age: Int = 10
    override class var tableName: String { "student" }
}

/// Point 7's model: the same non-UTF-8 column read as bytes and as text.
final class RawText: Model {
    @Column var bytes: Data?
    @Column var text: String?
    @Column var n: Int = 0
    override class var tableName: String { "raw_text" }
}

/// A model with a JSON column, read over records (no load check).
final class JSONMissNote: Model {
    @Column var tags: [String]?
    override class var tableName: String { "json_miss_note" }
}

@Suite("Typed read misses, model load checks, non-UTF-8 text, logger")
struct ReadMissTests {
    /// A JSON column whose text is not the property's JSON reads nil, and says so (it was silent),
    /// as a typed read that misses does; NULL stays quiet.
    @Test func aJSONColumnThatDoesNotDecodeWarns() throws {
        let log = CapturedLog()
        try withDatabase(options: options(log)) { t throws in
            t.context.register(JSONMissNote.self)
            try t.db.update(#"insert into json_miss_note(tags) values ('["a"]'), ('not json'), (null), ('{"b": 1}')"#)
            let notes = try t.db.find("select * from json_miss_note order by id").map(JSONMissNote.init(record:))
            #expect(notes[0].tags == ["a"])
            #expect(notes[2].tags == nil)
            #expect(log.warnings.isEmpty)
            #expect(notes[1].tags == nil)
            #expect(notes[3].tags == nil)
            let warnings = log.warnings
            #expect(warnings.count == 1)   // once per column and statement
            #expect(warnings.first?.contains(#""tags""#) == true && warnings.first?.contains("not json") == true)
            #expect(warnings.first?.contains("select * from json_miss_note") == true)
        }
    }

    private func options(_ log: CapturedLog) -> DbContext.Options {
        var options = DbContext.Options()
        options.logger = log.logger
        return options
    }

    // MARK: Point 5

    @Test func typedReadsThatMissWarnNamingColumnValueTypeAndSql() throws {
        let log = CapturedLog()
        try withDatabase(options: options(log)) { t throws in
            try t.db.update("create table t(v)")
            try t.db.update("insert into t(v) values ('abc'), (1.5), (3000000000), (null), (7)")
            let rows = try t.db.find("select v from t order by rowid")
            let text: Int? = rows[0].v
            let fraction: Int? = rows[1].v
            let wide: Int32? = rows[2].v
            let null: Int? = rows[3].v
            let misspelled: Int? = rows[4].vv
            let good: Int? = rows[4].v
            #expect(text == nil && fraction == nil && wide == nil && null == nil && misspelled == nil)
            #expect(good == 7)
            let warnings = log.warnings
            // Once per column and statement: the three bad values of "v" give one warning, and "vv" one.
            #expect(warnings.count == 2)
            let first = try #require(warnings.first)
            #expect(first.contains("\"v\"") && first.contains("TEXT 'abc'") && first.contains("Swift.Int")
                    && first.contains("select v from t order by rowid") && first.contains("[main]"))
            #expect(warnings.last?.contains("\"vv\"") == true && warnings.last?.contains("no such column") == true)

            // Another statement warns afresh, and by position too.
            let again = try t.db.find("select v from t where rowid in (2, 3) order by rowid")
            let wideAgain: Int32? = again[1].v
            let fractionByIndex: Int? = again[0][0]
            #expect(wideAgain == nil && fractionByIndex == nil)
            let later = log.warnings.dropFirst(2)
            #expect(later.count == 1)
            #expect(later.first?.contains("INTEGER 3000000000") == true && later.first?.contains("Swift.Int32") == true)
        }
    }

    @Test func nullReadsAsNilWithoutAWarning() throws {
        let log = CapturedLog()
        try withDatabase(options: options(log)) { t throws in
            let row = try #require(try t.db.findFirst("select null as v, 5 as w"))
            let v: Int? = row.v
            let s: String? = row.v
            let d: Date? = row.v
            #expect(v == nil && s == nil && d == nil)
            #expect(log.warnings.isEmpty)
        }
    }

    @Test func aRecordBuiltInCodeStillReadsNilOnAMiss() throws {
        let record = try Record(["builtInCodeMissColumn": "abc"])
        let n: Int? = record.builtInCodeMissColumn
        #expect(n == nil)
        #expect(record.layoutOrigin.place == "a record built in code")
    }

    @Test func strictReadsStopOnAMiss() async throws {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var options = DbContext.Options()
            options.strictReads = true
            try DbContext.withIsolatedRegistry {
                try DbContext.inMemory(options: options).start()
                let row = try Db.findFirst("select 'abc' as v")
                let n: Int? = row?.v
                _ = n
            }
        }
        // The precondition's message: the column, the stored value, the type and the SQL.
        let stderr = String(decoding: try #require(result).standardErrorContent, as: UTF8.self)
        #expect(stderr.contains("typed read of \"v\" as Swift.Int gave nil: it holds TEXT"), "\(stderr)")
        #expect(stderr.contains("abc"))
        #expect(stderr.contains("select 'abc' as v"))
    }

    @Test func strictReadsLeaveNullAndGoodValuesAlone() throws {
        var options = DbContext.Options()
        options.strictReads = true
        try withDatabase(options: options) { t throws in
            let row = try #require(try t.db.findFirst("select null as v, 5 as w, '6' as x"))
            let v: Int? = row.v
            let w: Int? = row.w
            let x: Int? = row.x   // lenient: TEXT '6' converts
            #expect(v == nil && w == 5 && x == 6)
        }
    }

    // MARK: Point 6

    @Test func loadingAModelWithABadStoredValueThrowsNamingModelColumnKeyAndValue() throws {
        try withDatabase { t throws in
            t.context.register(MissStudent.self)
            try t.db.update("insert into student(id, name, age) values (3, 'x', 'abc')")
            let error = try #require(throws: ConversionError.self) { _ = try MissStudent.dao.findById(3) }
            let model = String(reflecting: MissStudent.self)   // DicRecordTests.MissStudent
            #expect(error.model == model && error.column == "age" && error.rowKey == "id = 3")
            #expect(error.value == "TEXT 'abc'")
            #expect(error.description == "cannot convert TEXT 'abc' to Swift.Int in column \"age\" of \(model) (row id = 3): not an integer in range")
            // In a result, the row that does not convert is named, after rows that do.
            try t.db.update("insert into student(id, name, age) values (1, 'a', 1), (2, 'b', '7')")
            let inResult = try #require(throws: ConversionError.self) {
                _ = try MissStudent.dao.find("select * from student order by id")
            }
            #expect(inResult.rowKey == "id = 3" && inResult.column == "age")
            #expect(try MissStudent.dao.find("select * from student where id < 3 order by id").map(\.age) == [1, 7])
            #expect(throws: ConversionError.self) { _ = try MissStudent.dao.findFirst("select * from student where id = 3") }
        }
    }

    @Test func loadingAModelConvertsLenientValuesAndReadsTheDefaultForNull() throws {
        try withDatabase { t throws in
            // A table made elsewhere, without NOT NULL on age.
            try t.db.update("create table student(id integer primary key, name text, age integer)")
            t.context.register(MissStudent.self)
            try t.db.update("insert into student(id, name, age) values (1, 'a', '12'), (2, 'b', null)")
            let students = try MissStudent.dao.find("select * from student order by id")
            #expect(students.map(\.age) == [12, 10])
        }
    }

    // MARK: Point 7

    @Test func nonUTF8TextReadsAsItsBytesAsDataOnEveryFetchPath() throws {
        try withDatabase { t throws in
            try t.db.update("create table t(id integer primary key, s text, n int)")
            try t.db.update("insert into t values (1, cast(x'FFFE41' as text), 0)")
            let stored = Data([0xFF, 0xFE, 0x41])
            let found = try t.db.find("select * from t")[0]
            let first = try #require(try t.db.findFirst("select * from t"))
            var each: Data?
            try t.db.each("select * from t") { row in each = row.s; return true }
            #expect(found.s == stored && first.s == stored && each == stored)
            #expect(try found.get("s", as: Data.self) == stored)
            // The single-value queries and Decodable read the same bytes.
            #expect(try t.db.query("select s from t", as: Data.self) == [stored])
            #expect(try t.db.queryFirst("select s from t", as: Data.self) == stored)
            struct Row: Decodable { var s: Data; var n: Int }
            #expect(try found.decode(Row.self).s == stored)
            #expect(try t.db.query("select s from t", as: String.self) == ["\u{FFFD}\u{FFFD}A"])
            // As a String the bad bytes are replaced.
            let text: String? = found.s
            #expect(text == "\u{FFFD}\u{FFFD}A")
            // Writing another column keeps the bytes readable.
            found.n = 1
            #expect(found.s == stored)
            found.remove("id")
            #expect(found.s == stored)
            found.s = "plain"
            #expect(found.s == Data("plain".utf8))
        }
    }

    @Test func nonUTF8TextKeepsItsRowsBytesAcrossTheBlocksOfALargeResult() throws {
        try withDatabase { t throws in
            try t.db.update("create table t(id integer primary key, a text, s text)")
            try t.db.batch("insert into t(id, a, s) values (?, 'x', ?)", (1...700).map { (id: Int) -> [DatabaseArgument] in [id, "ok \(id)"] })
            try t.db.update("update t set s = cast(x'80' || char(id % 128) as text) where id in (2, 9, 500, 700)")
            func expected(_ id: Int) -> Data {
                [2, 9, 500, 700].contains(id) ? Data([0x80, UInt8(id % 128)]) : Data("ok \(id)".utf8)
            }
            let rows = try t.db.find("select * from t order by id")
            for row in rows {
                let id: Int = try #require(row.id)
                let bytes: Data? = row.s
                #expect(bytes == expected(id), "row \(id)")
            }
            // each() refills one record: a row's bytes never stay for the next.
            var fromEach: [Int: Data] = [:]
            try t.db.each("select id, s from t order by id") { row in
                if let id: Int = row.id { fromEach[id] = row.s }
                return true
            }
            #expect(fromEach.count == 700)
            #expect(fromEach.allSatisfy { $0.value == expected($0.key) })
        }
    }

    @Test func writingARecordBackLeavesANonUTF8ColumnItDidNotTouch() throws {
        try withDatabase { t throws in
            t.context.register(RawText.self)
            try t.db.update("insert into raw_text(id, bytes, text, n) values (1, cast(x'FFFE41' as text), cast(x'C328' as text), 0)")
            let record = try #require(try t.db.findById("raw_text", 1))
            record.n = 1
            #expect(try t.db.update("raw_text", record))
            let model = try #require(try RawText.dao.findById(1))
            #expect(model.bytes == Data([0xFF, 0xFE, 0x41]))
            #expect(model.text == "\u{FFFD}(")
            model.n = 2
            #expect(try model.update())
            let hex = try t.db.queryFirst("select hex(bytes) || ',' || hex(text) || ',' || n from raw_text", as: String.self)
            #expect(hex == "FFFE41,C328,2")
        }
    }

    /// A record saved elsewhere (a copy to another table, a model inserted from a fetched row)
    /// writes a non-UTF-8 TEXT value's own bytes, not the replacement characters it reads as.
    @Test func savingAFetchedRecordWritesANonUTF8ColumnsBytes() throws {
        try withDatabase { t throws in
            try t.db.update("create table a(id integer primary key, s text, n int)")
            try t.db.update("create table b(id integer primary key, s text, n int)")
            try t.db.update("insert into a values (1, cast(x'FFFE41' as text), 0), (2, cast(x'C328' as text), 0)")
            let rows = try t.db.find("select * from a order by id")
            // Unwritten (a fetch block, bound by position) and written (an array of its own, bound in place).
            rows[1].n = 5
            for row in rows { row.remove("id") }
            #expect(try t.db.batchSave("b", rows) == [1, 1])
            let copied = try t.db.query("select hex(s) || ',' || typeof(s) || ',' || n from b order by id", as: String.self)
            #expect(copied == ["FFFE41,text,0", "C328,text,5"])
            // A NULL key left out of the INSERT, before and after the bad column; a bad column
            // overwritten by the user writes the new text.
            let keyFirst = try #require(try t.db.findFirst("select null as id, cast(x'FFFE41' as text) as s, 3 as n"))
            let keyAfter = try #require(try t.db.findFirst("select cast(x'C328' as text) as s, null as id, 4 as n"))
            let overwritten = try #require(try t.db.findFirst("select cast(x'C328' as text) as s, null as id, 6 as n"))
            overwritten.s = "new"
            #expect(try t.db.batchSave("b", [keyFirst, keyAfter, overwritten]) == [1, 1, 1])
            let keyed = try t.db.query("select hex(s) || ',' || n from b where n in (3, 4, 6) order by n", as: String.self)
            #expect(keyed == ["FFFE41,3", "C328,4", "6E6577,6"])
            // A model inserted from a fetched row (its key cleared) writes the bytes too.
            t.context.register(RawText.self)
            try t.db.update("insert into raw_text(id, bytes, text, n) values (1, cast(x'FFFE41' as text), cast(x'C328' as text), 0)")
            let model = try #require(try RawText.dao.findById(1))
            model.id = nil
            model.n = 7
            #expect(try model.save())
            let saved = try t.db.query("select hex(bytes) || ',' || hex(text) || ',' || n from raw_text order by id", as: String.self)
            #expect(saved == ["FFFE41,C328,0", "FFFE41,C328,7"])
        }
    }

    /// Two TEXT values that are not UTF-8 read as the same replacement characters: records, and
    /// the rows live queries compare to drop duplicates, tell them apart by their bytes.
    @Test func recordsWithDifferentNonUTF8TextsAreNotEqual() throws {
        try withDatabase { t throws in
            let ff = try #require(try t.db.findFirst("select cast(x'FF41' as text) as s"))
            let fe = try #require(try t.db.findFirst("select cast(x'FE41' as text) as s"))
            let again = try #require(try t.db.findFirst("select cast(x'FF41' as text) as s"))
            #expect(ff != fe)
            #expect(ff == again)
            #expect(ff.storedRow != fe.storedRow)
            #expect(ff.storedRow == again.storedRow)
            #expect(try Record(["s": "\u{FFFD}A"]) != ff)
        }
    }

    /// A key read as TEXT that is not UTF-8 finds its own row: update, delete and saveOrUpdate
    /// bind its bytes, not the replacement characters it reads as (which are another row's key here).
    @Test func aNonUTF8TextKeyFindsItsOwnRow() throws {
        try withDatabase { t throws in
            try t.db.update("create table k(code text primary key, n int)")
            // FF FE 41 reads as U+FFFD U+FFFD "A", which is the second row's key.
            try t.db.update("insert into k values (cast(x'FFFE41' as text), 1), (cast(x'EFBFBDEFBFBD41' as text), 2)")
            let bad = try #require(try t.db.findFirst("select * from k where n = 1"))
            bad.n = 10
            #expect(try t.db.update("k", bad, primaryKey: "code"))
            let rows = { try t.db.query("select hex(code) || ',' || n from k order by n", as: String.self) }
            #expect(try rows() == ["EFBFBDEFBFBD41,2", "FFFE41,10"])
            #expect(try t.db.delete("k", bad, primaryKey: "code"))
            #expect(try rows() == ["EFBFBDEFBFBD41,2"])

            // A model: C3 28 reads as U+FFFD "(", the second row's key again.
            t.context.register(KeyCountry.self)
            try t.db.update(#"insert into "KeyCountry" values (cast(x'C328' as text), 'a'), (cast(x'EFBFBD28' as text), 'b')"#)
            let countries = { try t.db.query(#"select hex(code) || ',' || name from "KeyCountry" order by name"#, as: String.self) }
            let model = try #require(try KeyCountry.dao.findFirst(#"select * from "KeyCountry" where name = 'a'"#))
            model.name = "a2"
            #expect(try model.update())
            #expect(try countries() == ["C328,a2", "EFBFBD28,b"])
            // saveOrUpdate conflicts on the stored key: the row is updated, no second one made.
            let again = try #require(try KeyCountry.dao.findFirst(#"select * from "KeyCountry" where name = 'a2'"#))
            again.name = "a3"
            #expect(try again.saveOrUpdate())
            #expect(try countries() == ["C328,a3", "EFBFBD28,b"])
            #expect(try again.delete())
            #expect(try countries() == ["EFBFBD28,b"])
        }
    }

    // MARK: Point 11

    /// Logging is the application's to set up: no file of the library bootstraps swift-log.
    @Test func theLibraryNeverBootstrapsLogging() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var checked = 0
        for folder in ["Sources", "Converters"] {
            let files = FileManager.default.enumerator(at: root.appendingPathComponent(folder), includingPropertiesForKeys: nil)
            while let file = files?.nextObject() as? URL {
                guard file.pathExtension == "swift" else { continue }
                let text = try String(contentsOf: file, encoding: .utf8)
                #expect(!text.contains("LoggingSystem.bootstrap"), "\(file.lastPathComponent) bootstraps logging")
                checked += 1
            }
        }
        #expect(checked > 50)
    }

    @Test func theUsersLoggerGetsShowSqlAndReadWarnings() throws {
        let log = CapturedLog()
        try withDatabase(options: options(log)) { t throws in
            t.context.showSql = true
            let row = try #require(try t.db.findFirst("select 'abc' as loggerColumn"))
            let n: Int? = row.loggerColumn
            #expect(n == nil)
            #expect(log.messages.contains { $0.contains("select 'abc' as loggerColumn") && !$0.contains("typed read") })
            #expect(log.warnings.contains { $0.contains("\"loggerColumn\"") })
        }
    }
}

@Suite("toDictionary with names Swift takes for one")
struct MergedKeyTests {
    /// SQLite keeps "é" and "e" + U+0301 apart; a Swift dictionary cannot. The dictionary holds the
    /// first and a warning names both (once), where it used to drop the second silently.
    @Test func aDictionaryKeyThatMergesTwoColumnsIsWarnedAbout() throws {
        let log = CapturedLog()
        var options = DbContext.Options()
        options.logger = log.logger
        try withDatabase(options: options) { t throws in
            try t.db.update("create table accents(\"\u{e9}\" integer, \"e\u{301}\" integer, plain integer)")
            try t.db.update("insert into accents values (1, 2, 3)")
            let rows = try t.db.find("select * from accents")
            let record = try #require(rows.first)
            #expect(record.columnNames.count == 3)
            let dictionary = record.toDictionary()
            #expect(dictionary.count == 2)
            #expect(dictionary["\u{e9}"].flatMap { $0 } as? Int64 == 1)
            #expect(dictionary["plain"].flatMap { $0 } as? Int64 == 3)
            _ = record.toDictionary()
            let warnings = log.warnings.filter { $0.contains("toDictionary") }
            #expect(warnings.count == 1)
            #expect(warnings.first?.contains("select * from accents") == true)
            // Every column is still there by position.
            #expect(record[1] as? Int64 == 2)
        }
    }
}
