import Foundation
import PropertyBased
import Testing
@testable import DicRecord
@testable import DicRecordConverters

// Property-based tests: every built-in converter round-trips random values (directly and through
// a real table), records round-trip through JSON, and `paginate` agrees with an in-memory model.
//
// Note on `propertyCheck`: PropertyBased 2.0.1 runs the body under `try?`, so an error thrown
// out of the body is silently dropped. Every body here goes through `recordingErrors`, which
// turns a thrown error into a recorded issue.

@Suite("PropertyTests")
struct PropertyTests {
    // MARK: Converters

    @Test func integersRoundTrip() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            let ids = IdSource()
            await Self.roundTrip(IntegerConverter<Int>(), t, ids, Self.integer(Int.self))
            await Self.roundTrip(IntegerConverter<Int8>(), t, ids, Self.integer(Int8.self))
            await Self.roundTrip(IntegerConverter<Int16>(), t, ids, Self.integer(Int16.self))
            await Self.roundTrip(IntegerConverter<Int32>(), t, ids, Self.integer(Int32.self))
            await Self.roundTrip(IntegerConverter<Int64>(), t, ids, Self.integer(Int64.self))
            await Self.roundTrip(IntegerConverter<UInt8>(), t, ids, Self.integer(UInt8.self))
            await Self.roundTrip(IntegerConverter<UInt16>(), t, ids, Self.integer(UInt16.self))
            await Self.roundTrip(IntegerConverter<UInt32>(), t, ids, Self.integer(UInt32.self))
            // UInt and UInt64 are 64-bit: above Int64.max they are refused on encode, never wrapped.
            await Self.roundTrip(IntegerConverter<UInt>(), t, ids, Self.integer(UInt.self),
                                 refusedOnEncode: { $0 > UInt(Int64.max) })
            await Self.roundTrip(IntegerConverter<UInt64>(), t, ids, Self.integer(UInt64.self),
                                 refusedOnEncode: { $0 > UInt64(Int64.max) })
        }
    }

    @Test func boolRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            await Self.roundTrip(BoolConverter(), t, IdSource(), Self.orNil { rng in Bool.random(using: &rng) })
        }
    }

    /// Doubles and Floats keep their exact bits, with the two documented exceptions: NaN is
    /// refused on encode (SQLite would store NULL), and a REAL column turns -0.0 into +0.0
    /// (SQLite stores whole REAL values as integers; see ValueRoundTripTests.negativeZero).
    /// A column without affinity keeps -0.0.
    @Test func floatingPointRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            let ids = IdSource()
            await Self.roundTrip(DoubleConverter(), t, ids, Self.orNil { rng in Self.double(&rng) },
                                 same: { $0.bitPattern == $1.bitPattern },
                                 refusedOnEncode: { $0.isNaN },
                                 inRealColumn: { $0 == 0 ? 0 : $0 })
            await Self.roundTrip(FloatConverter(), t, ids, Self.orNil { rng in Self.float(&rng) },
                                 same: { $0.bitPattern == $1.bitPattern },
                                 refusedOnEncode: { $0.isNaN },
                                 inRealColumn: { $0 == 0 ? 0 : $0 })
        }
    }

    @Test func decimalRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            await Self.roundTrip(DecimalConverter(), t, IdSource(), Self.orNil { rng in Self.decimal(&rng) },
                                 refusedOnEncode: { $0.isNaN })
        }
    }

    /// Strings compare by Unicode scalars (String's `==` is canonical equivalence, which would
    /// hide a normalization). They include NUL and other control characters, emoji, and "".
    @Test func stringRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            await Self.roundTrip(StringConverter(), t, IdSource(), Self.orNil { rng in Self.string(&rng) },
                                 same: { $0.unicodeScalars.elementsEqual($1.unicodeScalars) })
        }
    }

    @Test func blobsRoundTrip() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            let ids = IdSource()
            await Self.roundTrip(DataConverter(), t, ids, Self.orNil { rng in Data(Self.bytes(&rng)) })
            await Self.roundTrip(BytesConverter(), t, ids, Self.orNil { rng in Self.bytes(&rng) })
        }
    }

    /// A Date is its `timeIntervalSince1970` as REAL, bit for bit. Decoding builds
    /// `Date(timeIntervalSince1970:)`, which Foundation may round (it keeps seconds since 2001):
    /// the decoded Date is exactly the one Foundation builds from the stored seconds.
    @Test func dateRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            await Self.roundTrip(DateConverter(), t, IdSource(), Self.orNil { rng in Self.date(&rng) },
                                 same: { decoded, original in
                                     decoded == Date(timeIntervalSince1970: original.timeIntervalSince1970)
                                 },
                                 encodesAs: { .real($0.timeIntervalSince1970) })
        }
    }

    @Test func urlRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            await Self.roundTrip(URLConverter(), t, IdSource(), Self.orNil { rng in Self.url(&rng) },
                                 same: { $0 == $1 && $0.absoluteString == $1.absoluteString },
                                 encodesAs: { .text($0.absoluteString) })
        }
    }

    @Test func uuidAndColorRoundTrip() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            let ids = IdSource()
            await Self.roundTrip(UUIDConverter(), t, ids, Self.orNil { rng in
                let b = (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
                return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
            }, encodesAs: { .text($0.uuidString) })
            await Self.roundTrip(ColorConverter(), t, ids, Self.orNil { rng in
                Color(argb: UInt32.random(in: 0...UInt32.max, using: &rng))
            }, encodesAs: { .integer(Int64($0.argb)) })
        }
    }

    /// The geometry types are BLOBs of little-endian Float64 fields: every bit pattern, NaN
    /// payloads included, comes back. Compared field by field on the bits.
    @Test func geometryRoundTrips() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            let ids = IdSource()
            await Self.roundTrip(PackedConverter<CGPoint>(), t, ids, Self.orNil { rng in
                CGPoint(x: Self.double(&rng), y: Self.double(&rng))
            }, same: { Self.sameBits([$0.x, $0.y], [$1.x, $1.y]) })
            await Self.roundTrip(PackedConverter<CGSize>(), t, ids, Self.orNil { rng in
                CGSize(width: Self.double(&rng), height: Self.double(&rng))
            }, same: { Self.sameBits([$0.width, $0.height], [$1.width, $1.height]) })
            await Self.roundTrip(PackedConverter<CGRect>(), t, ids, Self.orNil { rng in
                CGRect(x: Self.double(&rng), y: Self.double(&rng), width: Self.double(&rng), height: Self.double(&rng))
            }, same: {
                Self.sameBits([$0.origin.x, $0.origin.y, $0.size.width, $0.size.height],
                              [$1.origin.x, $1.origin.y, $1.size.width, $1.size.height])
            })
            await Self.roundTrip(PackedConverter<EdgeInsets>(), t, ids, Self.orNil { rng in
                EdgeInsets(top: Self.double(&rng), left: Self.double(&rng), bottom: Self.double(&rng), right: Self.double(&rng))
            }, same: { Self.sameBits([$0.top, $0.left, $0.bottom, $0.right], [$1.top, $1.left, $1.bottom, $1.right]) })
            await Self.roundTrip(NSRangeConverter(), t, ids, Self.orNil { rng in
                NSRange(location: Self.integer(Int.self, &rng), length: Self.integer(Int.self, &rng))
            }, same: { $0.location == $1.location && $0.length == $1.length })
            #if canImport(CoreGraphics)
            await Self.roundTrip(PackedConverter<CGVector>(), t, ids, Self.orNil { rng in
                CGVector(dx: Self.double(&rng), dy: Self.double(&rng))
            }, same: { Self.sameBits([$0.dx, $0.dy], [$1.dx, $1.dy]) })
            await Self.roundTrip(PackedConverter<CGAffineTransform>(), t, ids, Self.orNil { rng in
                CGAffineTransform(a: Self.double(&rng), b: Self.double(&rng), c: Self.double(&rng),
                                  d: Self.double(&rng), tx: Self.double(&rng), ty: Self.double(&rng))
            }, same: { Self.sameBits([$0.a, $0.b, $0.c, $0.d, $0.tx, $0.ty], [$1.a, $1.b, $1.c, $1.d, $1.tx, $1.ty]) })
            #endif
        }
    }

    private enum Level: String, CaseIterable, Sendable { case low, middle, high, 极高 = "极\u{0}高" }
    private enum Rank: Int, CaseIterable, Sendable { case bottom = -9_223_372_036_854_775_807, zero = 0, top = 9_223_372_036_854_775_807 }

    /// The opt-in converters (registered on the test's context only): Codable as JSON text,
    /// RawRepresentable as the raw value's storage.
    @Test func optInConvertersRoundTrip() async throws {
        try await withAsyncDatabase { t in
            try Self.makeValueTable(t)
            t.context.register(converter: CodableConverter<[String]>())
            t.context.register(converter: RawValueConverter<Level>())
            t.context.register(converter: RawValueConverter<Rank>())
            let ids = IdSource()
            await Self.roundTrip(CodableConverter<[String]>(), t, ids, Self.orNil { rng in
                (0..<Int.random(in: 0...5, using: &rng)).map { _ in Self.string(&rng) }
            }, same: { $0.count == $1.count && zip($0, $1).allSatisfy { $0.unicodeScalars.elementsEqual($1.unicodeScalars) } },
               registry: t.context.converters)
            await Self.roundTrip(RawValueConverter<Level>(), t, ids, Self.orNil { rng in Level.allCases.randomElement(using: &rng)! },
                                 encodesAs: { .text($0.rawValue) }, registry: t.context.converters)
            await Self.roundTrip(RawValueConverter<Rank>(), t, ids, Self.orNil { rng in Rank.allCases.randomElement(using: &rng)! },
                                 encodesAs: { .integer(Int64($0.rawValue)) }, registry: t.context.converters)
        }
    }

    /// Every converter the global registry starts with is covered above (keep the two in step:
    /// a new built-in converter fails this test until it gets a round-trip property).
    @Test func theTestsCoverEveryBuiltInConverter() {
        var covered: [Any.Type] = [Int.self, Int8.self, Int16.self, Int32.self, Int64.self, UInt.self, UInt8.self, UInt16.self,
                                   UInt32.self, UInt64.self, Bool.self, Double.self, Float.self, Decimal.self, String.self,
                                   Data.self, [UInt8].self, Date.self, URL.self, UUID.self, Color.self, CGPoint.self, CGSize.self,
                                   CGRect.self, EdgeInsets.self, NSRange.self]
        #if canImport(CoreGraphics)
        covered += [CGVector.self, CGAffineTransform.self]
        #endif
        let coveredIds = Set(covered.map(ObjectIdentifier.init))
        let builtIn = Set(BuiltInConverters.all.keys)
        #expect(coveredIds.isSubset(of: builtIn))
        // UIColor/NSColor (Apple platforms only) are not Sendable values to round-trip here.
        let missing = BuiltInConverters.all.filter { !coveredIds.contains($0.key) }.map(\.value.typeName)
            .filter { !$0.hasSuffix("UIColor") && !$0.hasSuffix("NSColor") }
        #expect(missing.isEmpty, "built-in converters without a round-trip property: \(missing)")
    }

    // MARK: Record <-> JSON

    /// A record of JSON-representable values (NULL, INTEGER, finite REAL, TEXT, Bool) with random
    /// column names survives toJSON → Record(json:) with the same columns, order and stored values
    /// (REALs bit for bit); the JSON text is stable. Built in memory and fetched from SQL.
    @Test func recordsRoundTripThroughJSON() async throws {
        try await withAsyncDatabase { t in
            await propertyCheck(count: 300, input: Generator { rng in Self.jsonColumns(&rng) }) { columns in
                await recordingErrors("columns \(columns)") {
                    let built = Record()
                    for (name, value) in columns { built[name] = value.argument }
                    try Self.expectJSONRoundTrip(built, columns)

                    // The same columns as SQL returns them (no NUL in names: SQL text stops at NUL).
                    let sqlColumns = columns.filter { !$0.name.unicodeScalars.contains("\u{0}") }
                    guard !sqlColumns.isEmpty else { return }
                    let select = "select " + sqlColumns.map { "? as " + Self.quoteIdentifier($0.name) }.joined(separator: ", ")
                    let fetched = try #require(try t.db.findFirst(select, arguments: StatementArguments(sqlColumns.map(\.value.argument))))
                    #expect(fetched.columnNames == sqlColumns.map(\.name))
                    try Self.expectJSONRoundTrip(fetched, sqlColumns)
                }
            }
        }
    }

    /// Dates and Data are written as ISO 8601 and base64 text; read back, the text gives the
    /// same Date (to the millisecond) and the same bytes.
    @Test func datesAndDataInJSONAreISO8601AndBase64() async throws {
        await propertyCheck(count: 300, input: Generator { rng in
            (Self.millisecondDate(&rng), Data(Self.bytes(&rng)), Self.string(&rng))
        }) { date, data, name in
            await recordingErrors("date \(date.timeIntervalSince1970), data \(data.base64EncodedString()), name \(name.debugDescription)") {
                let record = Record()
                record["d" + name] = date
                record["b" + name] = data
                let json = try record.toJSON()
                let back = try Record(json: json)
                #expect(back.columnNames == ["d" + name, "b" + name])
                let text = try #require(back["b" + name] as? String)
                #expect(Data(base64Encoded: text) == data)
                let backDate = try back.get("d" + name, as: Date.self)
                #expect(abs(backDate.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.0005)
            }
        }
    }

    /// A quoted SQL identifier, quotes doubled scalar by scalar (not with `SqlText.quote`: see
    /// HostileInputTests.quotingAQuoteFollowedByACombiningMark).
    static func quoteIdentifier(_ name: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars {
            scalars.append(scalar)
            if scalar == "\"" { scalars.append(scalar) }
        }
        return "\"" + String(scalars) + "\""
    }

    /// A value written to a record that has no database form (NaN, a type without a converter)
    /// is held as NULL until a statement stores it; toJSON throws its error rather than writing
    /// `null` (it used to write `null`), as it throws for an infinite REAL.
    @Test func toJSONThrowsForAWrittenValueItCannotRepresent() throws {
        struct NoConverter: Sendable {}
        for value in [Double.nan as DatabaseArgument, Float.nan, Decimal.nan, UInt64.max, NoConverter(), [1, 2]] {
            let record = Record()
            record.id = 1
            record.bad = value
            let error = try #require(throws: ConversionError.self, "\(String(describing: value))") { try record.toJSON() }
            #expect(error.column == "bad")
            // Written again with a representable value, it is fine.
            record.bad = 2.5
            #expect(try record.toJSON() == #"{"id":1,"bad":2.5}"#)
        }
        // NULL written on purpose is still null.
        let record = Record()
        record.none = nil
        #expect(try record.toJSON() == #"{"none":null}"#)
    }

    private static func expectJSONRoundTrip(_ record: Record, _ columns: [(name: String, value: JSONValue)]) throws {
        if columns.contains(where: { $0.value.isInfinite }) {
            let error = try #require(throws: DicRecordError.self) { try record.toJSON() }
            #expect(error.kind == .invalidJSON)
            return
        }
        let json = try record.toJSON()
        let back = try Record(json: json)
        #expect(back == record, "JSON \(json)")
        #expect(back.columnNames == columns.map(\.name))
        for (i, column) in columns.enumerated() {
            let stored = back.storedColumns[i].value
            #expect(stored.sameBits(as: column.value.stored), "column \(column.name.debugDescription): \(stored) from \(json)")
        }
        #expect(try back.toJSON() == json)
    }

    // MARK: Pagination

    /// OFFSET pagination over random rows, page sizes and page numbers (past the end too) agrees
    /// with slicing the same rows in memory: plain, with a WHERE argument and with an ORDER BY.
    @Test func paginateAgreesWithAnInMemoryReference() async throws {
        try await withAsyncDatabase { t in
            try await t.db.update("create table item(id integer primary key, grp integer, score integer, name text)")
            try await t.db.update("create index item_grp on item(grp, score)")
            await propertyCheck(count: 60, input: Generator { rng in PageScenario(&rng) }) { scenario in
                await recordingErrors("\(scenario)") {
                    try scenario.load(into: t.db)
                    let all = scenario.rows
                    let byScore = all.filter { $0.grp == scenario.group }.sorted { ($0.score, -$0.id) > ($1.score, -$1.id) }
                    let queries: [(select: String, rest: String, args: [DatabaseArgument], expected: [Int])] = [
                        ("select *", "from item order by id", [], all.map(\.id)),
                        ("select id, name", "from item where grp = ? order by score desc, id", [scenario.group], byScore.map(\.id)),
                        ("select id", "from item where grp = ? and name like ?", [scenario.group, "%"],
                         all.filter { $0.grp == scenario.group }.map(\.id)),
                    ]
                    for (index, query) in queries.enumerated() {
                        let total = query.expected.count
                        let totalPage = (total + scenario.pageSize - 1) / scenario.pageSize
                        for pageNumber in scenario.pageNumbers(totalPage: totalPage) {
                            let page = try t.db.paginate(pageNumber, scenario.pageSize, query.select, query.rest, arguments: StatementArguments(query.args))
                            let start = (pageNumber - 1) * scenario.pageSize
                            let expected = start < total ? Array(query.expected[start..<min(start + scenario.pageSize, total)]) : []
                            var ids = page.list.map { $0.id as Int? }
                            if index == 2 { ids.sort { ($0 ?? 0) < ($1 ?? 0) } }   // no ORDER BY: compare as sets
                            let context = "query \(index), page \(pageNumber)"
                            if index == 2 {
                                // Without ORDER BY only the page sizes are defined; the union is checked below.
                                #expect(ids.count == expected.count, "\(context)")
                            } else {
                                #expect(ids == expected.map { Optional($0) }, "\(context)")
                            }
                            #expect(page.totalRow == total, "\(context)")
                            #expect(page.totalPage == totalPage, "\(context)")
                            #expect(page.pageNumber == pageNumber && page.pageSize == scenario.pageSize, "\(context)")
                            #expect(page.isFirstPage == (pageNumber == 1), "\(context)")
                            #expect(page.isLastPage == (pageNumber >= totalPage), "\(context)")
                        }
                        if index == 2, totalPage > 0, totalPage <= 40 {
                            var union: [Int] = []
                            for pageNumber in 1...totalPage {
                                union += try t.db.paginate(pageNumber, scenario.pageSize, query.select, query.rest, arguments: StatementArguments(query.args))
                                    .list.compactMap { $0.id as Int? }
                            }
                            #expect(union.sorted() == query.expected.sorted())
                        }
                    }
                }
            }
        }
    }

    /// Keyset pagination: walking `paginate(after:)` from nil visits exactly the matching rows in
    /// key order, in full pages but the last; a random start key gives the rows after it.
    @Test func keysetPaginateAgreesWithAnInMemoryReference() async throws {
        try await withAsyncDatabase { t in
            try await t.db.update("create table item(id integer primary key, grp integer, score integer, name text)")
            await propertyCheck(count: 60, input: Generator { rng in PageScenario(&rng) }) { scenario in
                await recordingErrors("\(scenario)") {
                    try scenario.load(into: t.db)
                    let matching = scenario.rows.filter { $0.grp == scenario.group }.map(\.id)
                    for descending in [false, true] {
                        let expected = descending ? Array(matching.reversed()) : matching
                        var seen: [Int] = []
                        var after: DatabaseValue? = nil
                        var pages = 0
                        while true {
                            let page = try t.db.paginate(after: after, scenario.pageSize, "select id, score", "from item where grp = ? order by score",
                                                         scenario.group, descending: descending)
                            pages += 1
                            seen += page.list.compactMap { $0.id as Int? }
                            #expect(page.list.count <= scenario.pageSize)
                            guard let next = page.nextKey else { break }
                            #expect(page.list.count == scenario.pageSize, "a page before the last is full")
                            #expect(next == .integer(Int64(seen.last ?? -1)))
                            after = next
                            if pages > 400 { Issue.record("keyset walk does not end"); break }
                        }
                        #expect(seen == expected, "descending: \(descending)")
                        #expect(pages == max(1, (expected.count + scenario.pageSize - 1) / scenario.pageSize),
                                "pages: \(pages) for \(expected.count) rows of \(scenario.pageSize)")

                        // From a random key (present or not).
                        let start = scenario.startKey
                        let page = try t.db.paginate(after: start, scenario.pageSize, "select *", "from item where grp = ?",
                                                     scenario.group, descending: descending)
                        let rest = expected.filter { descending ? $0 < start : $0 > start }
                        #expect(page.list.compactMap { $0.id as Int? } == Array(rest.prefix(scenario.pageSize)), "after \(start)")
                        #expect(page.isLastPage == (rest.count <= scenario.pageSize))
                    }
                }
            }
        }
    }
}

// MARK: - Round-trip machinery

extension PropertyTests {
    static func makeValueTable(_ t: TestDatabase) throws {
        try t.db.update("create table v(id integer primary key, i INTEGER, r REAL, s TEXT, b BLOB, x)")
        // One fsync per autocommit INSERT would dominate the run; durability is not under test here.
        try t.db.update("pragma synchronous = off")
    }

    /// Checks one converter on 1,000 random values (about 5% nil):
    /// - directly: `decode(encode(v))` is `v`, the encoded storage class is the declared one, and
    ///   the registry encodes and decodes the same way;
    /// - through SQL: an INSERT with `v` as argument into the column of the converter's storage
    ///   type and into a column without affinity, read back with a typed Record read, gives `v`
    ///   (after `inRealColumn` for the REAL column), stored as the encoded storage class;
    /// - values `refusedOnEncode` throw on encode, and the INSERT throws and inserts nothing;
    /// - nil is NULL both ways.
    static func roundTrip<C: TypeConverter>(
        _ converter: C, _ t: TestDatabase, _ ids: IdSource,
        _ generate: Generator<C.Value?, Shrink.None<C.Value?>>,
        same: (C.Value, C.Value) -> Bool,
        refusedOnEncode: (C.Value) -> Bool = { _ in false },
        inRealColumn: (C.Value) -> C.Value = { $0 },
        encodesAs: ((C.Value) -> DatabaseValue)? = nil,
        registry: Converters = .shared,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async where C.Value: Sendable {
        let column = switch converter.storageType {
        case .integer: "i"
        case .real: "r"
        case .text: "s"
        case .blob: "b"
        }
        let typeName = String(reflecting: C.Value.self)
        #expect(registry.storageType(for: C.Value.self) == converter.storageType, "\(typeName)", sourceLocation: sourceLocation)
        let insert = "insert into v(id, \(column), x) values (?, ?, ?)"
        let select = "select \(column) as v, x, typeof(\(column)) as tv, typeof(x) as tx from v where id = ?"
        let firstId = ids.peek() + 1
        let accepted = IdSource()
        await propertyCheck(count: 1000, input: generate, perform: { value in
            let id = ids.next()
            await recordingErrors("\(typeName) \(String(reflecting: value))", sourceLocation: sourceLocation) {
                guard let value else {
                    #expect(try registry.encode(C.Value?.none) == .null, sourceLocation: sourceLocation)
                    #expect(try t.db.update(insert, id, C.Value?.none, C.Value?.none) == 1, sourceLocation: sourceLocation)
                    _ = accepted.next()
                    let row = try #require(try t.db.findFirst(select, id), sourceLocation: sourceLocation)
                    #expect(row.tv as String? == "null" && row.tx as String? == "null", sourceLocation: sourceLocation)
                    #expect(try row.get("v", as: C.Value?.self) == nil, sourceLocation: sourceLocation)
                    let typed: C.Value? = row.v
                    #expect(typed == nil, sourceLocation: sourceLocation)
                    #expect(throws: ConversionError.self, sourceLocation: sourceLocation) { try row.get("v", as: C.Value.self) }
                    return
                }
                if refusedOnEncode(value) {
                    #expect(throws: ConversionError.self, sourceLocation: sourceLocation) { try converter.encode(value) }
                    let error = try #require(throws: DicRecordError.self, sourceLocation: sourceLocation) {
                        try t.db.update(insert, id, value, value)
                    }
                    #expect(error.kind == .unsupportedArgument, sourceLocation: sourceLocation)
                    #expect(try t.db.queryInt("select count(*) from v where id = ?", id) == 0, sourceLocation: sourceLocation)
                    return
                }
                // Directly.
                let encoded = try converter.encode(value)
                #expect(encoded.storageName == converter.storageType.rawValue, sourceLocation: sourceLocation)
                if let encodesAs {
                    #expect(encoded.sameBits(as: encodesAs(value)), "encoded as \(encoded)", sourceLocation: sourceLocation)
                }
                #expect(same(try converter.decode(encoded), value), "direct decode of \(encoded)", sourceLocation: sourceLocation)
                #expect(try registry.encode(value).sameBits(as: encoded), "registry encode", sourceLocation: sourceLocation)
                #expect(same(try registry.decode(encoded, as: C.Value.self), value), "registry decode", sourceLocation: sourceLocation)

                // Through SQL.
                #expect(try t.db.update(insert, id, value, value) == 1, sourceLocation: sourceLocation)
                _ = accepted.next()
                let row = try #require(try t.db.findFirst(select, id), sourceLocation: sourceLocation)
                let storage = encoded.storageName.lowercased()
                #expect(row.tv as String? == storage && row.tx as String? == storage,
                        "typeof: \(String(describing: row.tv)), \(String(describing: row.tx))", sourceLocation: sourceLocation)
                let expected = column == "r" ? inRealColumn(value) : value
                let typed = try row.get("v", as: C.Value.self)
                #expect(same(typed, expected), "typed read: \(String(reflecting: typed))", sourceLocation: sourceLocation)
                let again: C.Value? = row.v                                    // the kept value, or a cheap re-read
                #expect(again.map { same($0, expected) } == true, sourceLocation: sourceLocation)
                let noAffinity: C.Value? = row.x
                #expect(noAffinity.map { same($0, value) } == true,
                        "read from the column without affinity: \(String(reflecting: noAffinity))", sourceLocation: sourceLocation)
            }
        }, sourceLocation: sourceLocation)
        // The property really ran 1,000 times, and every accepted value left its row.
        #expect(ids.peek() - firstId + 1 == 1000, sourceLocation: sourceLocation)
        let stored = try? await t.db.queryInt("select count(*) from v where id >= ?", firstId)
        #expect(stored == accepted.peek(), sourceLocation: sourceLocation)
    }

    static func roundTrip<C: TypeConverter>(
        _ converter: C, _ t: TestDatabase, _ ids: IdSource,
        _ generate: Generator<C.Value?, Shrink.None<C.Value?>>,
        refusedOnEncode: (C.Value) -> Bool = { _ in false },
        encodesAs: ((C.Value) -> DatabaseValue)? = nil,
        registry: Converters = .shared,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async where C.Value: Sendable & Equatable {
        await roundTrip(converter, t, ids, generate, same: { $0 == $1 }, refusedOnEncode: refusedOnEncode,
                        encodesAs: encodesAs, registry: registry, sourceLocation: sourceLocation)
    }

    static func sameBits(_ a: [CGFloat], _ b: [CGFloat]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.bitPattern == $1.bitPattern }
    }
}

/// Row ids for one test's value table (the property bodies run one after another).
final class IdSource: @unchecked Sendable {
    private let lock = NSLock()
    private var last = 0
    func next() -> Int { lock.lock(); defer { lock.unlock() }; last += 1; return last }
    func peek() -> Int { lock.lock(); defer { lock.unlock() }; return last }
}

extension DatabaseValue {
    /// Equality with REALs compared bit for bit (so -0.0 differs from 0.0).
    func sameBits(as other: DatabaseValue) -> Bool {
        if case .real(let a) = self, case .real(let b) = other { return a.bitPattern == b.bitPattern }
        return self == other
    }
}

/// Runs `body`, recording a thrown error as an issue (propertyCheck would drop it).
func recordingErrors(_ input: @autoclosure () -> String, sourceLocation: SourceLocation = #_sourceLocation,
                     _ body: () async throws -> Void) async {
    do {
        try await body()
    } catch {
        Issue.record(error, "input: \(input())", sourceLocation: sourceLocation)
    }
}

/// `withDatabase` for async bodies (`propertyCheck` is async).
func withAsyncDatabase(_ body: (TestDatabase) async throws -> Void) async throws {
    let t = try TestDatabase()
    try await DbContext.withIsolatedRegistry {
        try t.context.start()
        defer {
            t.context.stop()
            try? FileManager.default.removeItem(at: t.folder)
        }
        try await body(t)
    }
}

// MARK: - Generators

extension PropertyTests {
    typealias RNG = any SeededRandomNumberGenerator

    /// A generator of `T?`: nil about one time in twenty.
    static func orNil<T>(_ make: @Sendable @escaping (inout RNG) -> T) -> Generator<T?, Shrink.None<T?>> {
        Generator { rng in Int.random(in: 0..<20, using: &rng) == 0 ? nil : make(&rng) }
    }

    static func integer<I: FixedWidthInteger & Sendable>(_ type: I.Type) -> Generator<I?, Shrink.None<I?>> {
        orNil { rng in integer(I.self, &rng) }
    }

    /// Full-range values, the edges, and small numbers.
    static func integer<I: FixedWidthInteger>(_ type: I.Type, _ rng: inout RNG) -> I {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return [I.min, I.max, 0, 1, I.min + 1, I.max - 1].randomElement(using: &rng)!
        case 1: return I(truncatingIfNeeded: Int.random(in: -300...300, using: &rng))
        case 2 where I.bitWidth == 64: return I(truncatingIfNeeded: Int64.max) &+ I(truncatingIfNeeded: Int.random(in: -2...2, using: &rng))
        default: return I.random(in: I.min...I.max, using: &rng)
        }
    }

    /// Any bit pattern now and then, the special values, and ordinary numbers.
    static func double(_ rng: inout RNG) -> Double {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return [0.0, -0.0, .infinity, -.infinity, .nan, .signalingNaN, .leastNonzeroMagnitude, -.leastNormalMagnitude,
                        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1, -1, .pi, 0.1].randomElement(using: &rng)!
        case 1, 2, 3: return Double(bitPattern: UInt64.random(in: 0...UInt64.max, using: &rng))
        case 4: return Double(Int64.random(in: -1_000_000...1_000_000, using: &rng))      // whole: SQLite stores them as integers
        default: return Double.random(in: -1e6...1e6, using: &rng) * pow(10, Double(Int.random(in: -20...20, using: &rng)))
        }
    }

    static func float(_ rng: inout RNG) -> Float {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: return [Float(0), -0.0, .infinity, -.infinity, .nan, .leastNonzeroMagnitude, .leastNormalMagnitude,
                        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 0.1, -123.456].randomElement(using: &rng)!
        case 1, 2, 3: return Float(bitPattern: UInt32.random(in: 0...UInt32.max, using: &rng))
        case 4: return Float(Int32.random(in: -100_000...100_000, using: &rng))
        default: return Float.random(in: -1e4...1e4, using: &rng) * Float(pow(10, Double(Int.random(in: -10...10, using: &rng))))
        }
    }

    static func decimal(_ rng: inout RNG) -> Decimal {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0: return [Decimal(0), .nan, Decimal(string: "0.1")!, Decimal(Int64.min), Decimal(UInt64.max),
                        Decimal(string: "-12345678901234567890123456789012345678")!].randomElement(using: &rng)!
        case 1: return Decimal(Int.random(in: -1000...1000, using: &rng))
        default:
            let significand = Decimal(UInt64.random(in: 0...UInt64.max, using: &rng) >> UInt64.random(in: 0...63, using: &rng))
            let sign: FloatingPointSign = Bool.random(using: &rng) ? .minus : .plus
            return Decimal(sign: sign, exponent: Int.random(in: -40...40, using: &rng), significand: significand)
        }
    }

    static let alphabets: [[Unicode.Scalar]] = [
        Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.,;:'\"`\\/%?&=#()[]{}*+!@$^|<>~".unicodeScalars),
        [0, 1, 7, 8, 9, 10, 13, 27, 31, 127].map { Unicode.Scalar(UInt8($0)) },                // NUL and other controls
        Array("éèüßñçÉÜØåæœ\u{301}\u{308}\u{200D}\u{FEFF}\u{2028}\u{FFFD}".unicodeScalars),    // Latin, combining, ZWJ, BOM
        Array("张三李四王五汉字日本語한국어العربيةעבריתไทย".unicodeScalars),
        Array("😀🎉👨👩👧👦🏳🌈🇨🇳🇺🇸𝄞🧪🦄".unicodeScalars),                                            // 4-byte UTF-8
    ]

    /// Random text: "" about one time in ten, else up to 40 scalars from mixed alphabets.
    static func string(_ rng: inout RNG) -> String {
        if Int.random(in: 0..<10, using: &rng) == 0 { return "" }
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 1...40, using: &rng) {
            if Int.random(in: 0..<8, using: &rng) == 0 {
                // Anywhere in Unicode, surrogates excepted.
                let value = UInt32.random(in: 1...0x10FFFF, using: &rng)
                scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            } else {
                let alphabet = alphabets.randomElement(using: &rng)!
                scalars.append(alphabet.randomElement(using: &rng)!)
            }
        }
        return String(scalars)
    }

    /// Random bytes: empty about one time in eight, sometimes a few KiB.
    static func bytes(_ rng: inout RNG) -> [UInt8] {
        let count = switch Int.random(in: 0..<8, using: &rng) {
        case 0: 0
        case 1: Int.random(in: 1000...5000, using: &rng)
        default: Int.random(in: 1...64, using: &rng)
        }
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Dates from 0001 to 9999, half of them whole milliseconds.
    static func date(_ rng: inout RNG) -> Date {
        let seconds = Double.random(in: -62_135_596_800...253_402_300_799, using: &rng)
        switch Int.random(in: 0..<4, using: &rng) {
        case 0: return Date(timeIntervalSince1970: (seconds * 1000).rounded() / 1000)
        case 1: return Date(timeIntervalSince1970: seconds.rounded())
        case 2: return Date(timeIntervalSince1970: Double.random(in: -1...1, using: &rng))
        default: return Date(timeIntervalSince1970: seconds)
        }
    }

    /// A Date of whole milliseconds between 1900 and 2200 (what ISO 8601 text keeps).
    static func millisecondDate(_ rng: inout RNG) -> Date {
        Date(timeIntervalSince1970: Double(Int64.random(in: -2_208_988_800_000...7_258_118_400_000, using: &rng)) / 1000)
    }

    static func url(_ rng: inout RNG) -> URL {
        func segment(_ rng: inout RNG) -> String {
            string(&rng).addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/;?#"))) ?? "x"
        }
        switch Int.random(in: 0..<4, using: &rng) {
        case 0:
            return URL(fileURLWithPath: "/" + (0..<Int.random(in: 1...4, using: &rng)).map { _ in
                String(string(&rng).unicodeScalars.filter { $0 != "/" && $0 != "\u{0}" })
            }.joined(separator: "/"))
        default:
            let scheme = ["http", "https", "ftp", "x-custom", "sqlite"].randomElement(using: &rng)!
            let host = ["example.com", "例子.测试", "127.0.0.1", "[::1]", "a-b.c", "localhost:8080"].randomElement(using: &rng)!
            let path = (0..<Int.random(in: 0...4, using: &rng)).map { _ in "/" + segment(&rng) }.joined()
            let query = Bool.random(using: &rng) ? "?q=" + segment(&rng) + "&n=1" : ""
            let fragment = Bool.random(using: &rng) ? "#" + segment(&rng) : ""
            let text = "\(scheme)://\(host)\(path)\(query)\(fragment)"
            return URL(string: text) ?? URL(string: "\(scheme)://example.com/fallback")!
        }
    }

    // MARK: JSON

    enum JSONValue: Sendable, CustomStringConvertible {
        case null, integer(Int64), int(Int), real(Double), text(String), bool(Bool)

        var argument: DatabaseArgument {
            switch self {
            case .null: nil
            case .integer(let v): v
            case .int(let v): v
            case .real(let v): v
            case .text(let v): v
            case .bool(let v): v
            }
        }

        /// What the record stores (Bool is INTEGER 0/1).
        var stored: DatabaseValue {
            switch self {
            case .null: .null
            case .integer(let v): .integer(v)
            case .int(let v): .integer(Int64(v))
            case .real(let v): .real(v)
            case .text(let v): .text(v)
            case .bool(let v): .integer(v ? 1 : 0)
            }
        }

        var isInfinite: Bool {
            if case .real(let v) = self { return v.isInfinite }
            return false
        }

        var description: String { "\(stored)" }
    }

    /// 0...10 columns with distinct (case-insensitively) random names and random values.
    static func jsonColumns(_ rng: inout RNG) -> [(name: String, value: JSONValue)] {
        var columns: [(name: String, value: JSONValue)] = []
        for _ in 0..<Int.random(in: 0...10, using: &rng) {
            let name = Int.random(in: 0..<4, using: &rng) == 0 ? "c\(columns.count)" : string(&rng)
            guard !columns.contains(where: { RowLayout.sameColumn($0.name, name) }) else { continue }
            let value: JSONValue
            switch Int.random(in: 0..<12, using: &rng) {
            case 0: value = .null
            case 1, 2: value = .integer(integer(Int64.self, &rng))
            case 3: value = .int(Int.random(in: -1000...1000, using: &rng))
            case 4, 5:
                var d = double(&rng)
                while d.isNaN { d = double(&rng) }
                value = .real(d)
            case 6: value = .bool(Bool.random(using: &rng))
            default: value = .text(string(&rng))
            }
            columns.append((name, value))
        }
        return columns
    }
}

// MARK: - Pagination scenarios

struct PageScenario: Sendable, CustomStringConvertible {
    struct Row: Sendable { var id: Int, grp: Int, score: Int, name: String }
    let rows: [Row]
    let pageSize: Int
    let group: Int
    let startKey: Int
    let extraPages: [Int]

    init(_ rng: inout PropertyTests.RNG) {
        let count = Int.random(in: 0...300, using: &rng)
        var ids = Set<Int>()
        while ids.count < count { ids.insert(Int.random(in: 1...2_000, using: &rng)) }   // gaps in the keys
        let groups = Int.random(in: 1...4, using: &rng)
        rows = ids.sorted().map { id in
            Row(id: id, grp: Int.random(in: 0..<groups, using: &rng), score: Int.random(in: 0...20, using: &rng),
                name: "n\(Int.random(in: 0...99, using: &rng))")
        }
        pageSize = Int.random(in: 1...50, using: &rng)
        group = Int.random(in: 0..<groups, using: &rng)
        startKey = Int.random(in: 0...2_001, using: &rng)
        extraPages = (0..<3).map { _ in Int.random(in: 1...400, using: &rng) }
    }

    /// The first pages, the last ones, two past the last and a few random ones (every page when there are few).
    func pageNumbers(totalPage: Int) -> [Int] {
        if totalPage <= 12 { return Array(1...totalPage + 2) + extraPages }
        return [1, 2, 3, totalPage / 2, totalPage - 1, totalPage, totalPage + 1, totalPage + 2] + extraPages
    }

    func load(into db: Db) throws {
        try db.update("delete from item")
        if !rows.isEmpty {
            try db.batch("insert into item(id, grp, score, name) values (?, ?, ?, ?)", rows.map { [$0.id, $0.grp, $0.score, $0.name] })
        }
    }

    var description: String {
        "\(rows.count) rows, pageSize \(pageSize), group \(group), startKey \(startKey), extra pages \(extraPages)"
    }
}
