import Foundation
import Synchronization
import Testing
@testable import DicRecord

/// BLOB bytes that note when they are freed (a small `Data` copies its bytes inline, so these
/// are 256 bytes, kept by reference): for tests that values are released exactly once.
final class FreedBytes: Sendable {
    private let log = Mutex<[Int]>([])

    /// The numbers of the bytes freed so far, in order.
    func freed() -> [Int] { log.withLock { $0 }.sorted() }

    /// 256 bytes of value `n`, noted as `n` when freed.
    func bytes(_ n: Int) -> Data {
        let bytes = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 8)
        bytes.initializeMemory(as: UInt8.self, repeating: UInt8(truncatingIfNeeded: n), count: 256)
        return Data(bytesNoCopy: bytes, count: 256, deallocator: .custom { [self] pointer, _ in
            pointer.deallocate()
            self.log.withLock { $0.append(n) }
        })
    }
}

/// `find` stores its rows in shared blocks of values (`RowValues`), binds common argument types
/// in place (`InlineArgument`) and reads URLs without the registry: each of these must be
/// invisible to the user.
@Suite struct FetchStorageTests {
    private func makeTable(_ db: Db, rows: Int) throws {
        try db.update("create table t (id integer primary key, n integer, s text)")
        try db.batch("insert into t (id, n, s) values (?, ?, ?)", (1...rows).map { [$0, $0 * 3, "row \($0)"] })
    }

    /// `RowStorage.make` downcasts what `ManagedBuffer.create` returns: an instance of the class
    /// it was called on. Both forms, and a grown array, must be of `RowStorage` itself.
    @Test func theStorageIsItsOwnClass() throws {
        var values = RowValues([.integer(1), .text("a")])
        #expect(ObjectIdentifier(type(of: values.storage as AnyObject)) == ObjectIdentifier(RowStorage.self))
        for i in 0..<20 { values.append(.integer(Int64(i))) }
        #expect(ObjectIdentifier(type(of: values.storage as AnyObject)) == ObjectIdentifier(RowStorage.self))
        #expect(values.count == 22 && values[1] == .text("a") && values[21] == .integer(19))
        let block = RowStorage.block(tags: [.integer], payloads: [7], objects: [])
        #expect(ObjectIdentifier(type(of: block as AnyObject)) == ObjectIdentifier(RowStorage.self))
        #expect(block.value(at: 0) == .integer(7))
    }

    /// `RowStorage` reaches its header and values by offsets from the object (not through
    /// `ManagedBuffer`'s checked accessors): they must be where `ManagedBuffer` puts them.
    @Test func theHeaderAndValuesLieWhereTheBufferPutsThem() throws {
        for storage in [RowValues([.integer(1), .text("a")]).storage, RowValues(ContiguousArray()).storage,
                        RowStorage.block(tags: [.null], payloads: [0], objects: [])] {
            storage.withUnsafeMutablePointers { header, elements in
                #expect(UnsafeMutableRawPointer(header) == UnsafeMutableRawPointer(storage.headerPointer))
                #expect(UnsafeMutableRawPointer(elements) == UnsafeMutableRawPointer(storage.elements))
            }
            #expect(storage.fields.isArray == storage.withUnsafeMutablePointerToHeader { $0.pointee.isArray })
        }
    }

    /// A written record's values lie in its storage object: growing, copying on write and
    /// overwriting keep every value, and each view sees only its own writes.
    @Test func arrayStorageGrowsCopiesAndOverwritesExactly() throws {
        var a = RowValues([.integer(1)])
        for i in 2...40 { a.append(i % 3 == 0 ? .text("t\(i)") : .integer(Int64(i))) }
        var b = a                                    // shared until written
        b[0] = .real(0.5)
        #expect(a[0] == .integer(1) && b[0] == .real(0.5))
        #expect(Array(a.dropFirst()) == Array(b.dropFirst()))
        #expect(a.array.count == 40 && a.array[2] == .text("t3"))
        b.overwrite(count: 40) { .integer(Int64($0)) }
        #expect(b.array == (0..<40).map { DatabaseValue.integer(Int64($0)) })
        #expect(a[39] == .integer(40))
        let fewer = a.removing([0, 39])
        #expect(fewer.count == 38 && fewer[0] == .integer(2))
        // A record written many times stays whole.
        let record = Record()
        for i in 0..<100 { record.set("c\(i)", "v\(i)") }
        for i in stride(from: 0, to: 100, by: 7) { record.set("c\(i)", i) }
        #expect(record["c7"] as? Int == 7 && record["c8"] as? String == "v8" && record.columnCount == 100)
    }

    /// Storage destroys its values one by one, releasing only TEXT and BLOB values (`deinit`):
    /// every BLOB's bytes are freed exactly once, when the last storage holding them goes, and not
    /// before, through growth, copies on write, overwrites, removals and records built and dropped.
    @Test func valuesHoldingBytesAreFreedOnceWhenTheLastStorageGoes() throws {
        let log = FreedBytes()
        let freed = log.freed, tracked = log.bytes
        do {
            var a = RowValues([.integer(1), .blob(tracked(1)), .text("t")])
            for i in 2...30 { a.append(i % 5 == 0 ? .blob(tracked(i)) : (i % 2 == 0 ? .text("t\(i)") : .real(Double(i)))) }
            var b = a                                    // shared until written
            b[1] = .null                                 // b copies; blob 1 lives on in a
            #expect(freed() == [])
            let fewer = a.removing([1])
            a.overwrite(count: 3) { .integer(Int64($0)) }   // a lets blob 1 go; b and fewer keep the rest
            #expect(freed() == [1])
            let shared = tracked(100)
            b.overwrite(count: 2) { _ in .blob(shared) }
            #expect(freed() == [1])        // `fewer` still holds blobs 5, 10, ..., 30
            #expect(fewer.array.filter { if case .blob = $0 { true } else { false } }.count == 6)
            let record = try Record(["a": 1, "b": tracked(200), "c": "x"])
            record.set("b", tracked(201))
            #expect(freed() == [1, 200])
            #expect(record.b as Data? == Data(repeating: 201, count: 256))
            #expect(b[0] == .blob(Data(repeating: 100, count: 256)))
        }
        // Each freed once: 1, 5, 10, ..., 30, the overwrite's (one value, copied into two slots), 200, 201.
        #expect(freed() == [1, 5, 10, 15, 20, 25, 30, 100, 200, 201])
    }

    /// A throw part-way through filling values leaves the storage holding exactly the values
    /// written so far, and frees each of them once.
    @Test func aThrowPartWayThroughFillingValuesFreesWhatWasWritten() {
        struct Stop: Error {}
        let log = FreedBytes()
        #expect(throws: Stop.self) {
            _ = try RowValues(count: 6) { i in
                if i == 4 { throw Stop() }
                return .blob(log.bytes(i))
            }
        }
        #expect(log.freed() == [0, 1, 2, 3])
    }

    /// The stored bytes of TEXT that is not UTF-8 stay with their column when a record's values
    /// grow, are copied on write, and lose a column before them.
    @Test func bytesOfTextThatIsNotUTF8SurviveGrowthAndCopies() throws {
        try withDatabase { t in
            // Two rows of one block: the first write to a record copies its window out of it.
            let rows = try t.db.find("select 1 as a, cast(x'ff61' as text) as t, 2 as b union all select 5, cast(x'62fe' as text), 6")
            #expect(rows.count == 2)
            let record = rows[0], other = rows[1]
            #expect(try record.get("t", as: Data.self) == Data([0xff, 0x61]))
            for i in 0..<40 { record.set("c\(i)", i) }              // copied, then grown past its room, several times
            #expect(try record.get("t", as: Data.self) == Data([0xff, 0x61]))
            record.remove("a")                                     // the column moves to position 0
            #expect(try record.get("t", as: Data.self) == Data([0xff, 0x61]))
            #expect(record.c39 as Int? == 39 && record.b as Int? == 2 && !record.hasColumn("a"))
            #expect(try other.get("t", as: Data.self) == Data([0x62, 0xfe]))
            #expect(other.columnCount == 3)
        }
    }

    @Test func aLargeResultSpansManyBlocksInOrder() throws {
        try withDatabase { t in
            try makeTable(t.db, rows: 10_000)
            let records = try t.db.find("select * from t order by id")
            #expect(records.count == 10_000)
            for (i, r) in records.enumerated() {
                let id = i + 1
                guard r.id as Int? == id, r.n as Int? == id * 3, r.s as String? == "row \(id)", r.columnCount == 3 else {
                    Issue.record("row \(id) reads \(r.toDictionary())")
                    return
                }
            }
        }
    }

    @Test func blocksKeepEveryStorageClassExactly() throws {
        try withDatabase { t in
            try t.db.update("create table m (i, r, s, b, n)")
            var random = SplitMix64(seed: 7)
            let rows: [[DatabaseArgument]] = (0..<3_000).map { k in
                let pick = Int(random.next() % 5)
                return [
                    pick == 0 ? nil : Int64(bitPattern: random.next()),
                    pick == 1 ? nil : [-0.0, 1.5, .infinity, -.infinity, Double.leastNonzeroMagnitude, 1e300][k % 6],
                    pick == 2 ? "" : String(repeating: "é\u{0}x", count: k % 7),
                    pick == 3 ? Data() : Data((0..<(k % 40)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ k) }),
                    nil,
                ]
            }
            try t.db.batch("insert into m values (?, ?, ?, ?, ?)", rows)
            let found = try t.db.find("select * from m order by rowid")
            var streamed: [[DatabaseValue]] = []
            try t.db.each("select * from m order by rowid") { r in
                streamed.append(Array(r.values))
                return true
            }
            #expect(found.count == 3_000)
            #expect(found.map { Array($0.values) } == streamed)
            // Stored values as they went in, storage class included.
            let first = try #require(found.first)
            #expect(first.values.map(\.storageName) == streamed[0].map(\.storageName))
            #expect(found.contains { $0.values[1] == .real(-0.0) && ($0.r as Double?)?.sign == .minus })
            #expect(found.allSatisfy { $0.values[4] == .null })
        }
    }

    /// A block keeps its payloads in 4 bytes each when every one sign-extends back from 32 bits,
    /// and in 8 otherwise; either way each value reads back bit for bit.
    @Test func aBlockKeepsNarrowPayloadsOnlyWhenEveryOneComesBackTheSame() throws {
        let fitting: [DatabaseValue] = [.integer(0), .integer(-1), .integer(Int64(Int32.max)), .integer(Int64(Int32.min)),
                                        .null, .real(0.0), .real(Double(bitPattern: 1)), .text("a"), .blob(Data([1, 2]))]
        let breaking: [DatabaseValue] = [.integer(Int64(Int32.max) + 1), .integer(Int64(Int32.min) - 1), .integer(.max),
                                         .integer(.min), .real(-0.0), .real(1.5), .real(Double(bitPattern: 0x8000_0000))]
        func block(_ values: [DatabaseValue]) -> RowStorage {
            var tags = ContiguousArray<RowTag>(), payloads = ContiguousArray<UInt64>(), objects = ContiguousArray<DatabaseValue>()
            for value in values {
                switch value {
                case .null: tags.append(.null); payloads.append(0)
                case .integer(let v): tags.append(.integer); payloads.append(UInt64(bitPattern: v))
                case .real(let v): tags.append(.real); payloads.append(v.bitPattern)
                case .text, .blob: tags.append(.object); payloads.append(UInt64(objects.count)); objects.append(value)
                }
            }
            return RowStorage.block(tags: tags, payloads: payloads, objects: objects)
        }
        func sameBits(_ a: DatabaseValue, _ b: DatabaseValue) -> Bool {
            if case .real(let x) = a, case .real(let y) = b { return x.bitPattern == y.bitPattern }
            return a == b
        }
        let narrow = block(fitting)
        #expect(narrow.fields.payloads.isNarrow)
        #expect(fitting.indices.allSatisfy { sameBits(narrow.value(at: $0), fitting[$0]) })
        for value in breaking {
            // One value that does not fit makes the whole block wide, wherever it lies.
            for at in [0, fitting.count / 2, fitting.count] {
                var values = fitting
                values.insert(value, at: at)
                let wide = block(values)
                #expect(!wide.fields.payloads.isNarrow, "\(value) at \(at)")
                #expect(values.indices.allSatisfy { sameBits(wide.value(at: $0), values[$0]) }, "\(value) at \(at)")
            }
        }
        // Past the first 64 payloads too (the fit is checked 64 at a time).
        let long = block(Array(repeating: .integer(7), count: 200) + [.integer(.max)])
        #expect(!long.fields.payloads.isNarrow && long.value(at: 200) == .integer(.max) && long.value(at: 199) == .integer(7))
    }

    /// `find` and a dao read the same values from narrow and wide blocks of one result.
    @Test func aResultReadsAlikeFromNarrowAndWideBlocks() throws {
        try withDatabase { t in
            t.context.register(SafetyItem.self)   // creates safety_item(id, name, qty)
            let quantities: [Int] = (1...5_000).map { $0 % 7 == 0 ? -$0 : $0 } + [Int(Int32.max) + 1, .min, Int(Int32.min), .max]
            try t.db.batch("insert into safety_item (name, qty) values (?, ?)", quantities.enumerated().map { ["n\($0.offset)", $0.element] })
            let records = try t.db.find("select * from safety_item order by id")
            #expect(records.map { $0.qty as Int? } == quantities)
            #expect(records.map { $0[2] as Int64? } == quantities.map(Int64.init))
            // The first blocks fit in 32 bits, the last does not.
            #expect(try #require(records.first).values.storage.fields.payloads.isNarrow)
            #expect(try !#require(records.last).values.storage.fields.payloads.isNarrow)
            let items = try SafetyItem.dao.find("select * from safety_item order by id")
            // Models of a TEXT column read their fetched row in place: from both kinds of block.
            #expect(try #require(items.first?.fetchedRow).storage.fields.payloads.isNarrow)
            #expect(try !#require(items.last?.fetchedRow).storage.fields.payloads.isNarrow)
            #expect(items.map(\.qty) == quantities)
            #expect(items.map(\.name) == quantities.indices.map { "n\($0)" })
        }
    }
    /// Two widths of payload cost no room in the header every storage has (a written record's
    /// values too): one reference, the width in its spare bits.
    @Test func theStorageHeaderStaysSmall() {
        #expect(MemoryLayout<BlockPayloads>.size == MemoryLayout<Int>.size)
        #expect(MemoryLayout<RowStorageHeader>.size == 7 * MemoryLayout<Int>.size)
    }

    /// Another engine's rows (PostgreSQL's, appended value by value) make the same blocks.
    @Test func rowsAppendedByAnotherEngineKeepNarrowAndWideBlocksExactly() {
        var builder = RowBlockBuilder(columns: 3)
        var rows: [[DatabaseValue]] = (0..<100).map { [.integer(Int64($0) - 50), .text("t\($0)"), .null] }
        rows += [[.integer(Int64(Int32.max) + 1), .real(-0.0), .blob(Data([9]))]]
        for row in rows { builder.append(row) }
        let built = builder.finish()
        #expect(built.map(\.array) == rows)
        #expect(built.first?.storage.fields.payloads.isNarrow == true)
        #expect(built.last?.storage.fields.payloads.isNarrow == false)
        if case .real(let zero) = built.last?[1] { #expect(zero.sign == .minus) } else { Issue.record("no REAL") }
    }

    @Test func largeTextEndsABlockEarlySoAKeptRecordKeepsLittle() throws {
        try withDatabase { t in
            try t.db.update("create table big (id integer primary key, body text)")
            // 40 rows of 10 KB, then 100 small ones.
            let rows: [[DatabaseArgument]] = (1...140).map { [$0, String(repeating: "x", count: $0 <= 40 ? 10_000 : 3) + "\($0)"] }
            try t.db.batch("insert into big (id, body) values (?, ?)", rows)
            let records = try t.db.find("select * from big order by id")
            #expect(records.map { $0.id as Int? } == (1...140).map { Optional($0) })
            #expect(records.allSatisfy { r in (r.body as String?)?.hasSuffix("\((r.id as Int?)!)") == true })
            // A block holds at most 64 KiB of text plus the row that crosses it: 7 rows of 10 KB.
            #expect(records[0].baseValues.storage !== records[7].baseValues.storage)
            #expect(records[0].baseValues.storage === records[6].baseValues.storage)
            // Small rows share blocks again.
            #expect(records[120].baseValues.storage === records[121].baseValues.storage)
        }
    }

    @Test func aWriteToOneRecordLeavesItsNeighboursInTheBlockAlone() throws {
        try withDatabase { t in
            try makeTable(t.db, rows: 100)
            let records = try t.db.find("select * from t order by id")
            // Rows 9...24 share the second block.
            let middle = records[15]
            middle.n = -1
            middle["extra"] = "added"
            middle.remove("s")
            #expect(middle.n as Int? == -1)
            #expect(middle.columnNames == ["id", "n", "extra"])
            #expect(records[14].n as Int? == 45)
            #expect(records[16].n as Int? == 51)
            #expect(records[14].columnNames == ["id", "n", "s"])
            #expect(records[16].s as String? == "row 17")
            // The write reaches the database, and only it.
            middle.keep("id", "n")
            #expect(try t.db.update("t", middle) == true)
            #expect(try t.db.query("select n from t where id in (15, 16, 17) order by id", as: Int.self) == [45, -1, 51])
        }
    }

    @Test func aRecordKeptAfterTheOthersAreGoneStillReadsItsRow() throws {
        try withDatabase { t in
            try makeTable(t.db, rows: 3_000)
            var records: [Record]? = try t.db.find("select * from t order by id")
            let kept = try #require(records?[2_500])
            records = nil
            #expect(kept.id as Int? == 2_501)
            #expect(kept.s as String? == "row 2501")
            kept.n = 7
            #expect(kept.toDictionary()["n"] as? Int == 7)
        }
    }

    @Test func recordsOfOneBlockReadAndWrittenFromManyThreads() throws {
        try withDatabase { t in
            try makeTable(t.db, rows: 64)
            let records = try t.db.find("select * from t order by id")
            DispatchQueue.concurrentPerform(iterations: 8) { worker in
                for round in 0..<500 {
                    for (i, r) in records.enumerated() {
                        if i % 8 == worker { r.n = round * 1_000 + i }
                        _ = r.s as String?
                        _ = r.id as Int?
                    }
                }
            }
            for (i, r) in records.enumerated() {
                #expect(r.n as Int? == 499 * 1_000 + i)
                #expect(r.s as String? == "row \(i + 1)")
            }
        }
    }

    @Test func aThrowInTheMiddleOfABlockStopsTheFetch() throws {
        try withDatabase { t in
            try makeTable(t.db, rows: 2_000)
            struct Stop: Error {}
            var seen = 0
            try t.db.execute { connection in
                try connection.withStatement("select * from t order by id", .none) { statement -> Void in
                    let hasRow = try connection.step(statement, .none)
                    #expect(hasRow)
                    // Blocks hold 8, 16, 32, ... rows: row 1,000 is inside the block of 512.
                    #expect(throws: Stop.self) {
                        _ = try statement.rows(arguments: .none, connection: connection, check: {
                            seen += 1
                            if seen == 1_000 { throw Stop() }
                        }) { $0 }
                    }
                }
            }
            #expect(seen == 1_000)
            #expect(try t.db.find("select * from t").count == 2_000)   // the connection is fine
        }
    }

    @Test func eachKeepsAndReusesItsRecordCorrectlyWithSharedStorage() throws {
        try withDatabase { t in
            try makeTable(t.db, rows: 50)
            var kept: [Record] = []
            var sum = 0
            try t.db.each("select * from t order by id") { r in
                sum += r.n as Int? ?? 0
                if (r.id as Int?)! % 10 == 0 { kept.append(r) }
                return true
            }
            #expect(sum == (1...50).reduce(0) { $0 + $1 * 3 })
            #expect(kept.map { $0.id as Int? } == [10, 20, 30, 40, 50])
            #expect(kept.map { $0.s as String? } == ["row 10", "row 20", "row 30", "row 40", "row 50"])
        }
    }

    // MARK: Arguments bound in place

    @Test func argumentsAreReadInPlaceOnThisPlatform() {
        // If this fails, binding still works (through copies), but slower: the layout changed.
        #expect(InlineArgument.isReadable)
    }

    @Test func everyArgumentTypeIsStoredAsItsConverterStoresIt() throws {
        try withDatabase { t in
            try t.db.update("create table v (k integer primary key, x)")
            let date = Date(timeIntervalSince1970: 1_234.5)
            let rows: [[DatabaseArgument]] = [
                [1, Int.max], [2, Int.min], [3, Int64(-7)], [4, 2.5], [5, -0.0], [6, true], [7, false],
                [8, ""], [9, "a\u{0}b"], [10, "ünïcödé 🙂"], [11, nil], [12, date], [13, Data([0, 1, 2])],
                [14, Int32(9)], [15, URL(string: "https://example.com/a?b=c")], [16, Optional(5) as Int?],
                [17, Double.infinity],
            ]
            try t.db.batch("insert into v (k, x) values (?, ?)", rows)
            let stored = try t.db.find("select x, typeof(x) as type from v order by k").map { r -> String in
                let x: Any? = r["x"]
                return "\(r.type as String? ?? "?"):\(x.map { "\($0)" } ?? "nil")"
            }
            #expect(stored == [
                "integer:\(Int.max)", "integer:\(Int.min)", "integer:-7", "real:2.5", "real:-0.0", "integer:1", "integer:0",
                "text:", "text:a\u{0}b", "text:ünïcödé 🙂", "null:nil", "real:1234.5", "blob:3 bytes",
                "integer:9", "text:https://example.com/a?b=c", "integer:5", "real:inf",
            ])
        }
    }

    @Test func aNaNArgumentIsRefusedAndNamesItsItem() throws {
        try withDatabase { t in
            try t.db.update("create table v (x)")
            let error = try #require(throws: DicRecordError.self) {
                try t.db.batch("insert into v (x) values (?)", [[1.0], [Double.nan]])
            }
            #expect(error.kind == .unsupportedArgument)
            #expect("\(error)".contains("batch item 1"))
            #expect(try t.db.queryInt("select count(*) from v") == 0)
        }
    }

    @Test func aContextThatReplacesIntBindsThroughItsConverter() throws {
        try withDatabase { t in
            t.context.register(converter: TenfoldInt())
            try t.db.update("create table v (x)")
            try t.db.batch("insert into v (x) values (?)", [[4]])
            #expect(try t.db.query("select x from v", as: Int64.self) == [40])
        }
    }

    // MARK: URL reads

    @Test func aURLIsParsedOnceAndKept() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 'https://swift.org/a b' as bad, 'https://swift.org/x?y=1' as good, '' as empty, 5 as number"))
            let good: URL? = r.good
            #expect(good == URL(string: "https://swift.org/x?y=1"))
            #expect(r.good as? URL == good)          // untyped reads show the kept URL
            #expect((r[1] as URL?) == good)
            #expect(r.bad as URL? == URL(string: "https://swift.org/a b"))
            #expect(r.empty as URL? == nil)
            #expect(r.number as URL? == nil)
            #expect(throws: ConversionError.self) { try r.get("number", as: URL.self) }
        }
    }

    /// A record keeps its first conversion apart from the rest: overwriting or removing that
    /// column hands the place to the next one, and every other kept value stays.
    @Test func keptURLsStayWhenTheFirstKeptColumnIsOverwrittenOrRemoved() throws {
        try withDatabase { t in
            let sql = "select 'https://a.example/' as a, 'https://b.example/' as b, 'https://c.example/' as c"
            let r = try #require(try t.db.findFirst(sql))
            for column in ["a", "b", "c"] { _ = r[column] as URL? }
            #expect(r.a is URL && r.b is URL && r.c is URL)
            // Stored values, as a generated key is written back: no cell hides a stale kept value.
            r.put("a", .text("plain text"))
            #expect(r.a as? String == "plain text")
            #expect(r.b as? URL == URL(string: "https://b.example/") && r.c as? URL == URL(string: "https://c.example/"))
            r.put("b", .text("other text"))                  // the entry that moved into the first place
            #expect(r.b as? String == "other text")
            #expect(r.c as? URL == URL(string: "https://c.example/"))
            r.remove("b")
            #expect(r.columnNames == ["a", "c"])
            #expect(r.c as? URL == URL(string: "https://c.example/"))
            #expect(r.a as? String == "plain text")
            let s = try #require(try t.db.findFirst(sql))
            for column in ["c", "a"] { _ = s[column] as URL? }
            s.remove("c")
            #expect(s.a as? URL == URL(string: "https://a.example/") && s.b is String)
        }
    }

    @Test func aWrittenURLReadsBackAsWritten() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 'https://a.example/' as link"))
            let relative = try #require(URL(string: "b/c", relativeTo: URL(string: "https://base.example/x/")))
            r.link = relative
            let read: URL? = r.link
            #expect(read == relative)                 // not a re-parse of the stored absolute text
            #expect(read?.baseURL != nil)
            r.link = "not written as a URL"
            #expect(r.link as URL? == URL(string: "not written as a URL"))
        }
    }

    @Test func aRecordBuiltFromValuesReadsItsOwnURL() throws {
        let relative = try #require(URL(string: "b/c", relativeTo: URL(string: "https://base.example/x/")))
        let r = try Record(["link": relative, "text": "https://t.example"])
        #expect(r.link as URL? == relative)
        #expect((r.link as URL?)?.baseURL != nil)
        #expect(r.text as URL? == URL(string: "https://t.example"))
    }

    /// A Date read marks its column only if the column still holds the value it read: a write that
    /// came between (from another thread) is not shown as a Date afterwards.
    @Test func aDateReadDoesNotMarkAColumnWrittenSinceItsValueWasRead() throws {
        try withDatabase { t in
            let fetched = try #require(try t.db.findFirst("select 10.5 as born, 1 as other"))
            // Unwritten: marked without the lock.
            #expect(fetched.keepDate(at: 0))
            #expect(fetched["born"] is Date)
            // Read from the base, then written before the mark: the mark is checked again and goes.
            let raced = try #require(try t.db.findFirst("select 10.5 as born, 1 as other"))
            raced.put("born", .integer(5))
            #expect(raced.keepDate(at: 0))                      // the Date read is returned...
            #expect(raced["born"] as? Int64 == 5)               // ...but not kept over the new value
            // Read under the lock in the current layout, value unchanged: marked.
            raced.put("born", .real(20.5))
            let layout = raced.lock.withLock { _ in raced.layout }
            #expect(raced.keepDate(at: 0, ifStill: .real(20.5), readIn: layout))
            #expect(raced["born"] as? Date == Date(timeIntervalSince1970: 20.5))
            #expect(raced["other"] as? Int64 == 1)
            // Read under the lock, then written: not marked.
            let other = try #require(try t.db.findFirst("select 10.5 as born"))
            other.put("born", .real(30.5))
            let before = other.lock.withLock { _ in other.layout }
            other.put("born", .integer(7))
            #expect(other.keepDate(at: 0, ifStill: .real(30.5), readIn: before))
            #expect(other["born"] as? Int64 == 7)
        }
    }

    /// A column removed between a Date read and its mark: the mark does not land on the column
    /// that moved into its place, even one holding the same value.
    @Test func aDateMarkDoesNotLandOnAColumnShiftedByARemoval() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 10.5 as created, 10.5 as updated"))
            r.remove("created")
            #expect(r.keepDate(at: 0))
            #expect(r["updated"] is Double)
            #expect(r.columnNames == ["updated"])
            let s = try #require(try t.db.findFirst("select 10.5 as created, 10.5 as updated"))
            s.put("created", .real(10.5))
            let layout = s.lock.withLock { _ in s.layout }
            s.remove("created")
            #expect(s.keepDate(at: 0, ifStill: .real(10.5), readIn: layout))
            #expect(s["updated"] is Double)
        }
    }

    @Test func datesAndURLsAreKeptOnWideRecordsOnBothSidesOfTheMarkedColumns() throws {
        try withDatabase { t in
            // 64 columns: 0...59 can be marked as read as Date, 60 to 63 keep their Date the general way.
            let columns = (0..<64).map { "\($0 * 10).5 as c\($0)" }.joined(separator: ", ")
            let r = try #require(try t.db.findFirst("select \(columns), 'https://w.example/' as link"))
            for i in [0, 59, 60, 61, 62, 63] {
                let date: Date? = r["c\(i)"]
                #expect(date == Date(timeIntervalSince1970: Double(i * 10) + 0.5))
                #expect(r["c\(i)"] is Date, "column \(i)")
            }
            #expect(r.c1 is Double)   // never read as a Date
            let first: URL? = r.link
            let again: URL? = r.link
            #expect(first == URL(string: "https://w.example/") && again == first)
            #expect(r.link is URL)
            // Writing another column keeps both kinds of kept values.
            r.c1 = 7
            #expect(r.c0 is Date && r.c62 is Date && r.link is URL)
            r.remove("c0")
            #expect(r.c61 is Date && r.c63 is Date && r.link is URL)
        }
    }

    @Test func aContextThatReplacesURLReadsThroughItsConverter() throws {
        struct PrefixURL: TypeConverter {
            var storageType: StorageType { .text }
            func encode(_ value: URL) throws -> DatabaseValue { .text(value.absoluteString) }
            func decode(_ value: DatabaseValue) throws -> URL {
                guard case .text(let s) = value, let url = URL(string: "https://prefix.example/" + s) else {
                    throw ConversionError.cannotDecode(value, to: URL.self, "TEXT")
                }
                return url
            }
        }
        try withDatabase { t in
            t.context.register(converter: PrefixURL())
            let r = try #require(try t.db.findFirst("select 'p' as link"))
            #expect(r.link as URL? == URL(string: "https://prefix.example/p"))
        }
    }
}

/// The shortcuts behind `decode` (a column guessed from the previous one) and query routing
/// (the first word packed in an integer) must agree with the slow answers.
@Suite struct LookupShortcutTests {
    struct AB: Decodable, Equatable { var a: Int; var b: Int }

    @Test func decodeTakesTheLeftmostOfDuplicateNames() throws {
        try withDatabase { t in
            let r = try #require(try t.db.findFirst("select 1 as a, 2 as A, 3 as b"))
            #expect(try r.decode(AB.self) == AB(a: 1, b: 3))
            let twice = try #require(try t.db.findFirst("select 5 as b, 1 as a, 2 as a"))
            #expect(try twice.decode(AB.self) == AB(a: 1, b: 5))
            // The guess lands on a later `b`: the leftmost is the one read.
            let later = try #require(try t.db.findFirst("select 2 as b, 1 as a, 3 as b"))
            #expect(try later.decode(AB.self) == AB(a: 1, b: 2))
        }
    }

    @Test func decodeFindsColumnsInAnyOrderAndCase() throws {
        try withDatabase { t in
            let reversed = try #require(try t.db.findFirst("select 3 as B, 1 as a"))
            #expect(try reversed.decode(AB.self) == AB(a: 1, b: 3))
            // The same decode twice on one record, and across records of one result.
            #expect(try reversed.decode(AB.self) == AB(a: 1, b: 3))
            let rows = try t.db.find("select 1 as a, 2 as b union all select 3, 4")
            #expect(try rows.map { try $0.decode(AB.self) } == [AB(a: 1, b: 2), AB(a: 3, b: 4)])
        }
    }

    @Test func layoutsKnowWhenTheirNamesRepeat() {
        #expect(RowLayout(names: ["a", "b"], registry: .shared).namesAreDistinct)
        #expect(!RowLayout(names: ["a", "B", "A"], registry: .shared).namesAreDistinct)
        #expect(!RowLayout(names: ["long_column_name", "LONG_COLUMN_NAME"], registry: .shared).namesAreDistinct)
        #expect(RowLayout(names: ["long_column_name1", "long_column_name2"], registry: .shared).namesAreDistinct)
        // SQLite folds the case of ASCII letters only: "é" and "É" are two columns to it
        // (`create table t("é", "É")` is accepted), the same bytes twice are one.
        #expect(RowLayout(names: ["é", "É"], registry: .shared).namesAreDistinct)
        #expect(!RowLayout(names: ["é", "é"], registry: .shared).namesAreDistinct)
        #expect(RowLayout(names: ["a"], registry: .shared).appending("b").namesAreDistinct)
        #expect(!RowLayout(names: ["a"], registry: .shared).appending("A").namesAreDistinct)
        var hint = 2
        let layout = RowLayout(names: ["x", "y", "X"], registry: .shared)
        #expect(layout.position(of: "X", hint: &hint) == 0)   // the leftmost, not the exact-case match at the hint
        #expect(hint == 1)
    }

    /// `decode` takes a common type's value where the previous column ended when the name there
    /// is the very same: the values, the errors and the conversions must be the general path's.
    @Test func decodeReadsCommonTypesWhereTheyLieAsTheGeneralPathDoes() throws {
        struct Common: Decodable, Equatable {
            var i: Int; var i64: Int64; var d: Double; var widened: Double; var b: Bool; var s: String; var n: Int?
        }
        struct NotNull: Decodable { var i: Int; var n: Int }
        struct TextAsInt: Decodable { var i: Int; var s: Int }
        struct Accented: Decodable { var i: Int; var é: Int }   // precomposed U+00E9
        struct MaybeInts: Decodable, Equatable { var i: Int?; var n: Int? }
        try withDatabase { t in
            try t.db.update("create table c(i, i64, d, widened, b, s, n, \"e\u{301}\")")
            try t.db.update("insert into c values (1, 9007199254740993, 2.5, 7, 1, 'x', null, 3)")
            let row = try #require(try t.db.findFirst("select * from c"))
            let want = Common(i: 1, i64: 9_007_199_254_740_993, d: 2.5, widened: 7, b: true, s: "x", n: nil)
            #expect(try row.decode(Common.self) == want)
            // Every row of a block, and a written record (its own values), decode alike.
            try t.db.update("insert into c values (2, 3, 0.5, 8, 0, 'y', 4, 5)")
            let rows = try t.db.find("select * from c order by i")
            #expect(try rows.map { try $0.decode(Common.self) } == [want, Common(i: 2, i64: 3, d: 0.5, widened: 8, b: false, s: "y", n: 4)])
            rows[1].s = "z"
            #expect(try rows[1].decode(Common.self).s == "z")
            // NULL where the type has no nil, and TEXT where it wants an Int: the general path's errors.
            let null = try #require(throws: DecodingError.self) { try row.decode(NotNull.self) }
            guard case .valueNotFound(_, let context) = null else { Issue.record("\(null)"); return }
            #expect(context.codingPath.map(\.stringValue) == ["n"])
            #expect(context.debugDescription.contains("\"n\" is NULL"))
            let text = try #require(throws: ConversionError.self) { try row.decode(TextAsInt.self) }
            #expect("\(text)".contains("\"s\""))
            // Canonically equal is not the same column: SQLite keeps "é" and "e" + U+0301 apart.
            let accented = try #require(try t.db.findFirst("select i, \"e\u{301}\" from c where i = 1"))
            #expect(throws: DecodingError.self) { try accented.decode(Accented.self) }
            // Optional properties: NULL and a missing column are nil, a value that does not convert throws.
            struct Optionals: Decodable, Equatable { var i: Int?; var i64: Int64?; var d: Double?; var b: Bool?; var s: String?; var n: Int?; var none: String? }
            #expect(try row.decode(Optionals.self) == Optionals(i: 1, i64: 9_007_199_254_740_993, d: 2.5, b: true, s: "x", n: nil, none: nil))
            #expect(try rows.map { try $0.decode(Optionals.self) } == [
                Optionals(i: 1, i64: 9_007_199_254_740_993, d: 2.5, b: true, s: "x", n: nil, none: nil),
                Optionals(i: 2, i64: 3, d: 0.5, b: false, s: "z", n: 4, none: nil),
            ])
            struct OptionalTextAsInt: Decodable { var i: Int?; var s: Int? }
            #expect(throws: ConversionError.self) { try row.decode(OptionalTextAsInt.self) }
            // A value the built-in rule does not take goes on to the converter: TEXT holding a number.
            let digits = try #require(try t.db.findFirst("select '7' as i, null as s"))
            let lenient = try digits.decode(OptionalTextAsInt.self)
            #expect(lenient.i == 7 && lenient.s == nil)
            // From a block of 4-byte payloads.
            let small = try t.db.find("select 1 as i, null as n union all select 2, 3")
            #expect(small.first?.values.storage.fields.payloads.isNarrow == true)
            #expect(try small.map { try $0.decode(MaybeInts.self) } == [MaybeInts(i: 1, n: nil), MaybeInts(i: 2, n: 3)])
            // A converter registered for Int takes over the guessed column too.
            t.context.register(converter: TenfoldInt())
            let converted = try #require(try t.db.findFirst("select 40 as i, 50 as n"))
            #expect(try converted.decode(NotNull.self).n == 5)
            #expect(try converted.decode(MaybeInts.self) == MaybeInts(i: 4, n: 5))
        }
    }

    @Test(arguments: [
        ("select 1", SqlText.Access.read), ("SELECT * FROM t", .read), ("  \n\tselect 1", .read), ("(select 1)", .read),
        ("values (1)", .read), ("EXPLAIN select 1", .read), ("with x as (select 1) select * from x", .ask),
        ("insert into t values (1)", .write), ("selected", .write), ("selec", .write), ("", .write),
        ("-- comment\nselect 1", .write), ("pragma user_version", .write), ("explainer", .write),
    ])
    func queriesAreRoutedByTheirFirstWord(_ sql: String, _ access: SqlText.Access) {
        #expect(SqlText.access(sql) == access)
    }
}

/// Building a record from values: names SQLite takes for one are one column, wrapped Optionals
/// are kept as their value, whatever the spelling or the length of the names.
@Suite struct RecordBuildingTests {
    @Test func namesThatAreOneColumnToSQLiteAreOneColumn() throws {
        let r = try Record(["Name": "a", "age": 1, "NAME": "b", "a_rather_long_name": 2, "A_RATHER_LONG_NAME": 3,
                            "a_rather_long_nam3": 4, "Émile": 5, "émile": 6, "é": 7])
        // "Émile" and "émile" are two columns to SQLite, which folds ASCII letters only.
        #expect(r.columnNames == ["Name", "age", "a_rather_long_name", "a_rather_long_nam3", "Émile", "émile", "é"])
        #expect(r.name as String? == "b")
        #expect(r.a_rather_long_name as Int? == 3)
        #expect(r.a_rather_long_nam3 as Int? == 4)
        #expect(r["Émile"] as Int? == 5)
        #expect(r["émile"] as Int? == 6)
        #expect(r.modifiedColumns.count == 7)
    }

    @Test func recordsBuiltAlikeShareALayoutButNotTheirValues() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, a, b)")
            let one = try Record(["a": 1, "b": "x"]), two = try Record(["a": 2, "b": "y"])
            #expect(one.layout === two.layout)
            let other = try Record(["a": 1, "c": 2])
            #expect(other.layout !== one.layout)
            one.b = "changed"
            #expect(two.b as String? == "y")
            // Both gain their generated key; the layout with `id` is shared too, the values are not.
            try t.db.batchSave("p", [one, two])
            #expect(one.id as Int? == 1 && two.id as Int? == 2)
            #expect(one.columnNames == ["a", "b", "id"] && two.columnNames == ["a", "b", "id"])
            #expect(one.layout === two.layout)
            two.remove("a")
            #expect(one.a as Int? == 1 && one.columnNames == ["a", "b", "id"])
            #expect(try t.db.query("select b from p order by id", as: String.self) == ["changed", "y"])
        }
    }

    // Found in review: the layout caches compared names with Swift's `==`, which takes the
    // precomposed and the decomposed "é" as equal; SQLite takes them as two columns.
    @Test func builtRecordsKeepTheirOwnSpellingOfANonASCIIName() throws {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        _ = try Record([nfc: 1])
        let r = try Record([nfd: 2])
        #expect(Array(r.columnNames[0].utf8) == Array(nfd.utf8))
        let a = Record(); a["na\u{EF}ve"] = 1
        let b = Record(); b["nai\u{308}ve"] = 2
        #expect(Array(b.columnNames[0].utf8) == Array("nai\u{308}ve".utf8))
    }

    @Test func aRecordSavedAfterAnotherSpellingWritesItsOwnColumn() throws {
        try withDatabase { t in
            let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
            try t.db.update("create table u (\"\(nfd)\" integer)")
            _ = try Record([nfc: 1])
            let r = try Record([nfd: 2])
            #expect(try t.db.save("u", r))
            #expect(try t.db.find("select * from u").count == 1)
        }
    }

    @Test func wrappedOptionalsAndPlainValuesAreKeptAsTheirValue() throws {
        let some: Int? = 5
        let none: String? = nil
        let date = Date(timeIntervalSince1970: 3)
        let r = try Record(["some": some, "none": none, "date": date, "data": Data([1]), "flag": true])
        #expect(r["some"] as? Int == 5)
        #expect(r["none"] == nil)
        #expect(r["date"] as? Date == date)
        #expect(r["data"] as? Data == Data([1]))
        #expect(r["flag"] as? Bool == true)
        let nested: Int?? = 7
        r["later"] = nested as Any   // an Optional inside an Any
        #expect(r["later"] as? Int == 7)
    }
}
