import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// The inlined typed reads (Int, Int64, Double, String, Bool, Data) must give exactly what the
/// built-in converters give, whatever SQLite stored; writes, per-context converters and `each`'s
/// record reuse must all be seen by them.
@Suite struct FastReadTests {
    static let stored: [DatabaseValue] = [
        .integer(5), .integer(0), .integer(-1), .integer(Int64.max), .integer(Int64.min),
        .real(3.0), .real(3.5), .real(-0.0), .real(1e300), .real(.infinity),
        .text("12"), .text(" 7 "), .text("abc"), .text(""), .text("true"), .text("2.0"),
        .blob(Data([1, 2, 3])), .blob(Data()), .null,
    ]

    /// What the converter (the general path) says; nil where it throws.
    private func expected<C: TypeConverter>(_ value: DatabaseValue, _ converter: C) -> C.Value? {
        value == .null ? nil : try? converter.decode(value)
    }

    @Test(arguments: stored)
    func fastReadsAgreeWithTheConverters(_ value: DatabaseValue) throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select ? as v", value))
            #expect(r.isMutated == false)   // the lock-free path is the one under test
            #expect((r[0] as Int?) == expected(value, IntegerConverter<Int>()))
            #expect((r["v"] as Int64?) == expected(value, IntegerConverter<Int64>()))
            let double: Double? = r.v
            #expect(double.map(\.bitPattern) == expected(value, DoubleConverter()).map(\.bitPattern))
            #expect((r.v as String?) == expected(value, StringConverter()))
            #expect((r.v as Bool?) == expected(value, BoolConverter()))
            #expect((r.v as Data?) == expected(value, DataConverter()))
            #expect((r.v as Date?) == expected(value, DateConverter()))
            #expect((r.v as URL?) == expected(value, URLConverter()))
        }
    }

    @Test func fastReadsSeeWritesAndRemovals() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 1 as id, 40 as age, 'a' as name"))
            #expect(r.age as Int? == 40)
            r.age = 41
            #expect(r.age as Int? == 41)
            r.remove("id")
            #expect(r[0] as Int? == 41)
            #expect(r.id as Int? == nil)
            r.name = nil
            #expect(r.name as String? == nil)
        }
    }

    @Test func aContextThatReplacesIntDecodesThroughItsConverterWhileOthersKeepTheFastPath() throws {
        let calls = Atomic<Int>(0)
        struct CountingInt: TypeConverter {
            let calls: @Sendable () -> Void
            var storageType: StorageType { .integer }
            func encode(_ value: Int) throws -> DatabaseValue { .integer(Int64(value)) }
            func decode(_ value: DatabaseValue) throws -> Int {
                calls()
                guard case .integer(let v) = value else { throw ConversionError.cannotDecode(value, to: Int.self, "INTEGER") }
                return Int(v) * 10
            }
        }
        try withDatabase { t in
            let other = try DbContext.inMemory(configName: "other")
            try other.start()
            defer { other.stop() }
            t.context.register(converter: CountingInt(calls: { calls.add(1, ordering: .relaxed) }))

            let mine = try #require(try t.db.findFirst("select 4 as n"))
            #expect(mine.n as Int? == 40)
            #expect(mine[0] as Int? == 40)
            let theirs = try #require(try Db.use("other").findFirst("select 4 as n"))
            #expect(theirs.n as Int? == 4)
            // One conversion: the second read of `n` finds the kept value; the other context never calls it.
            #expect(calls.load(ordering: .relaxed) == 1)
            struct Row: Decodable { var n: Int }
            #expect(try mine.decode(Row.self).n == 40)
            #expect(try theirs.decode(Row.self).n == 4)
        }
    }

    @Test func eachReusesOnlyRecordsTheCallbackDidNotKeep() throws {
        try withDatabase { t in
            try t.db.update("create table n(i integer, s text)")
            try t.db.batch("insert into n values (?, ?)", (1...50).map { (i: Int) -> [DatabaseArgument] in [i, "s\(i)"] })
            var kept: [Record] = []
            var sum = 0
            try t.db.each("select * from n order by i") { r in
                sum += (r.i as Int?) ?? 0
                if (r.i as Int?)! % 10 == 0 { kept.append(r) }
                return true
            }
            #expect(sum == (1...50).reduce(0, +))
            #expect(kept.count == 5)
            #expect(kept.compactMap { $0.i as Int? } == [10, 20, 30, 40, 50])
            #expect(kept.compactMap { $0.s as String? } == ["s10", "s20", "s30", "s40", "s50"])
            #expect(Set(kept.map(ObjectIdentifier.init)).count == 5)
            // A record written in the callback and dropped is refilled cleanly for the next row.
            var seen: [String] = []
            try t.db.each("select * from n where i <= 3 order by i") { r in
                r.extra = "x"
                r.remove("i")
                let s: String = r.s ?? "-"
                seen.append("\(r.columnNames)|\(s)")
                return true
            }
            #expect(seen == ["[\"s\", \"extra\"]|s1", "[\"s\", \"extra\"]|s2", "[\"s\", \"extra\"]|s3"])
        }
    }
}

/// The documented rule for calls nested in an `each` callback (ConnectionPool): reads take a
/// fresh reader when one is free, so they see what the callback committed; with every reader
/// busy they use the one the `each` holds instead of waiting for it.
@Suite struct EachNestingTests {
    @Test(arguments: [false, true])
    func readsInAnEachCallbackSeeTheCallbacksCommittedWrites(inMemory: Bool) throws {
        try withDatabase(inMemory: inMemory) { t in
            try t.db.update("create table n(i integer)")
            try t.db.batch("insert into n values (?)", [[1], [2], [3]])
            var counts: [Int] = []
            try t.db.each("select i from n where i <= 3 order by i") { r in
                try t.db.update("insert into n values (?)", 100 + ((r.i as Int?) ?? 0))
                counts.append(try t.db.queryInt("select count(*) from n") ?? -1)
                return true
            }
            #expect(counts == [4, 5, 6])
        }
    }

    @Test func withOneReaderANestedReadUsesTheHeldReaderInsteadOfWaiting() throws {
        var options = DbContext.Options()
        options.readerCount = 1
        options.busyTimeout = 2
        try withDatabase(options: options) { t in
            try t.db.update("create table n(i integer)")
            try t.db.batch("insert into n values (?)", [[1], [2]])
            var inner: [Int] = []
            try t.db.each("select i from n order by i") { _ in
                // The only reader is held by this `each`: the nested read must not wait for it.
                inner.append(try t.db.queryInt("select count(*) from n") ?? -1)
                return true
            }
            #expect(inner == [2, 2])
        }
    }
}

/// A Date read on the inlined path is "kept" as a per-column mark: the record then shows a Date
/// to untyped reads and JSON, exactly as a kept conversion does.
@Suite struct DateMarkTests {
    private let seconds = 1_020_873_600.25

    @Test func aTypedDateReadIsSeenByUntypedReadsAndJSONOfThatRecordOnly() throws {
        try withDatabase { t in
            let rows = try t.db.find("select 1 as id, ? as born union all select 2, ?", seconds, seconds)
            let date: Date? = rows[0].born
            #expect(date == Date(timeIntervalSince1970: seconds))
            #expect(rows[0].born as? Date == date)
            #expect(try rows[0].toJSON().contains("\"born\":\"2002-05-08T16:00:00.250Z\""))
            #expect(rows[1].born as? Double == seconds)          // never read as a Date
            #expect(try rows[1].toJSON().contains("\"born\":\(seconds)"))
        }
    }

    @Test func writingTheColumnForgetsTheDateButRemovingAnotherColumnKeepsIt() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 1 as id, ? as born, ? as died", seconds, seconds + 1))
            let _: Date? = r.born
            let _: Date? = r.died
            r.remove("id")                                        // columns move: the marks must follow
            #expect(r.born as? Date == Date(timeIntervalSince1970: seconds))
            #expect(r.died as? Date == Date(timeIntervalSince1970: seconds + 1))
            r.died = 7.5
            #expect(r.died as? Double == 7.5)
            #expect(r.born as? Date == Date(timeIntervalSince1970: seconds))
        }
    }

    @Test func eachForgetsTheMarkOfThePreviousRow() throws {
        try withDatabase { t in
            try t.db.update("create table d(at real)")
            try t.db.batch("insert into d values (?)", [[seconds], [seconds + 1]])
            var untyped: [String] = []
            try t.db.each("select at from d order by at") { r in
                if untyped.isEmpty { let _: Date? = r.at }
                untyped.append(r.at is Date ? "date" : "double")
                return true
            }
            #expect(untyped == ["date", "double"])
        }
    }
}
