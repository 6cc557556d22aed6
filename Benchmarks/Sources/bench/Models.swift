import CSQLiteBench
import DicRecord
import Foundation
import GRDB

// The structs every implementation fills, how each library fills them, and their checksums.

/// The column names of `items`.
let itemColumns = (0..<10).map { "i\($0)" }

/// A row of `items`.
protocol TenInts {
    var i0: Int { get }
    var i1: Int { get }
    var i2: Int { get }
    var i3: Int { get }
    var i4: Int { get }
    var i5: Int { get }
    var i6: Int { get }
    var i7: Int { get }
    var i8: Int { get }
    var i9: Int { get }
}

extension TenInts {
    var sum: Int { i0 &+ i1 &+ i2 &+ i3 &+ i4 &+ i5 &+ i6 &+ i7 &+ i8 &+ i9 }
}

func itemsChecksum(_ items: [some TenInts]) -> Int {
    items.reduce(0) { $0 &+ $1.sum }
}

struct Item: TenInts, Decodable {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int
}

extension Item {
    /// DicRecord: typed reads by name through the record.
    init(record r: DicRecord.Record) {
        self.init(i0: r.i0 ?? 0, i1: r.i1 ?? 0, i2: r.i2 ?? 0, i3: r.i3 ?? 0, i4: r.i4 ?? 0,
                  i5: r.i5 ?? 0, i6: r.i6 ?? 0, i7: r.i7 ?? 0, i8: r.i8 ?? 0, i9: r.i9 ?? 0)
    }
}

/// GRDB: a hand-written `init(row:)` reading by name (GRDB's recommended record), and a
/// hand-written `encode(to:)` for `PersistableRecord.insert`.
extension Item: FetchableRecord, PersistableRecord {
    static let databaseTableName = "items"

    init(row: Row) {
        self.init(i0: row["i0"], i1: row["i1"], i2: row["i2"], i3: row["i3"], i4: row["i4"],
                  i5: row["i5"], i6: row["i6"], i7: row["i7"], i8: row["i8"], i9: row["i9"])
    }

    func encode(to container: inout PersistenceContainer) {
        container["i0"] = i0
        container["i1"] = i1
        container["i2"] = i2
        container["i3"] = i3
        container["i4"] = i4
        container["i5"] = i5
        container["i6"] = i6
        container["i7"] = i7
        container["i8"] = i8
        container["i9"] = i9
    }
}

/// DicRecord: a typed model over `items`, every column read through its `@Column` property.
final class ItemModel: Model {
    @DicRecord.Column var i0: Int = 0
    @DicRecord.Column var i1: Int = 0
    @DicRecord.Column var i2: Int = 0
    @DicRecord.Column var i3: Int = 0
    @DicRecord.Column var i4: Int = 0
    @DicRecord.Column var i5: Int = 0
    @DicRecord.Column var i6: Int = 0
    @DicRecord.Column var i7: Int = 0
    @DicRecord.Column var i8: Int = 0
    @DicRecord.Column var i9: Int = 0
    override class var tableName: String { "items" }
}

extension Item {
    init(model m: ItemModel) {
        self.init(i0: m.i0, i1: m.i1, i2: m.i2, i3: m.i3, i4: m.i4, i5: m.i5, i6: m.i6, i7: m.i7, i8: m.i8, i9: m.i9)
    }
}

/// GRDB: the same row decoded through GRDB's Decodable support.
struct DecodableItem: TenInts, Decodable, FetchableRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int
}

/// A row of `people`: one column of each type the mixed workload converts.
struct Person {
    var id: Int
    var name: String
    var born: Date
    var homepage: URL
    var avatar: Data
    var score: Double
    var active: Bool

    /// Row n of the fixture tables. Dates and scores are exact binary fractions, far from a
    /// rounding boundary, so every conversion path agrees on the checksum.
    static func fixture(_ n: Int) -> Person {
        Person(id: n,
               name: "name \(n)",
               born: Date(timeIntervalSince1970: 1_000_000_000 + Double(n) + 0.25),
               homepage: URL(string: "https://example.com/users/\(n)")!,
               avatar: Data((0..<16).map { UInt8(truncatingIfNeeded: n &+ $0) }),
               score: Double(n) * 0.25,
               active: n % 2 == 1)
    }

    static let missingURL = URL(string: "missing:")!

    /// Every field contributes, so a value read wrong or not read shows.
    var checksum: Int {
        id &+ name.utf8.count &+ Int(born.timeIntervalSince1970.rounded()) &+ homepage.absoluteString.utf8.count
            &+ avatar.count &+ Int(avatar.first ?? 0) &+ Int((score * 4).rounded()) &+ (active ? 1 : 0)
    }
}

func peopleChecksum(_ people: [Person]) -> Int {
    people.reduce(0) { $0 &+ $1.checksum }
}

extension Person {
    /// Raw C: the columns of the current row of `SELECT * FROM people`, by index.
    @inline(__always)
    init(statement: OpaquePointer) {
        let avatarBytes = sqlite3_column_blob(statement, 4)
        let avatarCount = Int(sqlite3_column_bytes(statement, 4))
        self.init(id: Int(sqlite3_column_int64(statement, 0)),
                  name: rawText(statement, 1),
                  born: Date(timeIntervalSince1970: sqlite3_column_double(statement, 2)),
                  homepage: URL(string: rawText(statement, 3)) ?? Person.missingURL,
                  avatar: avatarBytes.map { Data(bytes: $0, count: avatarCount) } ?? Data(),
                  score: sqlite3_column_double(statement, 5),
                  active: sqlite3_column_int64(statement, 6) != 0)
    }

    /// DicRecord: every field read once through the record's typed dynamic members.
    init(record r: DicRecord.Record) {
        let id: Int? = r.id
        let name: String? = r.name
        let born: Date? = r.born
        let homepage: URL? = r.homepage
        let avatar: Data? = r.avatar
        let score: Double? = r.score
        let active: Bool? = r.active
        self.init(id: id ?? -1, name: name ?? "", born: born ?? Date(timeIntervalSince1970: 0),
                  homepage: homepage ?? Person.missingURL, avatar: avatar ?? Data(), score: score ?? -1,
                  active: active ?? false)
    }
}

/// The text of a column, embedded NULs included.
@inline(__always)
func rawText(_ statement: OpaquePointer, _ column: Int32) -> String {
    guard let text = sqlite3_column_text(statement, column) else { return "" }
    return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
}

/// GRDB, its fastest record: reads by index, the URL as a String then `URL(string:)`, the date as
/// a Double then `Date(timeIntervalSince1970:)`.
extension Person: FetchableRecord, TableRecord {
    static let databaseTableName = "people"

    init(row: Row) {
        self.init(id: row[0], name: row[1], born: Date(timeIntervalSince1970: row[2]),
                  homepage: URL(string: row[3] as String) ?? Person.missingURL, avatar: row[4], score: row[5],
                  active: row[6])
    }
}

/// GRDB, the convenient record: reads by name with GRDB's own Date and URL conversions.
struct ConvenientPerson: FetchableRecord {
    let person: Person

    init(row: Row) {
        person = Person(id: row["id"], name: row["name"], born: row["born"], homepage: row["homepage"],
                        avatar: row["avatar"], score: row["score"], active: row["active"])
    }
}

/// The floor under any `Decoder` over a fetched record: Codable's own machinery (a boxed keyed
/// container per row, a call through the box per field) with each field read by index, no name
/// looked up and no conversion rule consulted. The index is the key's own tag (the case's place
/// in `Item`'s synthesized `CodingKeys`), so it fits `Item` and nothing else; `fetch_records`
/// runs it as a reference row, and its checksum says it read every value right.
struct ByIndexDecoder: Decoder {
    let record: DicRecord.Record
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Container<Key>(record: record))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { fatalError("keyed only") }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { fatalError("keyed only") }

    struct Container<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let record: DicRecord.Record
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { false }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
            // Item's synthesized CodingKeys: a one-byte enum whose raw tag is the declaration order.
            precondition(MemoryLayout<Key>.size == 1, "ByIndexDecoder reads Item only")
            let index = Int(unsafeBitCast(key, to: UInt8.self))
            return (record[index] as Int?) ?? 0
        }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { fatalError("Int only") }
        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> { fatalError("flat only") }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { fatalError("flat only") }
        func superDecoder() throws -> any Decoder { fatalError("flat only") }
        func superDecoder(forKey key: Key) throws -> any Decoder { fatalError("flat only") }
    }
}

/// One row of ten INTEGER values held inline in an object of its own: the least a row can cost
/// when each row is an object (`fetch_positional`'s floor row).
final class TenValues {
    private let v0, v1, v2, v3, v4, v5, v6, v7, v8, v9: Int64

    init(_ value: (Int) -> Int64) {
        (v0, v1, v2, v3, v4) = (value(0), value(1), value(2), value(3), value(4))
        (v5, v6, v7, v8, v9) = (value(5), value(6), value(7), value(8), value(9))
    }

    subscript(i: Int) -> Int64 {
        switch i {
        case 0: v0
        case 1: v1
        case 2: v2
        case 3: v3
        case 4: v4
        case 5: v5
        case 6: v6
        case 7: v7
        case 8: v8
        default: v9
        }
    }
}
