import Foundation
import Testing
@testable import DicRecord

/// Values at the edges, through a real table: stored with a saved Record and with an `update`
/// argument, read back with find + typed reads, and the storage class checked with `typeof`.
@Suite struct ValueRoundTripTests {
    private static func makeTable(_ t: TestDatabase) throws {
        try t.db.update("create table v(id integer primary key, i INTEGER, r REAL, s TEXT, b BLOB, x)")
    }

    /// Stores `value` in `column` twice — a saved Record, then an `update` argument — and returns
    /// both rows as fetched with SQLite's `typeof` of the column.
    private static func store(_ t: TestDatabase, _ column: String, _ value: DatabaseArgument) throws -> [(row: Record, type: String)] {
        let record = Record()
        record[column] = value
        #expect(try t.db.save("v", record))
        let savedId = try #require(record.id as? Int64)
        #expect(try t.db.update("insert into v(\(column)) values (?)", value) == 1)
        let argumentId = try #require(try t.db.queryInt64("select max(id) from v"))
        #expect(argumentId == savedId + 1)
        return try [savedId, argumentId].map { id in
            let row = try #require(try t.db.findById("v", id))
            let type = try #require(try t.db.queryString("select typeof(\(column)) from v where id = ?", id))
            return (row, type)
        }
    }

    private static func rowCount(_ t: TestDatabase) throws -> Int {
        try t.db.queryInt("select count(*) from v") ?? -1
    }

    // MARK: Integers

    @Test(arguments: [Int64.min, Int64.max, 0, -1, 1])
    func int64Extremes(_ value: Int64) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for (row, type) in try Self.store(t, "i", value) {
                #expect(type == "integer")
                let back: Int64? = row.i
                #expect(back == value)
                #expect(row.i as? Int64 == value)
                let asInt: Int? = row.i
                #expect(asInt == Int(value))
            }
            #expect(try t.db.queryString("select i from v limit 1") == String(value))
            #expect(try t.db.queryInt64("select i from v where i = ?", value) == value)
        }
    }

    @Test func int64ExtremesDoNotTruncateIntoSmallerTypes() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let max = try #require(try Self.store(t, "i", Int64.max).first?.row)
            let min = try #require(try Self.store(t, "i", Int64.min).first?.row)
            let maxAsInt32: Int32? = max.i
            let maxAsUInt64: UInt64? = max.i
            let minAsUInt64: UInt64? = min.i
            let minAsInt8: Int8? = min.i
            #expect(maxAsInt32 == nil)
            #expect(maxAsUInt64 == UInt64(Int64.max))
            #expect(minAsUInt64 == nil)
            #expect(minAsInt8 == nil)
            #expect(throws: ConversionError.self) { try max.get("i", as: Int32.self) }
        }
    }

    @Test func uint32MaxIsAnInteger() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for (row, type) in try Self.store(t, "i", UInt32.max) {
                #expect(type == "integer")
                #expect(row.i as? Int64 == 4_294_967_295)     // the stored value, before any typed read
                let back: UInt32? = row.i
                #expect(back == UInt32.max)
                let asInt32: Int32? = row.i
                #expect(asInt32 == nil)                       // out of range: nil, never truncated
            }
            #expect(try t.db.queryInt64("select i from v limit 1") == 4_294_967_295)
        }
    }

    @Test func uint64UpToInt64MaxRoundTrips() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let value = UInt64(Int64.max)
            for (row, type) in try Self.store(t, "i", value) {
                #expect(type == "integer")
                let back: UInt64? = row.i
                #expect(back == value)
            }
            #expect(try t.db.queryString("select i from v limit 1") == "9223372036854775807")
        }
    }

    @Test(arguments: [UInt64(Int64.max) + 1, UInt64.max])
    func uint64AboveInt64MaxIsRefusedAndNothingIsInserted(_ value: UInt64) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let sql = "insert into v(i) values (?)"
            let error = try #require(throws: DicRecordError.self) { try t.db.update(sql, value) }
            #expect(error.kind == .unsupportedArgument)
            #expect(error.sql == sql)
            #expect(error.description.contains("UInt64"))
            #expect(error.description.contains(String(value)))
            #expect(try Self.rowCount(t) == 0)

            // Through a record: a thrown error naming the column, nothing inserted.
            let record = Record()
            record.i = value
            let saveError = try #require(throws: ConversionError.self) { try t.db.save("v", record) }
            #expect(saveError.column == "i")
            #expect(saveError.kind == .invalidValue)
            #expect(try Self.rowCount(t) == 0)
        }
    }

    // MARK: Floating point

    @Test(arguments: [Double.greatestFiniteMagnitude, -Double.greatestFiniteMagnitude, Double.leastNonzeroMagnitude,
                      -Double.leastNonzeroMagnitude, Double.leastNormalMagnitude, Double.pi, 0.1, -1e-300, 1e300])
    func doubleExtremesKeepTheirBits(_ value: Double) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for (row, type) in try Self.store(t, "r", value) {
                #expect(type == "real")
                let back: Double? = row.r
                #expect(back?.bitPattern == value.bitPattern)
            }
            #expect(try t.db.queryInt("select count(*) from v where r = ?", value) == 2)
        }
    }

    @Test(arguments: [Float.greatestFiniteMagnitude, -Float.greatestFiniteMagnitude, Float.leastNonzeroMagnitude,
                      Float.leastNormalMagnitude, Float.pi, Float(0.1), Float(-123.456)])
    func floatExtremesRoundTrip(_ value: Float) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for (row, type) in try Self.store(t, "r", value) {
                #expect(type == "real")
                let back: Float? = row.r
                #expect(back == value)
            }
            // Stored through Float's shortest decimal form: SQL sees the number the user wrote.
            #expect(try t.db.queryDouble("select r from v limit 1") == Double(value.description))
        }
    }

    @Test func floatReadOfADoubleBeyondFloatRangeIsNil() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let row = try #require(try Self.store(t, "r", 1e300).first?.row)
            let f: Float? = row.r
            #expect(f == nil)
            #expect(throws: ConversionError.self) { try row.get("r", as: Float.self) }
        }
    }

    @Test func negativeZero() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            // A column without affinity keeps the sign of -0.0.
            for (row, type) in try Self.store(t, "x", -0.0) {
                #expect(type == "real")
                let back = try #require(row.x as Double?)
                #expect(back == 0)
                #expect(back.sign == .minus)
                #expect(back.bitPattern == (-0.0).bitPattern)
            }
            // SQLite itself loses the sign in a REAL column: it stores whole REAL values as
            // integers on disk ("an internal optimization") and reads -0.0 back as +0.0.
            for (row, type) in try Self.store(t, "r", -0.0) {
                #expect(type == "real")
                let back = try #require(row.r as Double?)
                #expect(back == 0)
                #expect(back.sign == .plus)
            }
        }
    }

    @Test(arguments: [Double.infinity, -Double.infinity])
    func infinitiesRoundTrip(_ value: Double) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for (row, type) in try Self.store(t, "r", value) {
                #expect(type == "real")
                let back: Double? = row.r
                #expect(back == value)
                let asFloat: Float? = row.r
                #expect(asFloat == Float(value))
                let asDate: Date? = row.r                    // an infinite date makes no sense: nil
                #expect(asDate == nil)
            }
            let test = value > 0 ? "r > 1e308" : "r < -1e308"
            #expect(try t.db.queryInt("select count(*) from v where \(test)") == 2)
        }
    }

    @Test func nanArgumentsThrowAndNothingIsInserted() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let sql = "insert into v(r) values (?)"
            for value in [Double.nan as DatabaseArgument, Float.nan, Double.signalingNaN, Decimal.nan] {
                let error = try #require(throws: DicRecordError.self) { try t.db.update(sql, value) }
                #expect(error.kind == .unsupportedArgument)
                #expect(error.sql == sql)
                #expect(error.description.contains("NaN") || error.description.contains("nan"))
            }
            let record = Record()
            record.r = Double.nan
            let saveError = try #require(throws: ConversionError.self) { try t.db.save("v", record) }
            #expect(saveError.column == "r")
            #expect(try Self.rowCount(t) == 0)
        }
    }

    // MARK: Text

    @Test func emptyStringStaysAnEmptyText() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for (row, type) in try Self.store(t, "s", "") {
                #expect(type == "text")
                let back: String? = row.s
                #expect(back == "")
            }
            #expect(try t.db.queryInt("select count(*) from v where s is null") == 0)
            #expect(try t.db.queryInt("select count(*) from v where s = ''") == 2)
        }
    }

    @Test func stringWithNulRoundTrips() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let value = "a\u{0}b"
            for (row, type) in try Self.store(t, "s", value) {
                #expect(type == "text")
                let back = try #require(row.s as String?)
                #expect(back.count == 3)
                #expect(back == value)
                #expect(back.unicodeScalars.map(\.value) == [97, 0, 98])
            }
            #expect(try t.db.queryInt("select length(cast(s as blob)) from v limit 1") == 3)
            #expect(try t.db.queryString("select s from v limit 1") == value)
        }
    }

    @Test func fourByteEmojiAndCombiningSequencesRoundTrip() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let value = "👨‍👩‍👧‍👦 🎉 𝄞 é 张三"
            for (row, type) in try Self.store(t, "s", value) {
                #expect(type == "text")
                let back: String? = row.s
                #expect(back == value)
                #expect(back?.unicodeScalars.elementsEqual(value.unicodeScalars) == true)
            }
            #expect(try t.db.queryInt("select length(cast(s as blob)) from v limit 1") == value.utf8.count)
            #expect(try t.db.queryInt("select count(*) from v where s = ?", value) == 2)
        }
    }

    // MARK: Blobs

    @Test func emptyBlobStaysAnEmptyBlob() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            for value in [Data() as DatabaseArgument, [UInt8]()] {
                for (row, type) in try Self.store(t, "b", value) {
                    #expect(type == "blob")
                    let back: Data? = row.b
                    #expect(back == Data())
                    #expect(row.b as? Data == Data())
                    let bytes: [UInt8]? = row.b
                    #expect(bytes == [])
                }
            }
            #expect(try t.db.queryInt("select count(*) from v where b is null") == 0)
            #expect(try t.db.queryInt("select count(*) from v where length(b) = 0 and typeof(b) = 'blob'") == 4)
        }
    }

    @Test func oneMebibyteBlobRoundTrips() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            var generator = SystemRandomNumberGenerator()
            let value = Data((0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) })
            for (row, type) in try Self.store(t, "b", value) {
                #expect(type == "blob")
                let back: Data? = row.b
                #expect(back?.count == 1 << 20)
                #expect(back == value)
            }
            #expect(try t.db.queryInt("select length(b) from v limit 1") == 1 << 20)
            #expect(try t.db.queryData("select b from v limit 1") == value)
        }
    }

    // MARK: Dates

    @Test(arguments: [
        (-1_234_567_890.123, "1930-11-18 00:28:29.877"),
        (253_402_300_799.999, "9999-12-31 23:59:59.999"),
        (-86_400.5, "1969-12-30 23:59:59.500"),
        (0.001, "1970-01-01 00:00:00.001"),
    ])
    func datesBefore1970AndInYear9999KeepMilliseconds(_ seconds: Double, _ sqliteText: String) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let date = Date(timeIntervalSince1970: seconds)
            for (row, type) in try Self.store(t, "r", date) {
                #expect(type == "real")
                let back: Date? = row.r
                #expect(back == date)
                #expect(back?.timeIntervalSince1970 == date.timeIntervalSince1970)
            }
            // SQLite's own date functions read the stored value as the same instant.
            #expect(try t.db.queryString("select strftime('%Y-%m-%d %H:%M:%f', r, 'unixepoch') from v limit 1") == sqliteText)
            // And SQLite's text form reads back as a Date, to the millisecond.
            let fromText = try #require(try t.db.queryDate("select strftime('%Y-%m-%d %H:%M:%f', r, 'unixepoch') from v limit 1"))
            #expect(abs(fromText.timeIntervalSince1970 - seconds) < 0.0005)
        }
    }

    // MARK: Foundation types

    @Test func urlsWithNonASCIIRoundTrip() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let web = try #require(URL(string: "https://例子.测试/路径/文件?q=值#片段"))
            let file = URL(fileURLWithPath: "/tmp/张三 的文件.txt")
            for url in [web, file] {
                for (row, type) in try Self.store(t, "s", url) {
                    #expect(type == "text")
                    let back: URL? = row.s
                    #expect(back == url)
                    #expect(back?.absoluteString == url.absoluteString)
                }
                #expect(try t.db.queryString("select s from v order by id desc limit 1") == url.absoluteString)
            }
            #expect(file.path == "/tmp/张三 的文件.txt")
            let fileBack: URL? = try #require(try t.db.findFirst("select s from v where s like 'file:%'")).s
            #expect(fileBack?.path == "/tmp/张三 的文件.txt")
        }
    }

    @Test func uuidIsTextAndReadsEitherCaseAndSixteenByteBlobs() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
            for (row, type) in try Self.store(t, "s", uuid) {
                #expect(type == "text")
                let back: UUID? = row.s
                #expect(back == uuid)
            }
            #expect(try t.db.queryString("select s from v limit 1") == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
            #expect(try t.db.queryFirst("select lower(s) from v limit 1", as: UUID.self) == uuid)
            #expect(try t.db.queryFirst("select x'E621E1F8C36C495A93FC0C247A3E6E5F'", as: UUID.self) == uuid)
            #expect(throws: ConversionError.self) { try t.db.queryFirst("select 'not-a-uuid'", as: UUID.self) }
        }
    }

    @Test(arguments: ["12345678901234567890123456789012345678", "-1234567890123456789.0123456789012345678", "0.1", "-7"])
    func decimalIsExactText(_ text: String) throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let value = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")))
            for (row, type) in try Self.store(t, "s", value) {
                #expect(type == "text")
                let back: Decimal? = row.s
                #expect(back == value)
            }
            #expect(try t.db.queryString("select s from v limit 1") == text)
        }
    }

    @Test func colorIsIntegerARGB() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let translucent = Color(red: 0x12, green: 0x34, blue: 0x56, alpha: 0x78)
            let opaque = Color(red: 0x12, green: 0x34, blue: 0x56)
            for (color, argb) in [(translucent, Int64(0x7812_3456)), (opaque, Int64(0xFF12_3456))] {
                for (row, type) in try Self.store(t, "i", color) {
                    #expect(type == "integer")
                    #expect(row.i as? Int64 == argb)
                    let back: Color? = row.i
                    #expect(back == color)
                    #expect(row.i as? Color == color)         // the kept converted value
                }
            }
            #expect(try t.db.query("select i from v order by id", as: Int64.self) == [0x7812_3456, 0x7812_3456, 0xFF12_3456, 0xFF12_3456])
            // Outside 0...0xFFFFFFFF is not a color.
            let bad = try #require(try t.db.findFirst("select -1 as c, 4294967296 as d"))
            let c: Color? = bad.c
            let d: Color? = bad.d
            #expect(c == nil && d == nil)
        }
    }

    @Test func cgRectIsA32ByteLittleEndianBlob() throws {
        try withDatabase { t in
            try Self.makeTable(t)
            let rect = CGRect(x: 1.5, y: -2, width: 300.25, height: 0)
            for (row, type) in try Self.store(t, "b", rect) {
                #expect(type == "blob")
                let back: CGRect? = row.b
                #expect(back == rect)
            }
            #expect(try t.db.queryInt("select length(b) from v limit 1") == 32)
            #expect(try t.db.queryString("select hex(substr(b, 1, 8)) from v limit 1") == "000000000000F83F")   // 1.5
            #expect(try t.db.queryString("select hex(substr(b, 9, 8)) from v limit 1") == "00000000000000C0")   // -2.0
            let short = try #require(try t.db.findFirst("select substr(b, 1, 31) as b from v limit 1"))
            let notARect: CGRect? = short.b
            #expect(notARect == nil)
        }
    }

    // MARK: SQL in values and names

    @Test func sqlInAValueIsStoredVerbatimAndNeverRun() throws {
        try withDatabase { t in
            try t.db.update("create table student(id integer primary key, name text)")
            let evil = "'); DROP TABLE student; --"
            let record = Record()
            record.name = evil
            #expect(try t.db.save("student", record))
            #expect(try t.db.update("insert into student(name) values (?)", evil) == 1)
            #expect(try t.db.update("insert into student(name) values (:name)", arguments: ["name": evil]) == 1)
            let rows = try t.db.find("select * from student where name = ?", evil)
            #expect(rows.count == 3)
            for row in rows {
                let name: String? = row.name
                #expect(name == evil)
            }
            #expect(try t.db.queryInt("select count(*) from sqlite_master where type = 'table' and name = 'student'") == 1)
            #expect(try t.db.queryInt("select count(*) from student") == 3)
        }
    }

    @Test func quotesInTableAndColumnNamesAreQuotedBySave() throws {
        try withDatabase { t in
            try t.db.update(#"create table "odd""table" (id integer primary key, "na""me" text, "order" integer)"#)
            let record = Record()
            record[#"na"me"#] = "x"
            record["order"] = 3
            #expect(try t.db.save(#"odd"table"#, record))
            let id = try #require(record.id as? Int64)
            let back = try #require(try t.db.findById(#"odd"table"#, id))
            #expect(back[#"na"me"#] as? String == "x")
            #expect(back["order"] as? Int64 == 3)
            #expect(try t.db.queryInt("select count(*) from sqlite_master where type = 'table'") == 1)
        }
    }
}
