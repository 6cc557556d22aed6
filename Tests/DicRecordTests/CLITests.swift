import Foundation
import Testing

// The `dicrecord` command-line tool (Samples/dicrecord), run as a process on databases that the
// sqlite3 CLI creates, its output compared with what `sqlite3 -json` says about the same data.

/// One test's temporary folder, the tools it runs, and a database created by sqlite3.
private struct CLIFixture {
    let folder: URL
    let dicrecord: URL

    static let sqlite3 = URL(fileURLWithPath: "/usr/bin/sqlite3")

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        dicrecord = try builtExecutable("dicrecord")
    }

    func cleanUp() { try? FileManager.default.removeItem(at: folder) }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Runs `executable` in this fixture's folder.
    func run(_ executable: URL, _ arguments: [String]) throws -> ProcessRun {
        try runProcess(executable, arguments, scratch: folder)
    }

    func dicrecord(_ arguments: String...) throws -> ProcessRun { try run(dicrecord, arguments) }

    /// Runs sqlite3 and requires it to succeed.
    @discardableResult
    func sqlite(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> Data {
        let result = try run(Self.sqlite3, arguments)
        try #require(result.status == 0, "sqlite3 \(arguments) failed: \(result.errors)", sourceLocation: sourceLocation)
        return result.output
    }

    /// `sqlite3 -json db sql`, parsed: an array of objects (empty when sqlite3 prints nothing).
    func sqliteJSON(_ db: String, _ sql: String) throws -> [[String: Any]] {
        let data = try sqlite("-json", db, sql)
        if data.allSatisfy({ $0 == 0x0A || $0 == 0x20 }) { return [] }
        let parsed = try JSONSerialization.jsonObject(with: data)
        return try #require(parsed as? [[String: Any]])
    }

    /// A database with the table `t`, created by sqlite3: text with Chinese, quotes, commas,
    /// newlines and tabs; NULLs; integers at both ends of 64 bits; reals; blobs; text that looks
    /// like numbers or NULL.
    func sampleDatabase(_ name: String = "sample.db") throws -> String {
        let db = path(name)
        try sqlite(db, """
            create table t(id integer primary key, name text, score real, note text, data blob, n integer, plain);
            insert into t values (1, '张三', 1.5, 'say "hi", then' || char(10) || 'leave', x'00ff41', 42, 'x');
            insert into t values (2, 'Zoë naïve', -0.25, '', NULL, -9223372036854775808, 7);
            insert into t values (3, NULL, 1e300, 'a,b;c''d "q"', x'', 0, 2.5);
            insert into t values (4, '日本語テキスト', 3.0, 'tab' || char(9) || 'here', NULL, 9223372036854775807, NULL);
            insert into t values (5, 'ｆｕｌｌ　ｗｉｄｔｈ', NULL, NULL, NULL, NULL, '007');
            insert into t values (6, 'NULL', 0.1, '1.5', x'deadbeef', -1, '');
            insert into t values (7, 'cafe' || char(769) || ' 李四', 1e-7, '😀 emoji', NULL, 123456789, 'a\\b');
            """)
        return db
    }

    /// The columns of `t` without the blob, and the blob column's facts, for comparing with sqlite3.
    static let nonBlobColumns = ["id", "name", "score", "note", "n", "plain"]
}

/// The double a JSON number literal stands for. Foundation's JSONSerialization on Linux rounds
/// long literals such as sqlite3's `0.000000099999999999999995472` one ulp off (it gives
/// 1.0000000000000002e-07 for 1e-07), but keeps the literal as the number's description, which
/// Swift's own parser reads exactly.
private func exactDouble(_ number: NSNumber) -> Double {
    Double(number.description) ?? number.doubleValue
}

/// Whether two values parsed by JSONSerialization are the same JSON value.
private func sameJSONValue(_ a: Any?, _ b: Any?) -> Bool {
    switch (a, b) {
    case (nil, nil): return true
    case (is NSNull, is NSNull): return true
    case let (x as String, y as String): return x == y
    case let (x as NSNumber, y as NSNumber):
        if let i = Int64(x.description), let j = Int64(y.description) { return i == j }
        return exactDouble(x) == exactDouble(y)
    default: return false
    }
}

/// Parses RFC 4180 CSV keeping whether each field was quoted.
private func parseCSV(_ text: String) throws -> [[(text: String, quoted: Bool)]] {
    var rows: [[(String, Bool)]] = []
    var row: [(String, Bool)] = []
    var chars = Array(text.unicodeScalars)[...]
    while !chars.isEmpty {
        var field = ""
        var quoted = false
        if chars.first == "\"" {
            quoted = true
            chars.removeFirst()
            while true {
                let next = chars.popFirst()
                let c = try #require(next, "unterminated quoted field")
                if c == "\"" {
                    if chars.first == "\"" { chars.removeFirst(); field.unicodeScalars.append("\"") } else { break }
                } else {
                    field.unicodeScalars.append(c)
                }
            }
        } else {
            while let c = chars.first, c != ",", c != "\r", c != "\n" { field.unicodeScalars.append(c); chars.removeFirst() }
        }
        row.append((field, quoted))
        if chars.first == "," { chars.removeFirst(); continue }
        if chars.first == "\r" { chars.removeFirst() }
        if chars.first == "\n" { chars.removeFirst() }
        rows.append(row)
        row = []
    }
    return rows
}

/// Terminal columns, as the test sees them: CJK ideographs, kana, Hangul and fullwidth forms 2,
/// combining marks 0, everything else 1 (the sample data uses nothing else).
private func displayWidth(_ text: String) -> Int {
    text.unicodeScalars.reduce(0) { width, scalar in
        if scalar.properties.generalCategory == .nonspacingMark { return width }
        switch scalar.value {
        case 0x1F300...0x1FAFF, 0x3000...0x30FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xAC00...0xD7A3, 0xFF01...0xFF60: return width + 2
        default: return width + 1
        }
    }
}

/// Undoes the table format's control pictures (␊ for a newline, ␉ for a tab, ...).
private func unpicture(_ text: String) -> String {
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        switch scalar.value {
        case 0x2400...0x241F: scalars.append(Unicode.Scalar(scalar.value - 0x2400) ?? scalar)
        case 0x2421: scalars.append("\u{7F}")
        default: scalars.append(scalar)
        }
    }
    return String(scalars)
}

@Suite("dicrecord CLI: query formats, export/import, errors and exit codes")
struct CLITests {
    // MARK: query output against sqlite3 -json

    @Test func queryJSONMatchesSqlite3ValueForValue() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let sql = "select * from t order by id"
        let run = try fixture.dicrecord("query", db, sql, "--format", "json")
        #expect(run.status == 0, "\(run.errors)")
        let parsed = try JSONSerialization.jsonObject(with: run.output)
        let mine = try #require(parsed as? [[String: Any]])
        let theirs = try fixture.sqliteJSON(db, "select id, name, score, note, n, plain from t order by id")
        let blobs = try fixture.sqliteJSON(db, "select typeof(data) as type, hex(data) as hex from t order by id")
        try #require(mine.count == theirs.count && theirs.count == 7)
        for (i, row) in mine.enumerated() {
            for column in CLIFixture.nonBlobColumns {
                #expect(sameJSONValue(row[column], theirs[i][column]), "row \(i) column \(column): \(String(describing: row[column])) vs \(String(describing: theirs[i][column]))")
            }
            // Blobs: {"base64": …} holding the same bytes; NULL stays null.
            if blobs[i]["type"] as? String == "blob" {
                let object = try #require(row["data"] as? [String: String], "row \(i): blob as \(String(describing: row["data"]))")
                let bytes = try #require(Data(base64Encoded: object["base64"] ?? "?"))
                #expect(bytes.map { String(format: "%02X", $0) }.joined() == blobs[i]["hex"] as? String)
            } else {
                #expect(row["data"] is NSNull)
            }
        }
        // Keys in column order, one object per line as sqlite3 writes them.
        let firstLine = try #require(run.text.split(separator: "\n").first)
        let positions = ["\"id\"", "\"name\"", "\"score\"", "\"note\"", "\"data\"", "\"n\"", "\"plain\""].compactMap { firstLine.range(of: $0)?.lowerBound }
        #expect(positions.count == 7 && positions == positions.sorted())
    }

    /// The README names every way `json` differs from `sqlite3 -json`; these are them.
    @Test func queryJSONDiffersFromSqlite3OnlyWhereTheReadmeSays() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let reals = try fixture.dicrecord("query", db, "select -0.0 as a, 0.1 as b, 1e300 as c, 1.5 as d", "--format", "json")
        #expect(reals.text == #"[{"a":-0.0,"b":0.1,"c":1e+300,"d":1.5}]"# + "\n")
        #expect(String(decoding: try fixture.sqlite("-json", db, "select 0.1 as b"), as: UTF8.self).contains("0.10000000000000000555"))
        let empty = try fixture.dicrecord("query", db, "select 1 where 0", "--format", "json")
        #expect(empty.status == 0)
        #expect(empty.text == "[]\n")
        #expect(try fixture.sqlite("-json", db, "select 1 where 0").isEmpty)
        let readme = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md"), encoding: .utf8)
            .replacingOccurrences(of: "\n  ", with: " ")
        for difference in [#"a blob is `{"base64": "…"}`"#, "`0.1` and `-0.0`", "`0.10000000000000000555` and `0.0`",
                           "an empty result is `[]` (sqlite3 prints nothing)"] {
            #expect(readme.contains(difference), "README does not say: \(difference)")
        }
    }

    /// DicRecord turns off SQLite's double-quoted string literals in the CLI too: a quoted word
    /// that is no column is an error with a hint, never text compared with text.
    @Test func queryRefusesDoubleQuotedTextWithAHint() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let run = try fixture.dicrecord("query", db, "select count(*) from t where \"zzz zzz\" = 'zzz zzz'", "--format", "json")
        #expect(run.status == 1)
        #expect(run.errors.contains("no such column: zzz zzz"))
        #expect(run.errors.contains("single quotes"))
        #expect(run.text.isEmpty)
    }

    @Test func queryCSVParsesBackToSqlite3Values() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let run = try fixture.dicrecord("query", db, "select * from t order by id", "--format", "csv")
        #expect(run.status == 0, "\(run.errors)")
        let rows = try parseCSV(run.text)
        let theirs = try fixture.sqliteJSON(db, "select id, name, score, note, n, plain from t order by id")
        let lengths = try fixture.sqliteJSON(db, "select typeof(data) as type, length(data) as length from t order by id")
        try #require(rows.count == 8)
        let header = rows[0].map(\.text)
        #expect(header == ["id", "name", "score", "note", "data", "n", "plain"])
        for (i, row) in rows.dropFirst().enumerated() {
            try #require(row.count == header.count)
            for (c, column) in header.enumerated() {
                let field = row[c]
                if column == "data" {
                    if lengths[i]["type"] as? String == "blob" {
                        let length = try #require(lengths[i]["length"] as? Int)
                        #expect(!field.quoted && field.text == "<blob \(length) byte\(length == 1 ? "" : "s")>")
                    } else {
                        #expect(!field.quoted && field.text.isEmpty)
                    }
                    continue
                }
                switch theirs[i][column] {
                case is NSNull, nil:
                    #expect(!field.quoted && field.text.isEmpty, "row \(i) \(column): NULL is an empty unquoted field")
                case let text as String:
                    #expect(field.quoted && field.text == text, "row \(i) \(column): \(field) vs \(text)")
                case let number as NSNumber:
                    #expect(!field.quoted, "row \(i) \(column): numbers are unquoted")
                    if let integer = Int64(field.text) {
                        #expect(Int64(number.description) == integer, "row \(i) \(column): \(integer) vs \(number)")
                    } else {
                        #expect(Double(field.text) == exactDouble(number), "row \(i) \(column): \(field.text) vs \(number)")
                    }
                default:
                    Issue.record("unexpected sqlite3 value \(String(describing: theirs[i][column]))")
                }
            }
        }
    }

    @Test func queryTableParsesBackToSqlite3Values() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let run = try fixture.dicrecord("query", db, "select id, name, score, note, n, plain, data from t order by id")
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        // A top rule, the header, a rule, 7 rows, a bottom rule.
        try #require(lines.count == 11, "\(run.text)")
        let cells = { (line: String) -> [String] in
            line.split(separator: "│", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
        }
        let columns = CLIFixture.nonBlobColumns + ["data"]
        #expect(cells(lines[1]) == columns)
        let theirs = try fixture.sqliteJSON(db, "select id, name, score, note, n, plain, length(data) as length from t order by id")
        for (i, line) in lines[3..<10].enumerated() {
            let row = cells(line)
            try #require(row.count == columns.count, "\(line)")
            for (c, column) in CLIFixture.nonBlobColumns.enumerated() {
                switch theirs[i][column] {
                case is NSNull, nil: #expect(row[c] == "∅", "row \(i) \(column)")
                case let text as String: #expect(unpicture(row[c]) == text, "row \(i) \(column): \(row[c]) vs \(text)")
                case let number as NSNumber: #expect(Double(row[c]) == exactDouble(number), "row \(i) \(column): \(row[c]) vs \(number)")
                default: Issue.record("unexpected sqlite3 value")
                }
            }
            if let length = theirs[i]["length"] as? Int {
                #expect(row[6] == "<blob \(length) byte\(length == 1 ? "" : "s")>")
            } else {
                #expect(row[6] == "∅")
            }
        }
    }

    @Test func tableFormatLinesUpChineseText() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = fixture.path("cjk.db")
        try fixture.sqlite(db, """
            create table people(name text, city text, note text);
            insert into people values ('张三', '北京', 'a'), ('Li', 'Shanghai 上海', '日本語とｆｕｌｌ'),
                ('e' || char(769) || 'te' || char(769), '서울', NULL), ('王小明先生', 'x', 'mixed 中文 text');
            """)
        let run = try fixture.dicrecord("query", db, "select * from people")
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.text.split(separator: "\n").map(String.init)
        try #require(lines.count == 8)
        let widths = Set(lines.map(displayWidth))
        #expect(widths.count == 1, "lines of different widths: \(lines.map { "\(displayWidth($0)) \($0)" })")
        // Column separators sit at the same terminal column on every row.
        let separatorColumns = { (line: String) -> [Int] in
            var column = 0
            var found: [Int] = []
            for character in line {
                if "│┼┬┴├┤┌┐└┘".contains(character) { found.append(column) }
                column += displayWidth(String(character))
            }
            return found
        }
        #expect(Set(lines.map(separatorColumns)).count == 1)
    }

    // MARK: arguments and paging

    @Test func argumentsBindAsIntegerRealOrTextAndTextFlagForcesText() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let sql = "select ? as a, typeof(?) as b, ? as c, ? as d, ? as e"
        let typed = try fixture.dicrecord("query", db, sql, "42", "-7", "1.5", "007", "张三", "--format", "json")
        #expect(typed.status == 0, "\(typed.errors)")
        #expect(typed.text == #"[{"a":42,"b":"integer","c":1.5,"d":"007","e":"张三"}]"# + "\n")
        let text = try fixture.dicrecord("query", db, sql, "--text", "42", "-7", "1.5", "007", "张三", "--format", "json")
        #expect(text.text == #"[{"a":"42","b":"text","c":"1.5","d":"007","e":"张三"}]"# + "\n")
        let found = try fixture.dicrecord("query", db, "select name from t where id = ? or n = ?", "1", "-1", "--format", "csv")
        #expect(found.text == "name\r\n\"张三\"\r\n\"NULL\"\r\n")
    }

    @Test func pageTwoOfSizeTwoReturnsTheThirdAndFourthRows() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let ids = { (page: String) throws -> [Int] in
            let run = try fixture.dicrecord("query", db, "select id from t where id > ? order by id;", "0", "--page", page, "--size", "2", "--format", "json")
            #expect(run.status == 0, "\(run.errors)")
            let parsed = try JSONSerialization.jsonObject(with: run.output)
            let rows = try #require(parsed as? [[String: Int]])
            return rows.compactMap { $0["id"] }
        }
        #expect(try ids("1") == [1, 2])
        #expect(try ids("2") == [3, 4])
        #expect(try ids("4") == [7])
        #expect(try ids("5") == [])
    }

    // MARK: tables and schema

    @Test func tablesAndSchemaListWhatSqliteMasterHolds() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = fixture.path("schema.db")
        try fixture.sqlite(db, """
            create table zebra(id integer primary key autoincrement, name text);
            create table "表 one"(x);
            create index zebra_name on zebra(name);
            create view v as select * from zebra;
            insert into zebra(name) values ('a');
            """)
        let tables = try fixture.dicrecord("tables", db)
        #expect(tables.status == 0)
        #expect(tables.text == "zebra\n表 one\n")
        let schema = try fixture.dicrecord("schema", db)
        let expected = String(decoding: try fixture.sqlite(db, "select sql || ';' from sqlite_master where sql is not null order by rowid"), as: UTF8.self)
        #expect(schema.text == expected)
        let one = try fixture.dicrecord("schema", db, "ZEBRA")
        #expect(one.text == "CREATE TABLE zebra(id integer primary key autoincrement, name text);\nCREATE INDEX zebra_name on zebra(name);\n")
        let missing = try fixture.dicrecord("schema", db, "nope")
        #expect(missing.status == 1 && missing.errors.contains("no such table: nope"))
    }

    // MARK: export and import

    @Test(arguments: ["json", "csv"])
    func exportThenImportReproducesTheTable(format: String) throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let source = try fixture.sampleDatabase()
        let file = fixture.path("t.\(format)")
        let export = try fixture.dicrecord("export", source, "t", "--out", file)
        #expect(export.status == 0 && export.errors.isEmpty, "\(export.errors)")
        // The same table, empty, in a new file (sqlite3 makes it).
        let schema = String(decoding: try fixture.sqlite(source, ".schema t"), as: UTF8.self)
        let target = fixture.path("copy.db")
        try fixture.sqlite(target, schema)
        let importRun = try fixture.dicrecord("import", target, "t", file)
        #expect(importRun.status == 0, "\(importRun.errors)")
        // Byte for byte what sqlite3 -json says (types, blob bytes, unicode, reals).
        let original = try fixture.sqlite("-json", source, "select * from t")
        let copy = try fixture.sqlite("-json", target, "select * from t")
        #expect(copy == original, "\(String(decoding: copy, as: UTF8.self))")
        let types = "select typeof(id), typeof(name), typeof(score), typeof(note), typeof(data), typeof(n), typeof(plain) from t"
        #expect(try fixture.sqlite(target, types) == fixture.sqlite(source, types))

        // Into a table that does not exist: created with the file's columns, values kept as read.
        let bare = fixture.path("bare.db")
        try fixture.sqlite(bare, "create table other(x)")
        let created = try fixture.dicrecord("import", bare, "t", file, "--format", format)
        #expect(created.status == 0, "\(created.errors)")
        #expect(try fixture.sqlite("-json", bare, "select * from t") == original)
        let plainTypes = "select typeof(plain) from t order by id"
        #expect(try fixture.sqlite(bare, plainTypes) == fixture.sqlite(source, plainTypes))
    }

    @Test func largeExportAndImportRoundTripWithoutProgressOnAPipe() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let source = fixture.path("large.db")
        try fixture.sqlite(source, """
            create table big(id integer primary key, label text, value real);
            with recursive n(i) as (select 1 union all select i + 1 from n where i < 20000)
            insert into big select i, '行 ' || i, i / 7.0 from n;
            """)
        let file = fixture.path("big.csv")
        let export = try fixture.dicrecord("export", source, "big", "--format", "csv", "--out", file)
        #expect(export.status == 0 && export.errors.isEmpty, "stderr is not a terminal: no progress bar; got \(export.errors)")
        let target = fixture.path("large-copy.db")
        try fixture.sqlite(target, "create table big(id integer primary key, label text, value real)")
        let importRun = try fixture.dicrecord("import", target, "big", file)
        #expect(importRun.status == 0 && importRun.errors.isEmpty, "\(importRun.errors)")
        #expect(try fixture.sqlite("-json", target, "select * from big") == fixture.sqlite("-json", source, "select * from big"))
    }

    @Test func exportToStdoutWritesJSONAndCSV() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = fixture.path("small.db")
        try fixture.sqlite(db, "create table s(a integer, b text, c blob); insert into s values (1, 'x,\"y\"', x'0102'), (NULL, '', NULL);")
        let json = try fixture.dicrecord("export", db, "s", "--format", "json")
        #expect(json.text == #"[{"a":1,"b":"x,\"y\"","c":{"base64":"AQI="}},"# + "\n" + #"{"a":null,"b":"","c":null}]"# + "\n")
        let csv = try fixture.dicrecord("export", db, "s", "--format", "csv")
        #expect(csv.text == "a,b,c\r\n1,\"x,\"\"y\"\"\",X'0102'\r\n,\"\",\r\n")
        try fixture.sqlite(db, "delete from s")
        let empty = try fixture.dicrecord("export", db, "s", "--format", "csv")
        #expect(empty.text == "a,b,c\r\n")
    }

    @Test func failingImportExitsOneAndLeavesTheTableUnchanged() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = fixture.path("target.db")
        try fixture.sqlite(db, """
            create table people(id integer primary key, name text not null unique);
            insert into people values (1, 'ann'), (2, 'bob');
            """)
        let before = try fixture.sqlite("-json", db, "select * from people")
        let cases: [(name: String, content: String, message: String)] = [
            ("not-null.csv", "id,name\r\n3,\"cy\"\r\n4,\r\n5,\"dee\"\r\n", "NOT NULL constraint failed"),
            ("unique.json", #"[{"id": 3, "name": "cy"}, {"id": 4, "name": "ann"}, {"id": 5, "name": "dee"}]"#, "UNIQUE constraint failed"),
            ("unclosed.csv", "id,name\r\n3,\"cy\r\n", "not closed"),
            ("ragged.csv", "id,name\r\n3,\"cy\"\r\n4\r\n", "1 fields, the header has 2"),
            ("truncated.json", #"[{"id": 3, "name": "cy"}, {"id": 4, "#, "expected"),
            ("no-array.json", #"{"id": 3}"#, "array of objects"),
            ("unknown-column.json", #"[{"id": 3, "name": "cy"}, {"id": 4, "nom": "x"}]"#, "no column named nom"),
        ]
        for (name, content, message) in cases {
            let file = fixture.path(name)
            try Data(content.utf8).write(to: URL(fileURLWithPath: file))
            let run = try fixture.dicrecord("import", db, "people", file)
            #expect(run.status == 1, "\(name): exit \(run.status)")
            #expect(run.errors.contains(message), "\(name): \(run.errors)")
            #expect(try fixture.sqlite("-json", db, "select * from people") == before, "\(name) changed the table")
        }
        // A missing table is not created by an import that fails.
        let file = fixture.path("not-null.csv")
        try fixture.sqlite(db, "create table strict_one(id integer primary key, name text not null)")
        let run = try fixture.dicrecord("import", db, "fresh", fixture.path("unique.json"))
        #expect(run.status == 0, "\(run.errors)")
        let failed = try fixture.dicrecord("import", db, "strict_one", file)
        #expect(failed.status == 1)
        #expect(String(decoding: try fixture.sqlite(db, "select count(*) from strict_one"), as: UTF8.self) == "0\n")
    }

    // MARK: errors and exit codes

    @Test func everyCommandOnAMissingFileFailsAndCreatesNothing() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let folder = fixture.path("absent")
        let db = folder + "/missing.db"
        let data = fixture.path("rows.json")
        try Data("[]".utf8).write(to: URL(fileURLWithPath: data))
        let commands: [[String]] = [
            ["tables", db], ["schema", db], ["query", db, "select 1"], ["query", db, "select 1", "--page", "1"],
            ["export", db, "t", "--format", "json"], ["import", db, "t", data],
        ]
        for arguments in commands {
            let run = try fixture.run(fixture.dicrecord, arguments)
            #expect(run.status == 1, "\(arguments): exit \(run.status)")
            #expect(run.errors.contains("no such database file"), "\(arguments): \(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: folder), "\(arguments) created the folder")
        }
        // A missing file in an existing folder is not created either.
        let beside = fixture.path("missing.db")
        #expect(try fixture.dicrecord("query", beside, "select 1").status == 1)
        #expect(!FileManager.default.fileExists(atPath: beside))
    }

    @Test func badSQLExitsOneWithSQLitesMessageAndPosition() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let typo = try fixture.dicrecord("query", db, "select * frm t")
        #expect(typo.status == 1)
        #expect(typo.errors.contains(#"near "frm": syntax error"#), "\(typo.errors)")
        #expect(typo.errors.contains("column 10"), "\(typo.errors)")
        // A mistyped first keyword: SQLite's message, not "the database is readonly".
        let keyword = try fixture.dicrecord("query", db, "selec * from t")
        #expect(keyword.status == 1 && keyword.errors.contains(#"near "selec": syntax error"#), "\(keyword.errors)")
        let paged = try fixture.dicrecord("query", db, "selec * from t", "--page", "1")
        #expect(paged.status == 1 && paged.errors.contains(#"near "selec": syntax error"#), "\(paged.errors)")
        let table = try fixture.dicrecord("query", db, "select * from nowhere", "--format", "json")
        #expect(table.status == 1 && table.errors.contains("no such table: nowhere") && table.output.isEmpty)
        let write = try fixture.dicrecord("query", db, "delete from t")
        #expect(write.status == 1 && write.errors.contains("readonly"))
        #expect(String(decoding: try fixture.sqlite(db, "select count(*) from t"), as: UTF8.self) == "7\n")
    }

    @Test func usageErrorsExit64() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = try fixture.sampleDatabase()
        let usages: [[String]] = [
            ["query"], ["query", db], ["query", db, "select 1", "--format", "xml"], ["query", db, "select 1", "--page", "0"],
            ["query", db, "select 1", "--size", "-1"], ["query", db, "select 1", "--pge", "2"], ["frobnicate", db],
            ["export", db, "t"], ["export", db, "t", "--out", "x.txt"], ["import", db, "t", "rows.txt"],
        ]
        for arguments in usages {
            let run = try fixture.run(fixture.dicrecord, arguments)
            #expect(run.status == 64, "\(arguments): exit \(run.status), \(run.errors)")
            #expect(!run.errors.isEmpty)
        }
        #expect(try fixture.dicrecord("query", db, "select 1").status == 0)
    }

    /// `dicrecord watch` prints the rows, then again when another program (the sqlite3 shell)
    /// commits a change to them; a commit that changes nothing it reads prints nothing.
    @Test func watchReprintsTheRowsWhenTheSqlite3ShellChangesThem() throws {
        let fixture = try CLIFixture()
        defer { fixture.cleanUp() }
        let db = fixture.path("watched.db")
        try fixture.sqlite(db, "create table job(id integer primary key, state text); create table other(x); insert into job values (1, 'queued');")
        let output = fixture.folder.appendingPathComponent("watch.out")
        try Data().write(to: output)
        let process = Process()
        process.executableURL = fixture.dicrecord
        process.arguments = ["watch", db, "select id, state from job order by id", "--format", "json", "--count", "2", "--latency", "0.05"]
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        try process.run()
        func printed() -> String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
        func wait(until done: () -> Bool) {
            let deadline = Date(timeIntervalSinceNow: 20)
            while !done(), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        }
        wait { printed().contains("queued") }
        try fixture.sqlite(db, "insert into other values (1)")        // not read by the query
        Thread.sleep(forTimeInterval: 0.3)
        try fixture.sqlite(db, "update job set state = 'done' where id = 1")
        wait { !process.isRunning }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(printed() == "[{\"id\":1,\"state\":\"queued\"}]\n[{\"id\":1,\"state\":\"done\"}]\n", "\(printed())")
    }
}
