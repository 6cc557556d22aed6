import Foundation
import Testing
@testable import DicRecord

/// The built-in conversion rules are read on several paths: the registry's converters, the
/// inlined typed reads of a fetched record (by name and by index), the general read of a record
/// built in code, `Record.decode`, single-column queries and argument binding. Every built-in
/// type read from every storage class must give the same answer on each (issue 14: one rule,
/// however many readers), so a rule changed in one place and not the others fails here.
@Suite struct ConversionPathsTests {
    /// One value of each storage class, and the edges the rules treat differently.
    static let stored: [String] = [
        "NULL", "0", "1", "-7", "42", "3000000000", "9223372036854775807",
        "1.0", "1.5", "-0.0", "1e300", "9e999",
        "'abc'", "''", "'12'", "' 7 '", "'1.5'", "'true'", "'2024-05-01 12:00:00'", "'https://example.com/a?b=1'",
        "x''", "x'00ff'",
    ]

    /// What a path gave: a value's description, or "nil" for a read that gave none.
    static func show<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "nil" }

    private struct One<T: Decodable>: Decodable { var v: T? }

    func compare<T: Decodable & Sendable>(_ type: T.Type, _ db: Db) throws {
        for literal in Self.stored {
            let sql = "select \(literal) as v"
            let raw = try #require(try db.findFirst(sql)?.get("v", as: DatabaseValue.self) as DatabaseValue?)
            let byConverter = Self.show(try? Converters.shared.decode(raw, as: T.self))
            let fetched = try #require(try db.findFirst(sql))
            let byName: T? = fetched.v
            let byIndex: T? = fetched[0]
            let byGet = Self.show(try? fetched.get("v", as: T.self))
            var byEach: T?
            try db.each(sql) { row in byEach = row.v; return false }
            let built = try Record(["v": raw])
            let byBuilt: T? = built.v
            let byDecode = Self.show((try? fetched.decode(One<T>.self))?.v)
            let byQuery = Self.show((try? db.queryFirst(sql, as: T.self)) ?? nil)
            let context = "\(T.self) from \(literal)"
            #expect(Self.show(byName) == byConverter, "typed read by name, \(context)")
            #expect(Self.show(byIndex) == byConverter, "typed read by index, \(context)")
            #expect(byGet == byConverter, "get(_:as:), \(context)")
            #expect(Self.show(byEach) == byConverter, "each, \(context)")
            #expect(Self.show(byBuilt) == byConverter, "record built in code, \(context)")
            if raw != .null {   // decode reads NULL as nil, the converter refuses it: both "nothing"
                #expect(byDecode == byConverter, "Record.decode, \(context)")
                #expect(byQuery == byConverter, "queryFirst(as:), \(context)")
            }
        }
    }

    @Test func everyBuiltInTypeReadsAlikeOnEveryPath() throws {
        try withDatabase { t in
            try compare(Int.self, t.db)
            try compare(Int64.self, t.db)
            try compare(Int32.self, t.db)
            try compare(Double.self, t.db)
            try compare(Bool.self, t.db)
            try compare(String.self, t.db)
            try compare(Data.self, t.db)
            try compare(Date.self, t.db)
            try compare(URL.self, t.db)
            try compare(UUID.self, t.db)
        }
    }

    /// Binding an argument, saving a record and the converter's own encoding store the same
    /// value, or all refuse it.
    @Test func everyBuiltInTypeIsStoredAlikeOnEveryPath() throws {
        try withDatabase { t in
            try t.db.update("create table t(id integer primary key, v)")
            let values: [any Sendable] = [
                0, -7, Int.max, Int64.min, Int32(5), 1.5, -0.0, Double.infinity, Double.nan, true, false,
                "", "abc", Data(), Data([0, 255]), Date(timeIntervalSince1970: 86400.25), Date(timeIntervalSince1970: .nan),
                Date(timeIntervalSince1970: .infinity), URL(string: "https://example.com/a?b=1")!,
                UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!, UInt64.max, Float(2.5),
            ]
            for (i, value) in values.enumerated() {
                let expected = (try? Converters.shared.encode(value)).map { "\($0.storageName) \($0)" } ?? "refused"
                let bound = (try? t.db.update("insert into t(id, v) values (?, ?)", i * 3, value)) != nil
                let saved = (try? t.db.save("t", try Record(["id": i * 3 + 1, "v": value]))) != nil
                let batched = (try? t.db.batch("insert into t(id, v) values (?, ?)", [[i * 3 + 2, value]])) != nil
                func stored(_ id: Int) throws -> String {
                    guard let row = try t.db.findFirst("select v from t where id = ?", id) else { return "refused" }
                    let v = try row.get("v", as: DatabaseValue.self)
                    return "\(v.storageName) \(v)"
                }
                let context = "\(type(of: value)) #\(i)"   // not the value: Foundation's description of a NaN date traps
                #expect(try (bound ? stored(i * 3) : "refused") == expected, "bound argument, \(context)")
                #expect(try (saved ? stored(i * 3 + 1) : "refused") == expected, "record save, \(context)")
                #expect(try (batched ? stored(i * 3 + 2) : "refused") == expected, "batch, \(context)")
            }
        }
    }
}
