import Foundation
import Testing
@testable import DicRecord

// Keys read from SQLite as TEXT that is not UTF-8 (a third-party database): they read as U+FFFD
// replacement characters, and a lookup by those characters finds another row, or none. Here
// C3 28 and FF 28 both read as "\u{FFFD}(", which is also the valid key EF BF BD 28.

/// A region of a third-party table whose `id` is TEXT, with its streets.
final class BadKeyRegion: Model {
    @Column var name: String?
    @Children(foreignKey: "region_id") var streets: [BadKeyStreet]
}

/// A street in a region (`region_id`, undeclared: TEXT as the region's id).
final class BadKeyStreet: Model {
    @Column var name: String?
}

/// A town referring to its region (`region_id`).
final class BadKeyTown: Model {
    @Column var name: String?
    @Reference var region: BadKeyRegion?
}

@Suite("Keys that are TEXT but not UTF-8 find their own rows")
struct NonUTF8KeyTests {
    /// Three regions whose ids all read as "\u{FFFD}(", and a town and a street in each.
    private func regionsAndTowns(_ t: TestDatabase) throws {
        try t.db.update(#"create table "BadKeyRegion"(id text primary key, name text)"#)
        try t.db.update(#"create table "BadKeyTown"(id integer primary key, name text, region_id text)"#)
        try t.db.update(#"create table "BadKeyStreet"(id integer primary key, name text, region_id text)"#)
        t.context.register(BadKeyRegion.self, BadKeyTown.self, BadKeyStreet.self)
        try t.db.update(#"""
            insert into "BadKeyRegion" values (cast(x'C328' as text), 'c3'), (cast(x'FF28' as text), 'ff'),
                                              (cast(x'EFBFBD28' as text), 'replacement')
            """#)
        try t.db.update(#"""
            insert into "BadKeyTown"(name, region_id) values ('in c3', cast(x'C328' as text)),
                ('in ff', cast(x'FF28' as text)), ('in replacement', cast(x'EFBFBD28' as text))
            """#)
        try t.db.update(#"insert into "BadKeyStreet"(name, region_id) select name, region_id from "BadKeyTown""#)
    }

    /// The towns as models over fetched records (how a model crosses tasks): a dao's load would
    /// refuse TEXT in `region_id`, declared an integer, but a model over a record does not.
    private func towns(_ t: TestDatabase) throws -> [BadKeyTown] {
        try t.db.find(#"select * from "BadKeyTown" order by id"#).map(BadKeyTown.init(record:))
    }

    /// Preload keeps the keys apart by their bytes (they merged into one, which found the row
    /// keyed by the replacement text) and attaches each town its own region.
    @Test func preloadAttachesTheRegionOfEachNonUTF8Key() throws {
        try withDatabase { t throws in
            try regionsAndTowns(t)
            let towns = try towns(t)
            try BadKeyTown.dao.preload(\.region, in: towns)
            t.clearLog()
            #expect(towns.map { $0.region?.name } == ["c3", "ff", "replacement"])
            #expect(t.statements.isEmpty)
        }
    }

    /// A lazy reference loads the row keyed by the stored bytes, and a cached one is not reused
    /// once the key changed to other text that reads the same.
    @Test func aReferenceLoadsTheRegionOfItsNonUTF8Key() throws {
        try withDatabase { t throws in
            try regionsAndTowns(t)
            let towns = try towns(t)
            #expect(towns.map { $0.region?.name } == ["c3", "ff", "replacement"])
            #expect(try towns[1].load(\.region)?.name == "ff")
            // Set to the replacement text it reads as: now the key of another row.
            towns[0]["region_id"] = "\u{FFFD}("
            #expect(towns[0].region?.name == "replacement")
        }
    }

    /// Keys that are two rows for the database are two keys for preload and the reference cache:
    /// "é" as C3 A9 and as "e" + U+0301 (one for Swift's `==`); and a TEXT key the database
    /// matched in another form ('7' for INTEGER 7) is not cached as missing.
    @Test func preloadKeepsKeysTheDatabaseKeepsApart() throws {
        try withDatabase { t throws in
            try t.db.update(#"create table "BadKeyRegion"(id text primary key, name text)"#)
            try t.db.update(#"create table "BadKeyTown"(id integer primary key, name text, region_id)"#)
            t.context.register(BadKeyRegion.self, BadKeyTown.self)
            try t.db.update(#"insert into "BadKeyRegion" values ('\#u{E9}', 'composed'), ('e\#u{301}', 'decomposed'), (7, 'seven'), ('8', 'eight')"#)
            try t.db.update(#"insert into "BadKeyTown"(name, region_id) values ('a', '\#u{E9}'), ('b', 'e\#u{301}'), ('c', '7'), ('d', 8), ('e', 'none')"#)
            let towns = try t.db.find(#"select * from "BadKeyTown" order by id"#).map(BadKeyTown.init(record:))
            try BadKeyTown.dao.preload(\.region, in: towns)
            #expect(towns.map { $0.region?.name } == ["composed", "decomposed", "seven", "eight", nil])
            // A key changed to the other form finds the other row, not the cached one.
            towns[0]["region_id"] = "e\u{301}"
            #expect(towns[0].region?.name == "decomposed")
        }
    }

    /// `@Children` finds the rows whose foreign key holds the parent's own stored id.
    @Test func childrenOfANonUTF8IdAreItsOwn() throws {
        try withDatabase { t throws in
            try regionsAndTowns(t)
            let regions = try BadKeyRegion.dao.find(#"select * from "BadKeyRegion" order by name"#)
            #expect(regions.map { $0.streets.map(\.name) } == [["in c3"], ["in ff"], ["in replacement"]])
        }
    }

    /// Keyset paging cannot carry a next key that is TEXT but not UTF-8 (`nextKey` would hold its
    /// replacement characters, and the next page would skip or repeat rows): it throws naming the
    /// key column and the SQL. Selected as a BLOB, the key pages exactly.
    @Test func keysetPagingRefusesANonUTF8NextKey() throws {
        try withDatabase { t throws in
            try t.db.update("create table k(code text primary key, n int)")
            // In key order: 'a', 'b', C3 28, 'é' (C3 A9), EF BF BD 28, FF 28.
            try t.db.update("""
                insert into k values ('a', 1), ('b', 2), (cast(x'C328' as text), 3), ('é', 4),
                                     (cast(x'EFBFBD28' as text), 5), (cast(x'FF28' as text), 6)
                """)
            let error = try #require(throws: DicRecordError.self) {
                try t.db.paginate(after: nil, 3, "select *", "from k", key: "code")
            }
            #expect(error.kind == .unsupportedArgument)
            #expect(error.message.contains(#"key column "code""#) && error.message.contains("not UTF-8"))
            #expect(error.sql?.contains("from k") == true)
            // A page ending on a valid key pages on as before.
            let first = try t.db.paginate(after: nil, 2, "select *", "from k", key: "code")
            #expect(first.nextKey == .text("b"))

            var order: [Int] = []
            var page = try t.db.paginate(after: nil, 2, "select cast(code as blob) as code, n", "from k", key: "code")
            order += page.list.compactMap { $0.n }
            while let next = page.nextKey {
                page = try t.db.paginate(after: next, 2, "select cast(code as blob) as code, n", "from k", key: "code")
                order += page.list.compactMap { $0.n }
            }
            #expect(order == [1, 2, 3, 4, 5, 6])
        }
    }
}
