import Foundation
import Synchronization
import Testing
@testable import DicRecord

// Types private to this file, so that registering their converters (even globally) cannot
// affect any other test.

private struct Celsius: Sendable, Equatable {
    var degrees: Double
}

/// Counts decode and encode calls; one per test.
private final class CallCounter: Sendable {
    private let decodes = Atomic<Int>(0)
    private let encodes = Atomic<Int>(0)
    func decoded() { decodes.add(1, ordering: .relaxed) }
    func encoded() { encodes.add(1, ordering: .relaxed) }
    var decodeCount: Int { decodes.load(ordering: .relaxed) }
    var encodeCount: Int { encodes.load(ordering: .relaxed) }
}

private struct CelsiusConverter: TypeConverter {
    let counter: CallCounter
    var storageType: StorageType { .real }
    func encode(_ value: Celsius) throws -> DatabaseValue {
        counter.encoded()
        return .real(value.degrees)
    }
    func decode(_ value: DatabaseValue) throws -> Celsius {
        counter.decoded()
        switch value {
        case .real(let d): return Celsius(degrees: d)
        case .integer(let i): return Celsius(degrees: Double(i))
        default: throw ConversionError.cannotDecode(value, to: Celsius.self, "expected a number of degrees")
        }
    }
}

/// Registered globally *and* in one context, to see which one wins where.
private struct Kelvin: Sendable, Equatable {
    var value: Double
    var decodedBy: String
}

private struct KelvinConverter: TypeConverter {
    let tag: String
    var storageType: StorageType { tag == "context" ? .text : .real }
    func encode(_ value: Kelvin) throws -> DatabaseValue {
        tag == "context" ? .text("K\(value.value)") : .real(value.value)
    }
    func decode(_ value: DatabaseValue) throws -> Kelvin {
        switch value {
        case .real(let d): return Kelvin(value: d, decodedBy: tag)
        case .integer(let i): return Kelvin(value: Double(i), decodedBy: tag)
        case .text(let s) where s.hasPrefix("K"): return Kelvin(value: Double(s.dropFirst()) ?? .nan, decodedBy: tag)
        default: throw ConversionError.cannotDecode(value, to: Kelvin.self, "not a temperature")
        }
    }
}

/// Registered only after the context started and ran queries.
private struct LateInContext: Sendable, Equatable {
    var text: String
}

private struct LateInContextConverter: TypeConverter {
    var storageType: StorageType { .text }
    func encode(_ value: LateInContext) throws -> DatabaseValue { .text("late:" + value.text) }
    func decode(_ value: DatabaseValue) throws -> LateInContext {
        guard case .text(let s) = value else { throw ConversionError.cannotDecode(value, to: LateInContext.self, "expected TEXT") }
        return LateInContext(text: s)
    }
}

private struct LateGlobal: Sendable, Equatable {
    var number: Int64
}

private struct LateGlobalConverter: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: LateGlobal) throws -> DatabaseValue { .integer(value.number * 10) }
    func decode(_ value: DatabaseValue) throws -> LateGlobal {
        guard case .integer(let i) = value else { throw ConversionError.cannotDecode(value, to: LateGlobal.self, "expected INTEGER") }
        return LateGlobal(number: i)
    }
}

/// API.md §2 "Lazy conversion": fetching converts nothing; the first typed read converts and
/// keeps the value; converters are found per context and registrations take effect at once.
@Suite struct LazyConversionTests {
    /// A table of 1,000 temperatures 0.5, 1.0, ... 500.0.
    private static func makeReadings(_ t: TestDatabase) throws {
        try t.db.update("create table reading(id integer primary key, c real, label text)")
        try t.db.update("""
            with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000)
            insert into reading(id, c, label) select i, i * 0.5, 'r' || i from n
            """)
    }

    @Test func fetchingAThousandRowsConvertsNothing() throws {
        try withDatabase { t in
            let counter = CallCounter()
            t.context.register(converter: CelsiusConverter(counter: counter))
            try Self.makeReadings(t)
            let rows = try t.db.find("select * from reading order by id")
            #expect(rows.count == 1000)
            #expect(counter.decodeCount == 0)
            // Untyped reads, output and comparisons do not convert either.
            #expect(rows[0].c as? Double == 0.5)
            _ = rows[1].description
            _ = try rows[2].toJSON()
            _ = rows[3].toDictionary()
            #expect(rows[4] != rows[5])
            #expect(counter.decodeCount == 0)
            // Neither do findFirst and each.
            _ = try t.db.findFirst("select * from reading where id = ?", 7)
            var seen = 0
            try t.db.each("select * from reading") { _ in seen += 1; return true }
            #expect(seen == 1000)
            #expect(counter.decodeCount == 0)
        }
    }

    @Test func theFirstTypedReadConvertsAndTheSecondReusesTheKeptValue() throws {
        try withDatabase { t in
            let counter = CallCounter()
            t.context.register(converter: CelsiusConverter(counter: counter))
            try Self.makeReadings(t)
            let rows = try t.db.find("select * from reading order by id")
            let first: Celsius? = rows[9].c
            #expect(first == Celsius(degrees: 5))
            #expect(counter.decodeCount == 1)
            let second: Celsius? = rows[9].c
            #expect(second == Celsius(degrees: 5))
            let byName: Celsius? = rows[9]["C"]
            let byGet = try rows[9].get("c", as: Celsius.self)
            let asOptional = try rows[9].get("c", as: Celsius?.self)
            #expect(byName == first && byGet == first && asOptional == first)
            #expect(counter.decodeCount == 1)
            // Another record's column converts once more, and only once.
            let other: Celsius? = rows[99].c
            #expect(other == Celsius(degrees: 50))
            #expect(counter.decodeCount == 2)
            let otherAgain: Celsius? = rows[99].c
            #expect(otherAgain == other)
            #expect(counter.decodeCount == 2)
            // Reading the same column as another type does not use the Celsius converter.
            let raw: Double? = rows[9].c
            #expect(raw == 5)
            #expect(counter.decodeCount == 2)
        }
    }

    @Test func theKeptValueDoesNotMarkTheColumnModified() throws {
        try withDatabase { t in
            let counter = CallCounter()
            t.context.register(converter: CelsiusConverter(counter: counter))
            try Self.makeReadings(t)
            let r = try #require(try t.db.findFirst("select * from reading where id = 3"))
            let c: Celsius? = r.c
            #expect(c == Celsius(degrees: 1.5))
            #expect(r.modifiedColumns.isEmpty)
            #expect(r.c as? Celsius == Celsius(degrees: 1.5))     // the untyped value is now the converted one
            t.clearLog()
            #expect(try t.db.update("reading", r) == false)      // nothing to write
            #expect(!t.statements.contains { $0.uppercased().hasPrefix("UPDATE") })
            #expect(counter.encodeCount == 0)

            // A write replaces the kept value without converting back from SQLite, and is saved.
            r.c = Celsius(degrees: -40)
            #expect(r.modifiedColumns == ["c"])
            let written: Celsius? = r.c
            #expect(written == Celsius(degrees: -40))
            #expect(counter.decodeCount == 1)
            #expect(try t.db.update("reading", r))
            #expect(try t.db.queryDouble("select c from reading where id = 3") == -40)
        }
    }

    @Test func aFailedConversionGivesNilAndKeepsTheStoredValue() throws {
        try withDatabase { t in
            let counter = CallCounter()
            t.context.register(converter: CelsiusConverter(counter: counter))
            let r = try #require(try t.db.findFirst("select 'hot' as c"))
            let first: Celsius? = r.c
            let second: Celsius? = r.c
            #expect(first == nil && second == nil)
            #expect(counter.decodeCount >= 1)
            #expect(r.c as? String == "hot")
            #expect(throws: ConversionError.self) { try r.get("c", as: Celsius.self) }
        }
    }

    @Test func aContextConverterWinsInThatContextOnly() throws {
        Converters.register(KelvinConverter(tag: "global"))
        try withDatabase { t in
            t.context.register(converter: KelvinConverter(tag: "context"))
            let other = try DbContext.inMemory(configName: "other")
            try other.start()
            defer { other.stop() }
            let otherDb = Db.use("other")

            try t.db.update("create table temp(id integer primary key, k)")
            try otherDb.update("create table temp(id integer primary key, k)")
            try t.db.update("insert into temp(k) values (300.0)")
            try otherDb.update("insert into temp(k) values (300.0)")

            let mainRow = try #require(try t.db.findFirst("select k from temp"))
            let otherRow = try #require(try otherDb.findFirst("select k from temp"))
            let inMain: Kelvin? = mainRow.k
            let inOther: Kelvin? = otherRow.k
            #expect(inMain == Kelvin(value: 300, decodedBy: "context"))
            #expect(inOther == Kelvin(value: 300, decodedBy: "global"))

            // Arguments are encoded by the same rule.
            #expect(try t.db.queryString("select typeof(?)", Kelvin(value: 1, decodedBy: "")) == "text")
            #expect(try t.db.queryString("select ?", Kelvin(value: 1, decodedBy: "")) == "K1.0")
            #expect(try otherDb.queryString("select typeof(?)", Kelvin(value: 1, decodedBy: "")) == "real")
            #expect(try t.db.queryFirst("select 'K2.5'", as: Kelvin.self) == Kelvin(value: 2.5, decodedBy: "context"))
            #expect(try otherDb.queryFirst("select 2.5", as: Kelvin.self) == Kelvin(value: 2.5, decodedBy: "global"))

            // Records written in each context store through their own converter.
            let r = try #require(try t.db.findFirst("select * from temp"))
            r.k = Kelvin(value: 7, decodedBy: "")
            #expect(try t.db.update("temp", r))
            #expect(try t.db.queryString("select k from temp") == "K7.0")
            let o = try #require(try otherDb.findFirst("select * from temp"))
            o.k = Kelvin(value: 7, decodedBy: "")
            #expect(try otherDb.update("temp", o))
            #expect(try otherDb.queryString("select typeof(k) from temp") == "real")

            // The registries themselves.
            #expect(t.context.converters.storageType(for: Kelvin.self) == .text)
            #expect(other.converters.storageType(for: Kelvin.self) == .real)
            #expect(Converters.shared.storageType(for: Kelvin.self) == .real)
        }
    }

    @Test func aConverterRegisteredAfterStartAndAfterAQueryIsUsedAtOnce() throws {
        try withDatabase { t in
            try t.db.update("create table note(id integer primary key, body text, n integer)")
            try t.db.update("insert into note(body, n) values ('hello', 4)")
            let before = try #require(try t.db.findFirst("select * from note"))

            // Not registered yet: typed reads give nil, get and arguments throw naming the type.
            let early: LateInContext? = before.body
            #expect(early == nil)
            let noConverter = try #require(throws: ConversionError.self) { try before.get("body", as: LateInContext.self) }
            #expect(noConverter.kind == .noConverter)
            #expect(noConverter.description.contains("LateInContext"))
            let argument = try #require(throws: DicRecordError.self) {
                try t.db.queryString("select ?", LateInContext(text: "x"))
            }
            #expect(argument.kind == .unsupportedArgument)

            t.context.register(converter: LateInContextConverter())

            // The record fetched before registration converts now, as does a new query and an argument.
            let now: LateInContext? = before.body
            #expect(now == LateInContext(text: "hello"))
            let fresh = try #require(try t.db.findFirst("select * from note"))
            let freshValue: LateInContext? = fresh.body
            #expect(freshValue == LateInContext(text: "hello"))
            #expect(try t.db.queryString("select ?", LateInContext(text: "x")) == "late:x")

            // The same holds for a global registration after start.
            let globalBefore: LateGlobal? = before.n
            #expect(globalBefore == nil)
            #expect(throws: DicRecordError.self) { try t.db.queryInt("select ?", LateGlobal(number: 1)) }
            Converters.register(LateGlobalConverter())
            let globalNow: LateGlobal? = before.n
            #expect(globalNow == LateGlobal(number: 4))
            #expect(try t.db.queryInt("select ?", LateGlobal(number: 3)) == 30)
            let viaRecord = try #require(try t.db.findFirst("select n from note"))
            let value: LateGlobal? = viaRecord.n
            #expect(value == LateGlobal(number: 4))
        }
    }

    @Test func aReplacedContextConverterIsUsedForValuesNotYetConverted() throws {
        try withDatabase { t in
            let firstCounter = CallCounter()
            let secondCounter = CallCounter()
            t.context.register(converter: CelsiusConverter(counter: firstCounter))
            let rows = try t.db.find("select 1.0 as c union all select 2.0")
            let a: Celsius? = rows[0].c
            #expect(a == Celsius(degrees: 1))
            t.context.register(converter: CelsiusConverter(counter: secondCounter))
            let b: Celsius? = rows[1].c
            #expect(b == Celsius(degrees: 2))
            #expect(firstCounter.decodeCount == 1)
            #expect(secondCounter.decodeCount == 1)
        }
    }
}
