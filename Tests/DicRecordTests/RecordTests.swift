import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// Record: an untyped, ordered, case-insensitive row (API.md §2).
@Suite struct RecordTests {
    /// student 1: every storage class plus a NULL; student 2: bad data for typed reads.
    private static func makeStudents(_ t: TestDatabase) throws {
        try t.db.update(t.db.ddl("create table student(id integer primary key, name text, age integer, born real, photo blob, note text)"))
        try t.db.update("insert into student(id, name, age, born, photo, note) values (1, '张三', 14, 1020873600.5, ?, null)", Data([1, 2, 3]))
        try t.db.update("insert into student(id, name, age, born, photo, note) values (2, 'Jack', 300, -86400, null, 'abc')")
    }

    private static let born1 = Date(timeIntervalSince1970: 1020873600.5)

    // MARK: Columns

    @Test func columnsKeepSelectOrderAndSpellingAndAreFoundCaseInsensitively() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            // SQLite names a bare column after its declaration ("name"); an alias keeps the spelling given.
            let plain = try #require(try t.db.findFirst("select NAME, Age from student where id = 1"))
            #expect(plain.columnNames == ["name", "age"])
            let r = try #require(try t.db.findFirst("select name as NAME, age as Age, id from student where id = 1"))
            #expect(r.columnNames == ["NAME", "Age", "id"])
            #expect(r.columnCount == 3)
            let name: String? = r.name
            #expect(name == "张三")
            let age: Int? = r["AGE"]
            #expect(age == 14)
            let ageMixed: Int? = r["aGe"]
            #expect(ageMixed == 14)
            #expect(r["AGE"] as? Int64 == 14)
            #expect(r.hasColumn("name") && r.hasColumn("ID") && !r.hasColumn("born"))
            // By position, in SELECT order.
            #expect(r[0] as? String == "张三")
            let second: Int? = r[1]
            #expect(second == 14)
            #expect(r[3] == nil)
        }
    }

    /// A lookup by name folds the case of ASCII letters only: the bytes just outside A-Z and a-z
    /// stay themselves, long names are confirmed past their packed prefix, non-ASCII finds nothing.
    @Test func lookupsFoldTheCaseOfASCIILettersOnly() throws {
        let layout = RowLayout(names: ["Name", "AGE", "@x", "[y", "`z", "{w", "LongColumnName1", "longcolumnname2",
                                       "abcdefgh", "abcdefghi"], registry: .shared)
        #expect(layout.position(of: "name") == 0)
        #expect(layout.position(of: "NAME") == 0)
        #expect(layout.position(of: "age") == 1)
        // The bytes just outside A-Z are not letters: "@" is not "`", nor "[" "{".
        #expect(layout.position(of: "@X") == 2)
        #expect(layout.position(of: "`x") == nil)
        #expect(layout.position(of: "[Y") == 3)
        #expect(layout.position(of: "{y") == nil)
        #expect(layout.position(of: "`Z") == 4)
        #expect(layout.position(of: "@z") == nil)
        #expect(layout.position(of: "{W") == 5)
        #expect(layout.position(of: "[w") == nil)
        // Past the eight packed bytes, the rest is compared too.
        #expect(layout.position(of: "LONGCOLUMNNAME1") == 6)
        #expect(layout.position(of: "LongColumnName2") == 7)
        #expect(layout.position(of: "ABCDEFGH") == 8)
        #expect(layout.position(of: "ABCDEFGHI") == 9)
        #expect(layout.position(of: "abcdefghj") == nil)
        #expect(layout.position(of: "n\u{e4}me") == nil)
    }

    @Test func duplicateColumnNamesResolveToTheLeftmostWhateverTheSpelling() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 1 as Name, 2 as name, 3 as NAME"))
            #expect(r.columnNames == ["Name", "name", "NAME"])
            // Case-insensitive lookup: every spelling names the same (leftmost) column.
            #expect(r["Name"] as? Int64 == 1)
            #expect(r["nAmE"] as? Int64 == 1)
            #expect(r["name"] as? Int64 == 1)
            #expect(r["NAME"] as? Int64 == 1)
            let typed: Int? = r.name
            #expect(typed == 1)
        }
    }

    // MARK: Reads

    @Test(arguments: Engine.available) func typedDynamicMemberReadsConvertThroughTheRegistry(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = ?", 1))
            let id: Int? = r.id
            let id64: Int64? = r.id
            let name: String? = r.name
            let age: Int8? = r.age
            let ageDouble: Double? = r.age
            let ageText: String? = r.age
            let ageBool: Bool? = r.age
            let born: Date? = r.born
            let photo: Data? = r.photo
            let bytes: [UInt8]? = r.photo
            #expect(id == 1)
            #expect(id64 == 1)
            #expect(name == "张三")
            #expect(age == 14)
            #expect(ageDouble == 14.0)
            #expect(ageText == "14")
            #expect(ageBool == true)
            #expect(born == Self.born1)
            #expect(photo == Data([1, 2, 3]))
            #expect(bytes == [1, 2, 3])
        }
    }

    @Test(arguments: Engine.available) func untypedReadGivesTheCurrentValue(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            // Before any typed read: SQLite's values (Int64, Double, String, Data), nil for NULL.
            #expect((r.name as Any) as? String == "张三")
            #expect("\(r.name as Any)".contains("张三"))
            #expect(r.age as? Int64 == 14)
            #expect(r.born as? Double == 1020873600.5)
            #expect(r.photo as? Data == Data([1, 2, 3]))
            let note: Any? = r.note
            #expect(note == nil)
            let missing: Any? = r.nope
            #expect(missing == nil)
            // After a typed read the kept converted value is the current value.
            let born: Date? = r.born
            #expect(born == Self.born1)
            #expect(r.born as? Date == Self.born1)
            // After a write, the written Swift value.
            r.age = 41
            #expect(r.age as? Int == 41)
        }
    }

    @Test(arguments: Engine.available) func typedReadsOfNullMissingOrUnconvertibleValuesGiveNil(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r1 = try #require(try t.db.findFirst("select * from student where id = 1"))
            let r2 = try #require(try t.db.findFirst("select * from student where id = 2"))
            let nullNote: String? = r1.note
            let nullDate: Date? = r1.note
            let nullInt: Int? = r1.note
            let missing: String? = r1.nope
            let missingByName: Int? = r1["no such column"]
            let missingByIndex: Int? = r1[42]
            let textAsInt: Int? = r2.note             // 'abc'
            let textAsDate: Date? = r2.note
            let textAsUUID: UUID? = r2.note
            let textAsDecimal: Decimal? = r2.note
            let blobAsInt: Int? = r1.photo
            let blobAsDate: Date? = r1.photo
            let integerAsData: Data? = r1.age
            let outOfRange: UInt8? = r2.age          // 300
            let outOfRangeInt8: Int8? = r2.age
            let realAsInt: Int? = r1.born            // 1020873600.5 is not whole
            let nullBlob: Data? = r2.photo
            #expect(nullNote == nil && nullDate == nil && nullInt == nil)
            #expect(missing == nil && missingByName == nil && missingByIndex == nil)
            #expect(textAsInt == nil && textAsDate == nil && textAsUUID == nil && textAsDecimal == nil)
            #expect(blobAsInt == nil && blobAsDate == nil && integerAsData == nil)
            #expect(outOfRange == nil && outOfRangeInt8 == nil && realAsInt == nil && nullBlob == nil)
            // The same values do convert to a type that fits.
            let big: Int16? = r2.age
            #expect(big == 300)
            let negativeDate: Date? = r2.born
            #expect(negativeDate == Date(timeIntervalSince1970: -86400))
            // A failed typed read leaves nothing behind.
            #expect(r2.note as? String == "abc")
            #expect(r2.modifiedColumns.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func getThrowsConversionErrorNamingColumnStoredTypeAndTargetType(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r2 = try #require(try t.db.findFirst("select * from student where id = 2"))
            let error = try #require(throws: ConversionError.self) { try r2.get("note", as: Date.self) }
            #expect(error.kind == .notConvertible)
            #expect(error.column == "note")
            #expect(error.targetType.hasSuffix("Date"))
            #expect(error.description.contains("\"note\""))
            #expect(error.description.contains("TEXT 'abc'"))
            #expect(error.description.contains("Date"))

            let range = try #require(throws: ConversionError.self) { try r2.get("AGE", as: UInt8.self) }
            #expect(range.column == "age")                 // the spelling of the SELECT
            #expect(range.description.contains("INTEGER 300"))
            #expect(range.description.contains("UInt8"))

            // NULL: nil for an Optional target, an error for a non-optional one.
            let r1 = try #require(try t.db.findFirst("select * from student where id = 1"))
            #expect(try r1.get("note", as: String?.self) == nil)
            let null = try #require(throws: ConversionError.self) { try r1.get("note", as: String.self) }
            #expect(null.column == "note")
            #expect(null.description.contains("NULL"))
            // Good values read through get as well.
            #expect(try r1.get("born", as: Date.self) == Self.born1)
            #expect(try r1.get("Name", as: String.self) == "张三")
            #expect(try r1.get(0, as: Int.self) == 1)
        }
    }

    @Test(arguments: Engine.available) func getOfAMissingColumnThrowsMissingColumn(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select id, name from student where id = 1"))
            let error = try #require(throws: DicRecordError.self) { try r.get("nope", as: String.self) }
            #expect(error.kind == .missingColumn)
            #expect(error.description.contains("nope"))
            let byIndex = try #require(throws: DicRecordError.self) { try r.get(5, as: Int.self) }
            #expect(byIndex.kind == .missingColumn)
            let optional = try #require(throws: DicRecordError.self) { try r.get("nope", as: String?.self) }
            #expect(optional.kind == .missingColumn)
        }
    }

    @Test(arguments: Engine.available) func anOptionalTypedReadOfNullLeavesTheUntypedValueNil(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            #expect(try r.get("note", as: String?.self) == nil)
            #expect(try r.get("note", as: Date?.self) == nil)
            // The column is still NULL: untyped reads, toDictionary and JSON say so.
            let note: Any? = r.note
            #expect(note == nil)
            #expect(r["note"] == nil)
            let entry = try #require(r.toDictionary()["note"])
            #expect(entry == nil)
            #expect(try r.toJSON().contains("\"note\":null"))
        }
    }

    // MARK: Writes

    @Test(arguments: Engine.available) func writesMarkColumnsModifiedAndReadsNever(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            #expect(r.modifiedColumns.isEmpty)
            let _: String? = r.name
            let _: Date? = r.born
            let _: Data? = r.photo
            let _: Int? = r.nope
            _ = r["age"]
            _ = try r.get("born", as: Date.self)
            _ = r.toDictionary()
            _ = try r.toJSON()
            #expect(r.modifiedColumns.isEmpty)

            r.age = 41
            #expect(r.modifiedColumns == ["age"])
            r["NAME"] = "李四"                              // an existing column, other case: no new column
            #expect(r.columnNames == ["id", "name", "age", "born", "photo", "note"])
            #expect(r.modifiedColumns == ["name", "age"])    // column order
            let name: String? = r.name
            #expect(name == "李四")
            r.extra = 7                                      // a new column goes last
            #expect(r.columnNames.last == "extra")
            #expect(r.modifiedColumns == ["name", "age", "extra"])
            r.remove("extra")
            #expect(r.modifiedColumns == ["name", "age"])

            t.clearLog()
            #expect(try t.db.update("student", r))
            #expect(t.statements.contains("UPDATE \"student\" SET \"name\" = ?, \"age\" = ? WHERE \"id\" = ?"))
            #expect(r.modifiedColumns.isEmpty)
            #expect(try t.db.update("student", r) == false)   // nothing modified any more
            let back = try #require(try t.db.findFirst("select name, age, born from student where id = 1"))
            #expect(back.name as? String == "李四")
            #expect(back.age as? Int64 == 41)
            #expect(back.born as? Double == 1020873600.5)
        }
    }

    @Test(arguments: Engine.available) func removeKeepAndClear(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            r.age = 15
            r.remove("AGE", "no such column")
            #expect(r.columnNames == ["id", "name", "born", "photo", "note"])
            #expect(r.modifiedColumns.isEmpty)
            let age: Int? = r.age
            #expect(age == nil)
            #expect(!r.hasColumn("age"))
            let born: Date? = r.born                         // positions after the removed one still read right
            #expect(born == Self.born1)

            r.keep("NAME", "id", "nope")
            #expect(r.columnNames == ["id", "name"])          // kept in record order
            let name: String? = r.name
            #expect(name == "张三")
            let id: Int? = r.id
            #expect(id == 1)

            r.clear()
            #expect(r.columnNames.isEmpty)
            #expect(r.columnCount == 0)
            #expect(r.modifiedColumns.isEmpty)
            let afterClear: String? = r.name
            #expect(afterClear == nil)
            #expect(r.description == "{}")
            #expect(try r.toJSON() == "{}")
            r.name = "again"
            #expect(r.columnNames == ["name"])
            #expect(r.modifiedColumns == ["name"])
        }
    }

    // MARK: Output

    @Test(arguments: Engine.available) func toDictionaryHoldsEveryColumnWithItsCurrentValue(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            let _: Date? = r.born
            r.age = 15
            let dict = r.toDictionary()
            #expect(Set(dict.keys) == ["id", "name", "age", "born", "photo", "note"])
            #expect(dict["id"]! as? Int64 == 1)
            #expect(dict["name"]! as? String == "张三")
            #expect(dict["age"]! as? Int == 15)
            #expect(dict["born"]! as? Date == Self.born1)
            #expect(dict["photo"]! as? Data == Data([1, 2, 3]))
            let note = try #require(dict["note"])            // present, and NULL
            #expect(note == nil)
        }
    }

    @Test(arguments: Engine.available) func toJSONKeepsOrderAndFormatsDatesDataNullAndEscapes(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            let r = try Record([
                "zeta": 1,
                "name": "张三 \"q\" \\ /\n\t\u{1}",
                "born": Date(timeIntervalSince1970: 1020873600.123),
                "photo": Data([0, 1, 2, 255]),
                "note": nil,
                "score": 95.5,
                "alpha": -3,
            ])
            let json = try r.toJSON()
            #expect(json == #"{"zeta":1,"name":"张三 \"q\" \\ /\n\t\u0001","born":"2002-05-08T16:00:00.123Z","photo":"AAEC/w==","note":null,"score":95.5,"alpha":-3}"#)
            // It is valid JSON that Foundation reads back to the same values.
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            #expect(object["name"] as? String == "张三 \"q\" \\ /\n\t\u{1}")
            #expect(object["note"] is NSNull)
            #expect(object["born"] as? String == "2002-05-08T16:00:00.123Z")

            // A fetched row: BLOB as base64, NULL as null; a REAL read as Date is written as a date.
            try Self.makeStudents(t)
            let f = try #require(try t.db.findFirst("select id, name, photo, note, born from student where id = 1"))
            #expect(try f.toJSON() == #"{"id":1,"name":"张三","photo":"AQID","note":null,"born":1020873600.5}"#)
            let _: Date? = f.born
            #expect(try f.toJSON() == #"{"id":1,"name":"张三","photo":"AQID","note":null,"born":"2002-05-08T16:00:00.500Z"}"#)
        }
    }

    @Test func toJSONRefusesInfinity() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 1e999 as huge"))
            let error = try #require(throws: DicRecordError.self) { try r.toJSON() }
            #expect(error.kind == .invalidJSON)
            #expect(error.description.contains("huge"))
        }
    }

    @Test func recordFromJSONKeepsOrderNumbersAndNestedText() throws {
        try withDatabase { t in
            let json = #"""
            {"name": "张三", "age": 14, "born": 1020873600, "score": 95.5, "big": 1e3, "neg": -7,
             "ok": true, "no": false, "none": null, "tags": ["a", "b", {"c": [1, 2]}],
             "addr": {"city": "北京", "zip": "100000", "quote": "x}\"]"},
             "esc": "a\"b\\c\nd\u00e9\ud83d\ude00\/"}
            """#
            let r = try Record(json: json)
            #expect(r.columnNames == ["name", "age", "born", "score", "big", "neg", "ok", "no", "none", "tags", "addr", "esc"])
            #expect(r.name as? String == "张三")
            #expect(r.age as? Int64 == 14)
            #expect(r.neg as? Int64 == -7)
            #expect(r.score as? Double == 95.5)
            #expect(r.big as? Double == 1000)
            let born: Date? = r.born
            #expect(born == Date(timeIntervalSince1970: 1020873600))
            let ok: Bool? = r.ok
            let no: Bool? = r.no
            #expect(ok == true && no == false)
            let none: Any? = r.none
            #expect(none == nil)
            #expect(r.hasColumn("none"))
            #expect(r.tags as? String == #"["a", "b", {"c": [1, 2]}]"#)
            #expect(r.addr as? String == #"{"city": "北京", "zip": "100000", "quote": "x}\"]"}"#)
            #expect(r.esc as? String == "a\"b\\c\nd\u{e9}😀/")
            // Stored types as SQLite would get them.
            let stored = Dictionary(uniqueKeysWithValues: r.storedColumns.map { ($0.name, $0.value) })
            #expect(stored["age"] == .integer(14))
            #expect(stored["big"] == .real(1000))
            #expect(stored["ok"] == .integer(1))
            #expect(stored["none"] == .null)
            // The nested object is real JSON text that a Codable type reads.
            struct Address: Decodable, Equatable { var city: String; var zip: String }
            let address = try JSONDecoder().decode(Address.self, from: Data((r.addr as? String ?? "").utf8))
            #expect(address == Address(city: "北京", zip: "100000"))
            // And it can be saved as it is.
            try t.db.update(t.db.ddl("create table person(id integer primary key, name, age, born, score, big, neg, ok, no, none, tags, addr, esc)"))
            #expect(try t.db.save("person", r))
            #expect(try t.db.queryString("select json_extract(addr, '$.city') from person") == "北京")
            #expect(try t.db.queryString("select typeof(big) || typeof(age) || typeof(none) from person") == "realintegernull")
        }
    }

    @Test(arguments: [
        #"{"a":}"#, #"[1, 2]"#, #"{"a": 1,}"#, #"{"a": 1} trailing"#, #"{"a": tru}"#, #"{"a": "unterminated}"#,
        "", "   ", #"{"a": 1"#, #"{'a': 1}"#, #"{a: 1}"#, #"{"a": [1, 2}"#, #"{"a": "\x"}"#, #"{"a": -}"#, #"{"a": "\ud83d"}"#,
        "\"just a string\"", "42",
    ])
    func invalidJSONThrowsInvalidJSON(_ text: String) throws {
        try withDatabase { _ in
            let error = try #require(throws: DicRecordError.self) { try Record(json: text) }
            #expect(error.kind == .invalidJSON)
            #expect(error.description.contains("JSON"))
        }
    }

    @Test(arguments: [
        #"{"a": [1}, "b": 2}"#, #"{"a": [1,, 2]}"#, #"{"a": {"k" 1}}"#, #"{"a": [tru]}"#, #"{"a": {"k": 1,}}"#,
        #"{"a": [1 2]}"#, #"{"a": {"k": [}]}}"#,
    ])
    func invalidJSONInsideANestedArrayOrObjectThrows(_ text: String) throws {
        try withDatabase { _ in
            // Nested containers are kept as text, but they must still be JSON.
            let error = try #require(throws: DicRecordError.self) { try Record(json: text) }
            #expect(error.kind == .invalidJSON)
        }
    }

    @Test(arguments: [#"{"a": +1}"#, #"{"a": 01}"#, #"{"a": .5}"#, #"{"a": 1.}"#, #"{"a": -01.5}"#])
    func numbersThatJSONForbidsThrow(_ text: String) throws {
        try withDatabase { _ in
            // RFC 8259: no leading '+', no leading zeros, digits on both sides of the '.'.
            let error = try #require(throws: DicRecordError.self) { try Record(json: text) }
            #expect(error.kind == .invalidJSON)
        }
    }

    @Test(arguments: Engine.available) func recordToJSONToRecordRoundTrips(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try t.db.update(t.db.ddl("create table t(id integer primary key, name text, score real, note text, big integer, born real)"))
            try t.db.update("insert into t values (1, ?, 95.25, null, ?, 1020873600.123)",
                            "张三 \"quoted\" \\ tab\t newline\n 😀 \u{1}", Int64.max)
            let r = try #require(try t.db.findFirst(#"select id, name, score, note, big, 1e-7 as "tiny ""q"" \" from t"#))
            let json = try r.toJSON()
            let back = try Record(json: json)
            #expect(back == r)
            #expect(back.columnNames == r.columnNames)
            #expect(try back.toJSON() == json)

            // A date leaves as ISO 8601 text and reads back as the same instant (to the millisecond).
            let withDate = try #require(try t.db.findFirst("select id, born from t"))
            let born: Date? = withDate.born
            let again = try Record(json: try withDate.toJSON())
            let bornAgain: Date? = again.born
            let original = try #require(born)
            let roundTripped = try #require(bornAgain)
            #expect(abs(roundTripped.timeIntervalSince1970 - original.timeIntervalSince1970) < 0.0005)
        }
    }

    // MARK: Decodable

    private struct Address: Codable, Equatable {
        var city: String
        var zip: String
    }

    private struct Student: Decodable {
        var id: Int
        var name: String
        var born: Date
        var homepage: URL
        var active: Bool
        var nickname: String?
        var score: Double?
        var address: Address
        var tags: [String]
    }

    private enum Level: String, Decodable {
        case gold, silver
    }

    private struct Ranked: Decodable {
        var name: String
        var level: Level
        var previous: Level?
        var tags: [String]?
    }

    private struct NeedsNickname: Decodable {
        var id: Int
        var nickname: String
    }

    private struct NeedsMissing: Decodable {
        var id: Int
        var notAColumn: Int
    }

    private struct WrongType: Decodable {
        var name: Int
    }

    @Test(arguments: Engine.available) func decodeIntoADecodableStruct(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try t.db.update(t.db.ddl("""
                create table person(id integer primary key, name text, born real, homepage text, active integer,
                                    nickname text, score real, address text, tags text)
                """))
            try t.db.update("insert into person values (1, '张三', 1020873600.25, 'https://example.com/张?x=1', 1, null, null, ?, ?)",
                            #"{"city":"北京","zip":"100000"}"#, #"["a","b"]"#)
            try t.db.update("insert into person values (2, 'Jo', -86400, 'https://example.org', 0, 'jojo', 9.5, ?, '[]')",
                            #"{"zip":"10115","city":"Berlin"}"#)
            let r1 = try #require(try t.db.findFirst("select * from person where id = 1"))
            let s1 = try r1.decode(Student.self)
            #expect(s1.id == 1)
            #expect(s1.name == "张三")
            #expect(s1.born == Date(timeIntervalSince1970: 1020873600.25))
            #expect(s1.homepage == URL(string: "https://example.com/张?x=1"))
            #expect(s1.active == true)
            #expect(s1.nickname == nil)
            #expect(s1.score == nil)
            #expect(s1.address == Address(city: "北京", zip: "100000"))
            #expect(s1.tags == ["a", "b"])
            #expect(r1.modifiedColumns.isEmpty)

            let r2 = try #require(try t.db.findFirst("select * from person where id = 2"))
            let s2: Student = try r2.decode()
            #expect(s2.active == false)
            #expect(s2.nickname == "jojo")
            #expect(s2.score == 9.5)
            #expect(s2.born == Date(timeIntervalSince1970: -86400))
            #expect(s2.address == Address(city: "Berlin", zip: "10115"))
            #expect(s2.tags.isEmpty)

            // A column the query did not select reads as nil for an optional property.
            let partial = try #require(try t.db.findFirst(
                "select id, name, born, homepage, active, address, tags from person where id = 2"))
            let s3 = try partial.decode(Student.self)
            #expect(s3.nickname == nil && s3.score == nil && s3.name == "Jo")

            // A String-backed enum reads from its raw value; NULL gives nil for optionals.
            let ranked = try #require(try t.db.findFirst("select name, 'gold' as level, null as previous, null as tags from person where id = 1"))
            let rank = try ranked.decode(Ranked.self)
            #expect(rank.level == .gold && rank.previous == nil && rank.tags == nil && rank.name == "张三")
            let badRank = try #require(try t.db.findFirst("select name, 'bronze' as level from person where id = 1"))
            #expect(throws: (any Error).self) { try badRank.decode(Ranked.self) }

            // Bad input: NULL into a non-optional, a missing column, a value of the wrong type.
            #expect(throws: (any Error).self) { try r1.decode(NeedsNickname.self) }
            #expect(throws: DecodingError.self) { try r1.decode(NeedsMissing.self) }
            #expect(throws: (any Error).self) { try r1.decode(WrongType.self) }
        }
    }

    // MARK: Equatable and description

    @Test(arguments: Engine.available) func aRowEqualsTheSameRowFetchedAgainAndDiffersAfterAChange(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let a = try #require(try t.db.findFirst("select * from student where id = 1"))
            let b = try #require(try t.db.findFirst("select * from student where id = 1"))
            #expect(a !== b)
            #expect(a == b)
            let _: Date? = b.born                               // a typed read changes nothing stored
            #expect(a == b)
            let other = try #require(try t.db.findFirst("select * from student where id = 2"))
            #expect(a != other)
            // Same columns in another order and spelling, same values: equal.
            let built = try Record(["NOTE": nil, "photo": Data([1, 2, 3]), "born": 1020873600.5, "Age": 14, "name": "张三", "id": 1])
            #expect(built == a)
            b.name = "李四"
            #expect(a != b)
            b.name = "张三"
            #expect(a == b)
            b.remove("note")
            #expect(a != b)
            let fewer = try #require(try t.db.findFirst("select id, name from student where id = 1"))
            #expect(fewer != a)
        }
    }

    @Test func descriptionListsColumnsInOrderWithStoredValues() throws {
        try withDatabase { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            #expect(r.description == "{id: 1, name: '张三', age: 14, born: 1020873600.5, photo: <3 bytes>, note: NULL}")
            let q = try #require(try t.db.findFirst("select 'it''s' as Quote"))
            #expect(q.description == "{Quote: 'it''s'}")
            #expect("\(r)" == r.description)
        }
    }

    // MARK: Threads

    @Test(arguments: Engine.available) func aRecordReadAndWrittenFromEightThreadsStaysConsistent(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try Self.makeStudents(t)
            let r = try #require(try t.db.findFirst("select * from student where id = 1"))
            let failures = Failures()
            let iterations = 400
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                let column = "w\(worker)"
                for i in 0..<iterations {
                    let name: String? = r.name
                    let born: Date? = r.born
                    let age: Int? = r["AGE"]
                    let photo: Data? = r.photo
                    if name != "张三" || born != Self.born1 || age != 14 || photo != Data([1, 2, 3]) {
                        failures.add("worker \(worker) read \(String(describing: name)) \(String(describing: born)) \(String(describing: age))")
                    }
                    r[column] = i
                    let mine: Int? = r[column]
                    if mine != i { failures.add("worker \(worker) wrote \(i) and read \(String(describing: mine))") }
                    if i % 50 == 0 {
                        _ = r.columnNames
                        _ = r.modifiedColumns
                        _ = r.description
                        _ = r.toDictionary()
                        _ = try? r.toJSON()
                    }
                }
            }
            #expect(failures.items.isEmpty)
            #expect(r.columnCount == 6 + 8)
            #expect(Array(r.columnNames.prefix(6)) == ["id", "name", "age", "born", "photo", "note"])
            #expect(Set(r.modifiedColumns) == Set((0..<8).map { "w\($0)" }))
            for worker in 0..<8 {
                let value: Int? = r["w\(worker)"]
                #expect(value == iterations - 1)
            }
            let name: String? = r.name
            #expect(name == "张三")
            #expect(r.born as? Date == Self.born1)
        }
    }

    @Test(arguments: Engine.available) func aTypedReadByNameNeverReturnsAnotherColumnWhileColumnsMove(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            let r = try #require(try t.db.findFirst("select 'A' as a, 'B' as b"))
            let wrong = Failures()
            // Both threads run for the same second, so that reads really overlap the moves.
            let deadline = ContinuousClock.now + .seconds(1)
            DispatchQueue.concurrentPerform(iterations: 2) { worker in
                if worker == 0 {
                    // Moves "b" between positions 0 and 1.
                    while ContinuousClock.now < deadline {
                        r.remove("a")
                        r["a"] = "A"
                    }
                } else {
                    while ContinuousClock.now < deadline {
                        let b: String? = r.b
                        if b != "B" { wrong.add(b ?? "nil") }
                    }
                }
            }
            #expect(wrong.items.isEmpty, "typed reads of b returned \(Set(wrong.items)) \(wrong.items.count) times")
        }
    }
}

/// Collects failures seen on other threads.
private final class Failures: Sendable {
    private let list = Mutex<[String]>([])
    func add(_ item: String) { list.withLock { $0.append(item) } }
    var items: [String] { list.withLock { $0 } }
}
