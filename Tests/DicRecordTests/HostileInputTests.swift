import Foundation
import Testing
@testable import DicRecord

/// A type with no converter anywhere.
private struct Opaque: Sendable {
    var payload = [1, 2, 3]
}

/// Hostile SQL and arguments: every call succeeds or throws one of the library's errors, never
/// crashes, never binds a missing argument as NULL, and leaves an intact database behind.
@Suite("HostileInputTests")
struct HostileInputTests {
    /// t: 5 rows and an index. Every specific test checks the rows with `checksum` afterwards.
    static func makeTable(_ db: Db) throws {
        try db.update("create table t(id integer primary key, name text, score real, data blob, tag)")
        try db.update("create index t_name on t(name)")
        try db.batch("insert into t(id, name, score, data, tag) values (?, ?, ?, ?, ?)", [
            [1, "张三", 1.5, Data([0, 1]), nil], [2, "abc", -2, Data(), "x"], [3, "a\u{0}b", 0, nil, 7],
            [4, "🎉", 1e300, Data([255]), 2.5], [5, "", nil, Data([1, 2, 3]), Data()],
        ])
    }

    static func checksum(_ db: Db) throws -> String {
        try db.queryString("""
            select count(*) || ':' || coalesce(group_concat(id || '=' || hex(name) || '/' || ifnull(score, 'N') || '/' ||
                   ifnull(hex(data), 'N') || '/' || ifnull(quote(tag), 'N'), ','), '') from (select * from t order by id)
            """) ?? "none"
    }

    // MARK: Argument counts

    /// Too few or too many arguments throw `.argumentCount` in every method, before anything
    /// runs: a missing argument is never bound as NULL.
    @Test func aWrongArgumentCountThrowsInEveryMethodAndChangesNothing() throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let before = try Self.checksum(db)
            let read = "select * from t where id = ? and name is not ?"
            let write = "update t set name = ? where id = ?"
            let insert = "insert into t(name, tag) values (?, ?)"
            let calls: [(String, () throws -> Void)] = [
                ("find 1", { _ = try db.find(read, 1) }),
                ("find 3", { _ = try db.find(read, 1, nil, 3) }),
                ("find 0", { _ = try db.find(read) }),
                ("findFirst", { _ = try db.findFirst(read, arguments: [1]) }),
                ("each", { try db.each(read, 1) { _ in true } }),
                ("query", { _ = try db.query("select id from t where id > ?", as: Int.self) }),
                ("queryFirst", { _ = try db.queryFirst("select id from t where id > ?", 1, 2, as: Int.self) }),
                ("queryInt", { _ = try db.queryInt("select ?") }),
                ("update 1", { _ = try db.update(write, "x") }),
                ("update 3", { _ = try db.update(write, "x", 1, 2) }),
                ("insert 1", { _ = try db.update(insert, "only the name") }),
                ("insert 0", { _ = try db.update(insert) }),
                ("paginate select part", { _ = try db.paginate(1, 10, "select ? as a, *", "from t where id > ?", 1) }),
                ("paginate rest", { _ = try db.paginate(1, 10, "select *", "from t where id > ? and id < ?", 1) }),
                ("paginate known total", { _ = try db.paginate(1, 10, "select *", "from t where id > ?", totalRow: 5) }),
                ("keyset", { _ = try db.paginate(after: nil, 10, "select *", "from t where id > ? and id < ?", 1) }),
                ("keyset after", { _ = try db.paginate(after: 2, 10, "select *", "from t where id > ?") }),
                ("batch sql", { _ = try db.batch([Sql(insert, "a", 1), Sql(insert, "b")]) }),
                ("batch rows", { _ = try db.batch(insert, [["a", 1], ["b"], ["c", 3]]) }),
                ("batch rows extra", { _ = try db.batch(insert, [["a", 1], ["b", 2, 3]]) }),
                ("tx", { _ = try db.tx { db in try db.update(insert, "a", 1); try db.update(insert, "b"); return true } }),
                ("?NNN gap", { _ = try db.find("select ?3", 1, 2) }),
                ("?NNN then ?", { _ = try db.find("select ?2, ?", 1, 2) }),         // the bare ? is ?3
                ("named as positional, too few", { _ = try db.find("select :a, :b", 1) }),
                ("no placeholder", { _ = try db.update("delete from t where id = 99", 1) }),
            ]
            for (name, call) in calls {
                let error = try #require(throws: DicRecordError.self, "\(name)") { try call() }
                #expect(error.kind == .argumentCount, "\(name): \(error)")
            }
            #expect(try Self.checksum(db) == before)
            #expect(try db.queryInt("select count(*) from t where name is null or tag is null and id > 5") == 0)
            // The right counts work.
            #expect(try db.find("select ?3", 1, 2, 3).count == 1)
            #expect(try db.find("select ?2, ?", 1, 2, 3).first?.get(1, as: Int.self) == 3)
        }
    }

    /// Named arguments: a missing key, an extra key, or a dictionary for positional SQL throws in
    /// every method that takes a dictionary.
    @Test func namedArgumentsWithMissingOrExtraKeysThrowInEveryMethod() throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let before = try Self.checksum(db)
            let sql = "select * from t where id = :id and name != @name and $tag is null"
            let argumentSets: [(String, [String: DatabaseArgument])] = [
                ("missing", ["id": 1, "name": "x"]),
                ("extra", ["id": 1, "name": "x", "tag": nil, "other": 2]),
                ("wrong prefix", ["id": 1, "name": "x", "#tag": nil]),
                ("empty", [:]),
            ]
            for (label, arguments) in argumentSets {
                let calls: [(String, () throws -> Void)] = [
                    ("find", { _ = try db.find(sql, arguments: StatementArguments(arguments)) }),
                    ("findFirst", { _ = try db.findFirst(sql, arguments: StatementArguments(arguments)) }),
                    ("each", { try db.each(sql, arguments: StatementArguments(arguments)) { _ in true } }),
                    ("query", { _ = try db.query("select :id + 0 where @name is $tag", arguments: StatementArguments(arguments), as: Int.self) }),
                    ("update", { _ = try db.update("update t set name = @name where id = :id and $tag is null", arguments: StatementArguments(arguments)) }),
                    ("paginate", { _ = try db.paginate(1, 5, "select *", "from t where id = :id and name != @name and $tag is null", arguments: StatementArguments(arguments)) }),
                    ("batch", { _ = try db.batch([Sql("update t set name = @name where id = :id and $tag is null", arguments: StatementArguments(arguments))]) }),
                ]
                for (name, call) in calls {
                    let error = try #require(throws: DicRecordError.self, "\(label) \(name)") { try call() }
                    #expect(error.kind == .argumentCount, "\(label) \(name): \(error)")
                }
            }
            let positional = try #require(throws: DicRecordError.self) { try db.update("update t set name = ? where id = ?", arguments: ["1": "x", "2": 1]) }
            #expect(positional.kind == .argumentCount)
            #expect(try Self.checksum(db) == before)
            // Exactly the parameters work, with or without their prefix, and nil binds NULL on purpose.
            #expect(try db.find(sql, arguments: [":id": 1, "@name": "x", "tag": nil]).count == 1)
        }
    }

    /// `:a` and `$a` are two parameters; a dictionary may name them ":a" and "a" (a bare key
    /// matches whichever prefix is left). The full name is matched first, so each binds its own
    /// value (the bare key used to win for both, and ":a" was then reported as matching nothing).
    @Test func aPrefixedKeyBindsItsOwnParameterBeforeTheBareKey() throws {
        try withDatabase { t in
            let db = t.db
            let row = try #require(try db.findFirst("select :a as x, $a as y, @b as z", arguments: ["a": 1, ":a": 2, "b": 3]))
            #expect(row.x as Int? == 2 && row.y as Int? == 1 && row.z as Int? == 3)
            let both = try #require(try db.findFirst("select :a as x, $a as y", arguments: [":a": 2, "$a": 1]))
            #expect(both.x as Int? == 2 && both.y as Int? == 1)
            let bare = try #require(try db.findFirst("select :a as x, $a as y", arguments: ["a": 5]))
            #expect(bare.x as Int? == 5 && bare.y as Int? == 5)
            // A key that matches no parameter still throws, and names that key.
            let extra = try #require(throws: DicRecordError.self) { try db.find("select :a as x", arguments: ["a": 1, ":a": 2]) }
            #expect(extra.kind == .argumentCount)
            #expect(extra.description.contains("[\"a\"]"))
        }
    }

    // MARK: Placeholder numbers

    @Test(arguments: ["select ?0", "select ?999999", "select ?250001", "select ?9223372036854775808", "select * from t where id = ?0 or id = ?"])
    func placeholderZeroAndNumbersOutOfRangeThrow(_ sql: String) throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let before = try Self.checksum(db)
            for arguments in [[], [1], [1, 2]] as [[DatabaseArgument]] {
                let find = try #require(throws: DatabaseError.self) { try db.find(sql, arguments: StatementArguments(arguments)) }
                #expect(find.sql == sql && find.resultCode == 1)
                #expect(throws: DatabaseError.self) { try db.update(sql, arguments: StatementArguments(arguments)) }
                #expect(throws: DatabaseError.self) { try db.query(sql, arguments: StatementArguments(arguments), as: Int.self) }
                #expect(throws: DatabaseError.self) { try db.each(sql, arguments: StatementArguments(arguments)) { _ in true } }
                #expect(throws: DatabaseError.self) { try db.paginate(1, 10, "select *", "from (\(sql))", arguments: StatementArguments(arguments)) }
                #expect(throws: DatabaseError.self) { try db.batch([Sql(sql, arguments: StatementArguments(arguments))]) }
            }
            #expect(try Self.checksum(db) == before)
        }
    }

    /// Up to SQLite's limit (250,000 on this build, 32,766 by default) any number of placeholders
    /// binds, and one argument more or less still throws.
    @Test func fortyThousandPlaceholders() throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let count = 40_000
            let sql = "select count(*) from t where id in (" + Array(repeating: "?", count: count).joined(separator: ",") + ")"
            let ids: [DatabaseArgument] = (0..<count).map { $0 % 3 == 0 ? $0 : nil }
            // SQLite names its limit in the message for ?0: "variable number must be between ?1 and ?250000".
            let message = try #require(throws: DatabaseError.self) { try db.find("select ?0") }.message
            let limit = try #require(message.split(separator: "?").last.flatMap { Int($0.prefix { $0.isNumber }) })
            #expect(limit >= 999)
            if count <= limit {
                #expect(try db.queryFirst(sql, arguments: StatementArguments(ids), as: Int.self) == 1)        // 0, 3, 6, ...: of the rows, only 3
                for wrong in [Array(ids.dropLast()), ids + [1]] {
                    let error = try #require(throws: DicRecordError.self) { try db.queryFirst(sql, arguments: StatementArguments(wrong), as: Int.self) }
                    #expect(error.kind == .argumentCount)
                }
            } else {
                #expect(throws: DatabaseError.self) { try db.queryFirst(sql, arguments: StatementArguments(ids), as: Int.self) }
            }
            let tooMany = "select count(*) from t where id in (" + Array(repeating: "?", count: limit + 1).joined(separator: ",") + ")"
            let error = try #require(throws: DatabaseError.self) { try db.queryFirst(tooMany, arguments: StatementArguments(Array(repeating: 1, count: limit + 1)), as: Int.self) }
            #expect(error.message.contains("too many SQL variables"))
        }
    }

    // MARK: Several statements, NUL

    @Test(arguments: [
        "select * from t; delete from t",
        "update t set name = 'x'; delete from t",
        "delete from t where id = 1;delete from t",
        "select 1;\nselect 2 -- second",
        "insert into t(name) values ('z'); /* c */ insert into t(name) values ('y')",
    ])
    func twoStatementsThrowAndTheSecondNeverRuns(_ sql: String) throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let before = try Self.checksum(db)
            let calls: [(String, () throws -> Void)] = [
                ("find", { _ = try db.find(sql) }), ("findFirst", { _ = try db.findFirst(sql) }),
                ("each", { try db.each(sql) { _ in true } }), ("query", { _ = try db.query(sql, as: DatabaseValue.self) }),
                ("update", { _ = try db.update(sql) }), ("batch", { _ = try db.batch([Sql(sql)]) }),
                ("batch rows", { _ = try db.batch(sql, [[]]) }),
                ("tx", { _ = try db.tx { db in try db.update(sql); return true } }),
            ]
            for (name, call) in calls {
                let error = try #require(throws: DicRecordError.self, "\(name)") { try call() }
                #expect(error.kind == .multipleStatements, "\(name)")
                #expect(error.sql == sql)
            }
            // Wrapped in the count query, it is a syntax error: still nothing runs.
            #expect(throws: (any Error).self) { try db.paginate(1, 10, "select *", "from t; delete from t") }
            #expect(try Self.checksum(db) == before)
        }
    }

    @Test(arguments: ["select * from t;", "select * from t; ;; ", "select * from t; -- done", "select * from t; /* done */\n", "select * from t --x"])
    func trailingSemicolonsAndCommentsAreOneStatement(_ sql: String) throws {
        try withDatabase { t in
            try Self.makeTable(t.db)
            #expect(try t.db.find(sql).count == 5)
        }
    }

    /// NUL where SQLite's own parser stops: the statement before it is incomplete, or nothing
    /// is left at all; either way the call throws and nothing runs.
    @Test(arguments: ["\u{0}select 1", "select 'a\u{0}b'", "delete from t where name = 'x\u{0}'", "update t set name = \u{0}'x'",
                      "\u{0}", "select * from t where id = \u{0}1"])
    func aNulThatCutsTheStatementShortThrows(_ sql: String) throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let before = try Self.checksum(db)
            #expect(throws: (any Error).self) { try db.update(sql) }
            #expect(throws: (any Error).self) { try db.find(sql) }
            #expect(throws: (any Error).self) { try db.batch([Sql(sql)]) }
            #expect(try Self.checksum(db) == before)
        }
    }

    /// SQL after a NUL character would never be seen by SQLite (the text goes to
    /// `sqlite3_prepare_v3` as a C string), so `delete from t\0 where id = 1` would delete every
    /// row. It throws, like a second statement.
    @Test(arguments: ["delete from t\u{0} where id = 1", "select * from t where id = 1\u{0} or 1", "select 1\u{0}; delete from t",
                      "update t set name = 'x'\u{0}where id = 2"])
    func textAfterANulIsNeverSilentlyDropped(_ sql: String) throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let before = try Self.checksum(db)
            #expect(throws: (any Error).self) { try db.update(sql) }
            #expect(throws: (any Error).self) { try db.find(sql) }
            #expect(try Self.checksum(db) == before)
        }
    }

    /// A trailing `--` comment in sqlExceptSelect must not comment out the LIMIT of the data
    /// query, nor the closing parenthesis of the count (it once did both).
    @Test
    func aTrailingLineCommentDoesNotSwallowTheLimit() throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let known = try db.paginate(1, 2, "select *", "from t -- every row", totalRow: 5)
            #expect(known.list.count == 2)
            let counted = try db.paginate(1, 2, "select *", "from t -- every row")
            #expect(counted.list.count == 2 && counted.totalRow == 5)
        }
    }

    // MARK: Identifiers

    /// A `"` followed by a combining mark is one Character to Swift (`"́`) but a quote to SQLite:
    /// quoting once matched whole Characters, left it single, and let a table name from outside
    /// inject SQL (`findAll` below returned rows of sqlite_master). Quotes are doubled per scalar.
    @Test
    func quotingAQuoteFollowedByACombiningMark() throws {
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            let name = "a\"\u{301}b"
            #expect(Array(SqlText.quote(name).unicodeScalars) == Array("\"a\"\"\u{301}b\"".unicodeScalars))

            let hostile = "t\"\u{301} where 0 union select 7, name, 0, 0, 0 from sqlite_master --"
            #expect(throws: DatabaseError.self) { try db.findAll(hostile) }

            // A column whose name holds such a quote can be saved and read back.
            try db.update("create table odd(id integer primary key, " + PropertyTests.quoteIdentifier(name) + " text)")
            let record = Record()
            record[name] = "v"
            #expect(try db.save("odd", record))
            #expect(try db.findAll("odd").first?[name] as? String == "v")
        }
    }

    // MARK: JSON

    /// `\u` takes exactly four hex digits: a sign is not one (it used to read "\u+041" as "A").
    @Test(arguments: [#"{"a": "\u+041"}"#, #"{"a": "\u-000"}"#, #"{"a": "\u 041"}"#, #"{"a": "\u04"}"#, #"{"a": "\u004g"}"#,
                      #"{"a": "\ud83c\u+f89"}"#])
    func jsonUnicodeEscapesNeedFourHexDigits(_ json: String) throws {
        let error = try #require(throws: DicRecordError.self) { try Record(json: json) }
        #expect(error.kind == .invalidJSON)
    }

    @Test func jsonUnicodeEscapesInEitherCaseStillParse() throws {
        let record = try Record(json: #"{"a": "\u00e9\u00C9\ud83c\uDF89\u0000"}"#)
        #expect(Array((record.a as String?)?.unicodeScalars ?? "".unicodeScalars) == ["é", "É", "🎉", "\u{0}"])
    }

    /// Truncated, mutated and random JSON texts: `Record(json:)` returns a record or throws
    /// `.invalidJSON`, and a record it returns writes JSON that reads back as the same record.
    @Test func generatedJSONTextsParseOrThrow() throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        let samples = [#"{"name": "张三", "age": 14, "born": 1020873600, "x": [1, {"a": null}], "y": -0.5e-3, "z": true, "w": "\u00e9\ud83c\udf89"}"#,
                       #"{"":{},"a":[],"b":"\\\"\/\b\f\n\r\t","c":-0,"d":1E+2,"e":9223372036854775808}"#]
        let alphabet = Array("{}[]\",:\\u0123456789abcdefABCDEFeE+-.tfnrul \t\n\u{0}".utf8) + [0xFF, 0xC3, 0xE4]
        var parsed = 0
        for iteration in 0..<10_000 {
            var rng = SplitMix64(seed: seed, stream: UInt64(iteration))
            var bytes = Array(rng.pick(samples).utf8)
            switch iteration % 4 {
            case 0: bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &rng)))
            case 1: for _ in 0..<Int.random(in: 1...3, using: &rng) { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = rng.pick(alphabet) }
            case 2:
                let piece = rng.pick(["\\u", "\\ud800", "\\udc00\\ud800", "1e999", "-", "01", "[[[[", "\"", "\\", "\u{0}", "nul", "tru"])
                bytes.insert(contentsOf: Array(piece.utf8), at: Int.random(in: 0...bytes.count, using: &rng))
            default: bytes = (0..<Int.random(in: 0...40, using: &rng)).map { _ in rng.pick(alphabet) }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            do {
                let record = try Record(json: text)
                parsed += 1
                let again = try Record(json: try record.toJSON())
                #expect(again == record, "seed \(seed), iteration \(iteration): \(text.debugDescription)")
            } catch let error as DicRecordError {
                #expect(error.kind == .invalidJSON, "seed \(seed), iteration \(iteration): \(text.debugDescription)")
            }
        }
        #expect(parsed > 100)
        // Nesting is bounded, never a stack overflow.
        for depth in [512, 513, 200_000] {
            let text = "{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}"
            if depth <= 512 {
                #expect(try Record(json: text).columnCount == 1)
            } else {
                #expect(throws: DicRecordError.self) { try Record(json: text) }
            }
        }
    }

    // MARK: Generated inputs

    /// 10,000 generated SQL strings with generated arguments through every entry point. The seed
    /// is printed; set DICRECORD_FUZZ_SEED to replay it (DICRECORD_FUZZ_TRACE=1 prints each input
    /// before it runs, to find one that crashes).
    @Test func tenThousandGeneratedInputsSucceedOrThrow() throws {
        let seed = ProcessInfo.processInfo.environment["DICRECORD_FUZZ_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        let trace = ProcessInfo.processInfo.environment["DICRECORD_FUZZ_TRACE"] == "1"
        print("HostileInputTests seed: \(seed) (DICRECORD_FUZZ_SEED=\(seed) replays it)")
        try withDatabase { t in
            let db = t.db
            try Self.makeTable(db)
            try db.update("pragma synchronous = off")     // an fsync per write would dominate; durability is not under test
            var stats = FuzzStats()
            for iteration in 0..<10_000 {
                var rng = SplitMix64(seed: seed, stream: UInt64(iteration))
                let input = HostileInput.make(&rng)
                if trace { FileHandle.standardError.write(Data("[\(iteration)] \(input)\n".utf8)) }
                let problem = input.check(on: db, stats: &stats)
                if let problem {
                    Issue.record("""
                        unexpected outcome: \(problem)
                        seed \(seed), iteration \(iteration); replay with DICRECORD_FUZZ_SEED=\(seed)
                        input: \(input)
                        """)
                }
                // A raw BEGIN (legal SQL) leaves the writer in a transaction that would make every
                // later batch and tx fail: end it, and count it.
                if try db.execute({ $0.isInTransaction }) {
                    stats.leftOpenTransactions += 1
                    try db.update("ROLLBACK")
                }
                if iteration % 1000 == 999 {
                    #expect(try db.queryInt("select count(*) from t") != nil)
                    try db.update("insert or replace into t(id, name) values (1, '张三'), (2, 'abc'), (3, 'a' || char(0) || 'b')")
                }
            }
            print("HostileInputTests: \(stats)")
            if ProcessInfo.processInfo.environment["DICRECORD_FUZZ_EXAMPLES"] == "1" {
                for (name, example) in stats.examples.sorted(by: { $0.key < $1.key }) { print("  \(name): \(example)") }
            }
            // Everything ran: a good part of the calls succeeded, a good part threw.
            #expect(stats.succeeded > 1000 && stats.threw > 3000, "\(stats)")

            #expect(try db.queryString("pragma integrity_check") == "ok")
            #expect(try db.queryInt("select count(*) from t") ?? 0 >= 3)
            #expect(try db.find("select * from t where name = ?", "abc").count >= 1)
            #expect(try db.queryInt("select count(*) from sqlite_master where type = 'index' and name = 't_name'") == 1)
            let plan = try db.find("explain query plan select * from t where name = ?", "abc")
            #expect(plan.contains { ($0.detail as String?)?.contains("t_name") == true })
            // The library still works normally.
            let record = Record()
            record.name = "ok"
            #expect(try db.tx { db in try db.save("t", record) })
            let id = try #require(record.id as Int64?)
            #expect(try db.findById("t", id)?.name as String? == "ok")
        }
    }
}

// MARK: - Generation

struct FuzzStats: CustomStringConvertible {
    var succeeded = 0
    var threw = 0
    var byError: [String: Int] = [:]
    var leftOpenTransactions = 0
    /// The first input that threw each kind of error.
    var examples: [String: String] = [:]

    var description: String {
        "\(succeeded) succeeded, \(threw) threw (\(byError.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))), "
            + "\(leftOpenTransactions) raw transactions left open"
    }
}

struct HostileInput: CustomStringConvertible {
    enum Arguments {
        case positional([DatabaseArgument])
        case named([String: DatabaseArgument])
    }

    enum Method {
        case find, findFirst, update, each(stopAfter: Int), query(Int), queryFirst(Int)
        case paginate(page: Int, size: Int, split: Int, totalRow: Int?)
        case keyset(after: DatabaseArgument, size: Int, split: Int, descending: Bool)
        case batch([(String, Arguments)]), batchRows([[DatabaseArgument]])
        case tx(commit: Bool)
    }

    var sql: String
    var arguments: Arguments
    var method: Method

    // MARK: Making one

    static let statements = [
        "select * from t where id = ?",
        "select id, name from t where name like ? order by id limit ?",
        "select count(*), sum(score) from t group by tag having count(*) > ?",
        "insert into t(name, score, data, tag) values (?, ?, ?, ?)",
        "insert into t(name) values (:name)",
        "update t set score = score + ? where id = ?",
        "update t set name = :name, tag = @tag where id = $id",
        "delete from t where id = ? and id > 5",
        "select ?1, ?2, ?1",
        "select :a, @b, $c, :a",
        "select json_extract(?, '$.a'), json_valid(?)",
        "select * from t where id in (select id from t where score > ?) order by name desc",
        "select typeof(?), length(?), hex(?), quote(?)",
        "with x(a) as (select ?) select * from x",
        "select * from t as a join t as b on a.id = b.id where a.id > ?",
        "insert into t(name) select name from t where id = ? returning id, name",
        "select case when ? then 1 else 0 end",
        "select cast(? as integer), cast(? as real), cast(? as text), cast(? as blob)",
        "select ? like ?, ? glob ?, ? between ? and ?",
        "select abs(?), -?, ? + ?, ? * ?, ? / ?, ? % ?",
        "select * from t where name = ? collate nocase",
        "select distinct tag from t order by 1 limit ? offset ?",
        "create table if not exists extra(a, b)",
        "create index if not exists t_score on t(score)",
        "insert into extra values (?, ?)",
        "select * from extra",
        "explain select * from t where id = ?",
        "explain query plan select * from t where name = ?",
        "select * from t where rowid = ?",
        "values (?, ?), (?, ?)",
        "BEGIN", "BEGIN IMMEDIATE", "COMMIT", "ROLLBACK", "END", "SAVEPOINT s", "RELEASE s", "ROLLBACK TO s",
    ]

    static let vocabulary = [
        "SELECT", "INSERT INTO", "INSERT OR REPLACE INTO", "UPDATE", "DELETE FROM", "FROM", "WHERE", "ORDER BY", "GROUP BY",
        "HAVING", "LIMIT", "OFFSET", "VALUES", "SET", "AS", "AND", "OR", "NOT", "IN", "LIKE", "GLOB", "BETWEEN", "IS",
        "NULL", "CASE", "WHEN", "THEN", "ELSE", "END", "DISTINCT", "UNION", "UNION ALL", "EXISTS", "CREATE TABLE",
        "CREATE INDEX", "IF NOT EXISTS", "ON", "JOIN", "LEFT JOIN", "RETURNING", "DEFAULT VALUES", "WITH", "COLLATE NOCASE",
        "ESCAPE", "DESC", "ASC", "BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "EXPLAIN", "EXPLAIN QUERY PLAN",
        "t", "t", "t", "extra", "id", "name", "score", "data", "tag", "rowid", "*", "count(*)",
        "count(", "sum(", "abs(", "length(", "upper(", "lower(", "typeof(", "quote(", "hex(", "coalesce(", "ifnull(",
        "nullif(", "substr(", "instr(", "trim(", "json(", "json_extract(", "json_array(", "unicode(", "char(", "min(",
        "max(", "total(", "round(", "cast(", "AS INTEGER)", "AS BLOB)", "(", "(", ")", ")", ",", ",", ";", "=", "==",
        "<>", "!=", "<", ">", "<=", ">=", "+", "-", "*", "/", "%", "||", "&", "|", "<<", ">>", "~",
        "'", "\"", "`", "[", "]", "'text'", "'it''s'", "\"name\"", "[name]", "`name`", "x'00ff'", "x''", "x'0'",
        "0", "1", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e308", "1e309", "0.5",
        ".5e-3", "0x7fffffffffffffff", "0xffffffffffffffffff", "1_000",
        "?", "?", "?", "?1", "?2", "?0", "?999999", "?32766", "?32767", "?250000", "?250001", "?9223372036854775807",
        ":name", ":a", "@b", "$c", "$d::e(f)", ":", "@", "$", "?a",
        "--", "/*", "*/", "\u{0}", "\n", "'unterminated", "\"unterminated", "张三", "🎉", "\u{FEFF}", "\u{301}",
    ]

    /// The parameters of the statements that take named ones (the others take positional ones only).
    static let namedParameters = [
        "insert into t(name) values (:name)": [":name"],
        "update t set name = :name, tag = @tag where id = $id": [":name", "@tag", "$id"],
        "select :a, @b, $c, :a": [":a", "@b", "$c"],
    ]

    /// The number of parameters of each statement.
    static let parameterCounts: [String: Int] = {
        var counts: [String: Int] = [:]
        for sql in statements {
            var count = sql.filter { $0 == "?" }.count
            if sql.contains("?1") { count = 2 }                    // "select ?1, ?2, ?1"
            counts[sql] = namedParameters[sql]?.count ?? count
        }
        return counts
    }()

    static func make(_ rng: inout SplitMix64) -> HostileInput {
        let sql = makeSQL(&rng)
        var arguments = makeArguments(for: sql, &rng)
        if let count = parameterCounts[sql], !rng.chance(3) {
            // A valid statement with the right arguments: the binding and running paths, and the
            // wrong-count check after a success.
            if let names = namedParameters[sql], rng.chance(2) {
                arguments = .named(Dictionary(uniqueKeysWithValues: names.map { name in
                    (rng.chance(2) ? name : String(name.dropFirst()), makeArgument(&rng))
                }))
            } else {
                arguments = .positional((0..<count).map { _ in makeArgument(&rng) })
            }
        }
        return HostileInput(sql: sql, arguments: arguments, method: makeMethod(sql, &rng))
    }

    static func makeSQL(_ rng: inout SplitMix64) -> String {
        switch Int.random(in: 0..<100, using: &rng) {
        case 0..<10:
            // Random bytes, invalid UTF-8 decoded lossily; NULs and quotes welcome.
            let bytes = (0..<Int.random(in: 0...80, using: &rng)).map { _ in
                rng.chance(4) ? rng.pick(Array("'\"();?:@$ \u{0}".utf8)) : UInt8.random(in: 0...255, using: &rng)
            }
            return String(decoding: bytes, as: UTF8.self)
        case 10..<22:
            // A valid statement cut anywhere (by bytes, so possibly mid-character).
            let statement = Array(rng.pick(statements).utf8)
            return String(decoding: statement.prefix(Int.random(in: 0...statement.count, using: &rng)), as: UTF8.self)
        case 22..<37:
            // A valid statement with one token inserted, replaced or appended.
            var words = rng.pick(statements).split(separator: " ").map(String.init)
            let token = rng.pick(vocabulary)
            let at = Int.random(in: 0...words.count, using: &rng)
            if at < words.count, rng.chance(2) { words[at] = token } else { words.insert(token, at: at) }
            return words.joined(separator: rng.chance(8) ? "" : " ")
        case 37..<62:
            // Token soup.
            return (0..<Int.random(in: 1...25, using: &rng)).map { _ in rng.pick(vocabulary) }
                .joined(separator: rng.chance(10) ? "" : " ")
        case 62..<92:
            return rng.pick(statements)
        case 92..<98:
            // ?NNN and named forms.
            let number = rng.pick(["0", "1", "2", "32766", "32767", "99999", "250000", "250001", "999999", "2147483648",
                                   "9223372036854775807", "99999999999999999999", "-1", "1.5", ""])
            return rng.pick(["select ?\(number)", "select * from t where id = ?\(number) or id = ?", "select ?, ?\(number), ?",
                             "select :n\(number), ?\(number)", "update t set tag = ?\(number) where id = 1"])
        default:
            // Huge numbers of placeholders.
            let list = rng.pick(placeholderLists)
            return rng.pick(["select count(*) from t where id in (\(list))", "select \(list)", "insert into extra values (\(list))"])
        }
    }

    static let placeholderLists = [999, 32_766, 32_767, 40_000].map { Array(repeating: "?", count: $0).joined(separator: ",") }
    static let hugeString = String(repeating: "汉字 and text ", count: 60_000)
    static let hugeData = Data((0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    /// The cases of `makeArgument` that no converter accepts.
    static let unbindable: Set = [4, 8, 13, 27, 32, 33, 37]

    static func makeArgument(_ rng: inout SplitMix64) -> DatabaseArgument {
        var which = Int.random(in: 0..<44, using: &rng)
        if unbindable.contains(which), !rng.chance(3) { which = Int.random(in: 0..<44, using: &rng) }   // fewer of them
        switch which {
        case 0: return nil
        case 1: return Int.min
        case 2: return Int.max
        case 3: return Int.random(in: -5...10, using: &rng)
        case 4: return UInt64.max
        case 5: return UInt64(Int64.max)
        case 6: return Int8.min
        case 7: return UInt8.max
        case 8: return Double.nan
        case 9: return Double.infinity
        case 10: return -Double.infinity
        case 11: return -0.0
        case 12: return Double.leastNonzeroMagnitude
        case 13: return Float.nan
        case 14: return ""
        case 15: return rng.chance(8) ? hugeString : "short"
        case 16: return "a\u{0}b"
        case 17: return "🎉👨‍👩‍👧 张三"
        case 18: return "'); delete from t; --"
        case 19: return Data()
        case 20: return rng.chance(8) ? hugeData : Data([0, 1, 2])
        case 21: return [UInt8]()
        case 22: return Date(timeIntervalSince1970: Double.random(in: -1e10...1e10, using: &rng))
        case 23: return Date.distantPast
        case 24: return Date(timeIntervalSince1970: .infinity)
        case 25: return URL(string: "https://例子.测试/路径?q=1")!
        case 26: return UUID()
        case 27: return Decimal.nan
        case 28: return Decimal.greatestFiniteMagnitude
        case 29: return Color(red: 1, green: 2, blue: 3)
        case 30: return CGRect(x: Double.nan, y: 1, width: 2, height: 3)
        case 31: return Bool.random(using: &rng)
        case 32: return [1, 2, 3]                              // no converter
        case 33: return ["a": 1]                               // no converter
        case 34: return Optional<Optional<Int>>.some(nil)      // a nested nil
        case 35: return DatabaseValue.blob(Data())
        case 36: return DatabaseValue.real(.nan)               // passed through as it is
        case 37: return Opaque()
        case 38: return NSRange(location: Int.max, length: Int.min)
        case 39: return Int64.random(in: Int64.min...Int64.max, using: &rng)
        case 40: return "{\"a\": [1, 2, {\"b\": null}]}"
        case 41: return Decimal(string: "-0.000000000000000000000000000000000001")!
        case 42: return Int32.max
        default: return Float(-0.0)
        }
    }

    static func makeArguments(for sql: String, _ rng: inout SplitMix64) -> Arguments {
        if rng.chance(5) {
            var named: [String: DatabaseArgument] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                named[rng.pick(["name", ":name", "a", ":a", "b", "@b", "c", "$c", "id", "$id", "tag", "@tag", "", "n1", "?1", "1", "d::e(f)"])] = makeArgument(&rng)
            }
            return .named(named)
        }
        // Usually the right count (so that binding runs), sometimes one off, sometimes anything.
        var placeholders = 0
        for byte in sql.utf8 where byte == UInt8(ascii: "?") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "@") || byte == UInt8(ascii: "$") {
            placeholders += 1
        }
        let count = switch Int.random(in: 0..<6, using: &rng) {
        case 0, 1, 2: placeholders
        case 3: max(0, placeholders + rng.pick([-1, 1]))
        case 4: 0
        default: Int.random(in: 0...8, using: &rng)
        }
        if count > 1000 {
            // Many placeholders: cheap values (a huge string in each would be 40,000 copies).
            var values: [DatabaseArgument] = Array(repeating: 7, count: count)
            for _ in 0..<5 { values[Int.random(in: 0..<count, using: &rng)] = makeArgument(&rng) }
            return .positional(values)
        }
        return .positional((0..<count).map { _ in makeArgument(&rng) })
    }

    static func makeMethod(_ sql: String, _ rng: inout SplitMix64) -> Method {
        let split = Int.random(in: 0...sql.unicodeScalars.count, using: &rng)
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return .find
        case 1: return .findFirst
        case 2: return .update
        case 3: return .each(stopAfter: Int.random(in: 0...3, using: &rng))
        case 4: return .query(Int.random(in: 0..<8, using: &rng))
        case 5: return .queryFirst(Int.random(in: 0..<8, using: &rng))
        case 6:
            return .paginate(page: rng.pick([1, 1, 2, 3, 0, -1, Int.max, Int.min]), size: rng.pick([1, 2, 10, 0, -5, Int.max]),
                             split: split, totalRow: rng.chance(5) ? rng.pick([0, 3, -1, Int.max]) : nil)
        case 7:
            return .keyset(after: rng.chance(2) ? nil : makeArgument(&rng), size: rng.pick([1, 3, 0, Int.max - 1, Int.max]),
                           split: split, descending: rng.chance(2))
        case 8:
            var statements = [(String, Arguments)]()
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                let sql = rng.chance(2) ? makeSQL(&rng) : rng.pick(Self.statements)
                statements.append((sql, makeArguments(for: sql, &rng)))
            }
            return .batch(statements)
        case 9:
            return .batchRows((0..<Int.random(in: 0...3, using: &rng)).map { _ in
                (0..<Int.random(in: 0...4, using: &rng)).map { _ in makeArgument(&rng) }
            })
        default:
            return .tx(commit: rng.chance(2))
        }
    }

    // MARK: Running one

    /// Runs the input; nil when it succeeded or threw one of the library's errors, else what went wrong.
    func check(on db: Db, stats: inout FuzzStats) -> String? {
        do {
            try run(on: db, arguments: arguments)
            stats.succeeded += 1
        } catch {
            stats.threw += 1
            guard let name = Self.libraryErrorName(error) else { return "threw \(type(of: error)): \(error)" }
            stats.byError[name, default: 0] += 1
            if stats.examples[name] == nil { stats.examples[name] = "\(self) → \(error)" }
            return nil
        }
        // It bound: one argument more, or one less, must now throw (never a silent NULL or drop).
        guard isSingleStatementCall else { return nil }
        for wrong in wrongCounts {
            do {
                try run(on: db, arguments: wrong)
                return "succeeded with \(arguments.count) arguments and also with \(wrong.count)"
            } catch {
                if Self.libraryErrorName(error) == nil { return "threw \(type(of: error)): \(error)" }
            }
        }
        return nil
    }

    static func libraryErrorName(_ error: any Error) -> String? {
        switch error {
        case let e as DicRecordError: "\(e.kind)"
        case let e as DatabaseError: "sqlite \(e.resultCode)"
        case is ConversionError: "conversion"
        default: nil
        }
    }

    private var isSingleStatementCall: Bool {
        switch method {
        case .find, .findFirst, .update, .each, .query, .queryFirst: true
        default: false
        }
    }

    private var wrongCounts: [Arguments] {
        switch arguments {
        case .positional(let values):
            values.isEmpty ? [.positional([1])] : [.positional(values + [1]), .positional(Array(values.dropLast()))]
        case .named(let values):
            [.named(values.merging(["zz_not_a_parameter": 1]) { a, _ in a })]
        }
    }

    func run(on db: Db, arguments: Arguments) throws {
        switch method {
        case .find: _ = try db.find(sql, arguments)
        case .findFirst: _ = try db.findFirstRecord(sql, arguments.library)
        case .update: _ = try db.updateRows(sql, arguments.library)
        case .each(let stopAfter):
            var seen = 0
            try db.eachRecord(sql, arguments.library) { record in
                _ = record.columnNames
                seen += 1
                return seen < stopAfter
            }
        case .query(let type): try Self.query(db, sql, arguments, type, first: false)
        case .queryFirst(let type): try Self.query(db, sql, arguments, type, first: true)
        case .paginate(let page, let size, let split, let totalRow):
            let (select, rest) = splitSQL(split)
            _ = try db.paginateRecords(page, size, select, rest, arguments.library, totalRow: totalRow)
        case .keyset(let after, let size, let split, let descending):
            let (select, rest) = splitSQL(split)
            guard case .positional(let values) = arguments else {
                _ = try db.paginateRecords(after: after, size, select, rest, [], keyColumn: "id", descending: descending)
                return
            }
            _ = try db.paginateRecords(after: after, size, select, rest, values, keyColumn: "id", descending: descending)
        case .batch(let statements):
            _ = try db.batch(statements.map { sql, arguments in
                switch arguments {
                case .positional(let values): Sql(sql, arguments: StatementArguments(values))
                case .named(let values): Sql(sql, arguments: StatementArguments(values))
                }
            })
        case .batchRows(let rows):
            _ = try db.batch(sql, rows)
        case .tx(let commit):
            _ = try db.tx { db in
                _ = try db.updateRows(sql, arguments.library)
                return commit
            }
        }
    }

    private static func query(_ db: Db, _ sql: String, _ arguments: Arguments, _ type: Int, first: Bool) throws {
        let limit = first ? 1 : nil
        switch type {
        case 0: _ = try db.queryValues(sql, arguments.library, as: Int.self, limit: limit)
        case 1: _ = try db.queryValues(sql, arguments.library, as: String.self, limit: limit)
        case 2: _ = try db.queryValues(sql, arguments.library, as: Double.self, limit: limit)
        case 3: _ = try db.queryValues(sql, arguments.library, as: Data.self, limit: limit)
        case 4: _ = try db.queryValues(sql, arguments.library, as: Date.self, limit: limit)
        case 5: _ = try db.queryValues(sql, arguments.library, as: Bool.self, limit: limit)
        case 6: _ = try db.queryValues(sql, arguments.library, as: DatabaseValue.self, limit: limit)
        default: _ = try db.queryValues(sql, arguments.library, as: Decimal.self, limit: limit)
        }
    }

    private func splitSQL(_ at: Int) -> (String, String) {
        let scalars = Array(sql.unicodeScalars)
        let at = min(at, scalars.count)
        return (String(String.UnicodeScalarView(scalars[..<at])), String(String.UnicodeScalarView(scalars[at...])))
    }

    // MARK: Describing one

    var description: String {
        let shownSQL = sql.utf8.count > 300 ? String(sql.prefix(150)).debugDescription + "… (\(sql.utf8.count) bytes)" : sql.debugDescription
        return "\(method.name) \(shownSQL) with \(arguments)"
    }
}

extension HostileInput.Arguments: CustomStringConvertible {
    var count: Int {
        switch self {
        case .positional(let values): values.count
        case .named(let values): values.count
        }
    }

    var library: DicRecord.Arguments {
        switch self {
        case .positional(let values): .positional(values)
        case .named(let values): .named(values)
        }
    }

    static func describe(_ value: DatabaseArgument) -> String {
        guard let value else { return "nil" }
        if let s = value as? String, s.count > 40 { return "String(\(s.utf8.count) bytes)" }
        if let d = value as? Data, d.count > 40 { return "Data(\(d.count) bytes)" }
        return "\(type(of: value))(\(String(reflecting: value)))"
    }

    var description: String {
        switch self {
        case .positional(let values):
            values.count > 20 ? "\(values.count) positional arguments" : "[" + values.map(Self.describe).joined(separator: ", ") + "]"
        case .named(let values):
            "[" + values.sorted { $0.key < $1.key }.map { "\($0.key.debugDescription): \(Self.describe($0.value))" }.joined(separator: ", ") + "]"
        }
    }
}

extension HostileInput.Method {
    var name: String {
        switch self {
        case .find: "find"
        case .findFirst: "findFirst"
        case .update: "update"
        case .each(let stopAfter): "each(stop after \(stopAfter))"
        case .query(let type): "query(as type #\(type))"
        case .queryFirst(let type): "queryFirst(as type #\(type))"
        case .paginate(let page, let size, let split, let totalRow): "paginate(\(page), \(size), split at \(split), totalRow \(String(describing: totalRow)))"
        case .keyset(let after, let size, let split, let descending):
            "paginate(after: \(HostileInput.Arguments.describe(after)), \(size), split at \(split), descending \(descending))"
        case .batch(let statements): "batch(\(statements.map { "\($0.0.debugDescription) with \($0.1)" }))"
        case .batchRows(let rows): "batch(rows: \(rows.map { $0.map(HostileInput.Arguments.describe) }))"
        case .tx(let commit): "tx(update, commit: \(commit))"
        }
    }
}

extension Db {
    /// `find` with the test's argument enum.
    fileprivate func find(_ sql: String, _ arguments: HostileInput.Arguments) throws -> [Record] {
        try findRecords(sql, arguments.library)
    }
}
