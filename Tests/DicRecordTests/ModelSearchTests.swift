import Foundation
import Testing
@testable import DicRecord

// Full-text search (FTS5, external content kept in step by triggers): `dao.search`.

final class FtsArticle: Model {
    @Column var title: String?
    @Column var body: String?
    @Column var views: Int?
    override class var searchColumns: [String] { ["title", "body"] }
}

/// Registered, but declares no search columns.
final class FtsPlain: Model {
    @Column var title: String?
}

/// Declares search columns but is never registered.
final class FtsUnregistered: Model {
    @Column var title: String?
    override class var searchColumns: [String] { ["title"] }
}

/// Names a search column it does not declare.
final class FtsBadColumns: Model {
    @Column var title: String?
    override class var searchColumns: [String] { ["title", "missing"] }
}

@Suite("Model full-text search")
struct ModelSearchTests {
    static let rare = "zephyrine"
    static let words = ["apple", "river", "stone", "cloud", "maple", "tiger", "ocean", "piano", "lemon", "forest",
                        "candle", "silver", "garden", "rocket", "winter", "basket", "coffee", "marble", "harbor", "violet"]

    /// Row `i` (1…1000): a two-word title and an eight-word body from `words`; rows 250, 600 and
    /// 900 also hold the rare word: 250 in the title and three times in a short body (ranks
    /// first), 600 twice in its body, 900 once in a long body (ranks last).
    static func text(_ i: Int) -> (title: String, body: String) {
        var title = "\(words[i % 20]) \(words[(i * 7 + 3) % 20])"
        var body = (0..<8).map { words[(i * 3 + $0 * 5 + $0 * $0) % 20] }
        switch i {
        case 250:
            title = "\(rare) \(title)"
            body = [rare, "apple", rare, rare]
        case 600:
            body.insert(rare, at: 2)
            body.append(rare)
        case 900:
            body += (0..<40).map { words[($0 * 11 + i) % 20] }
            body.insert(rare, at: 30)
        default:
            break
        }
        return (title, body.joined(separator: " "))
    }

    /// The ids whose title or body holds every one of `tokens`.
    static func expected(_ tokens: String...) -> Set<Int> {
        Set((1...1000).filter { i in
            let (title, body) = text(i)
            let all = Set("\(title) \(body)".split(separator: " ").map(String.init))
            return tokens.allSatisfy(all.contains)
        })
    }

    private func withArticles<T>(_ body: (TestDatabase) throws -> T) throws -> T {
        try withDatabase { t throws in
            t.context.register(FtsArticle.self, FtsPlain.self)
            let committed = try t.db.tx { _ in
                for i in 1...1000 {
                    let a = FtsArticle()
                    (a.title, a.body) = Self.text(i)
                    try a.save()
                }
                return true
            }
            #expect(committed)
            return try body(t)
        }
    }

    private func ids(_ query: String, limit: Int? = nil) throws -> [Int] {
        try FtsArticle.dao.search(query, limit: limit).map { $0.id ?? -1 }
    }

    private func ftsIds(_ query: String) throws -> [Int] {
        try FtsArticle.dao.search(fts5Query: query).map { $0.id ?? -1 }
    }

    private func integrityCheck(_ t: TestDatabase) throws {
        try t.db.update("insert into FtsArticle_fts(FtsArticle_fts) values ('integrity-check')")
    }

    @Test func theIndexAndItsTriggersExist() throws {
        try withDatabase { t throws in
            t.context.register(FtsArticle.self)
            let names = try t.db.query("select name from sqlite_master where name like 'FtsArticle_fts%' and type in ('table', 'trigger') order by name", as: String.self)
            #expect(names.contains("FtsArticle_fts"))
            #expect(names.contains("FtsArticle_fts_ai"))
            #expect(names.contains("FtsArticle_fts_ad"))
            #expect(names.contains("FtsArticle_fts_au"))
            #expect(try FtsArticle.dao.search("anything").isEmpty)
        }
    }

    @Test func searchFindsExactlyTheRightRowsBestFirst() throws {
        try withArticles { t throws in
            #expect(try FtsArticle.dao.count() == 1000)
            t.clearLog()
            let hits = try FtsArticle.dao.search(Self.rare)
            #expect(hits.map(\.id) == [250, 600, 900])
            // One statement, the text bound as a parameter.
            #expect(t.statements.count == 1)
            #expect(t.statements[0].contains("MATCH ?"))
            #expect(!t.statements[0].contains(Self.rare))
            // The models are complete.
            #expect(hits[0].title == Self.text(250).title)
            #expect(hits[0].body == Self.text(250).body)
            #expect(hits[2].body == Self.text(900).body)

            #expect(try ids(Self.rare, limit: 2) == [250, 600])
            #expect(try ids(Self.rare, limit: 1) == [250])
            #expect(try ids(Self.rare, limit: 0) == [])
            #expect(try ids(Self.rare, limit: -5) == [])
            #expect(try ids(Self.rare, limit: 100) == [250, 600, 900])
            // Case-insensitive, prefix and column filters.
            #expect(try ids(Self.rare.uppercased()) == [250, 600, 900])
            #expect(try Set(ftsIds("zephyr*")) == [250, 600, 900])
            #expect(try ftsIds("title:\(Self.rare)") == [250])
            #expect(try Set(ftsIds("body:\(Self.rare)")) == [250, 600, 900])
            #expect(try Set(ftsIds("\(Self.rare) OR violet")).isSuperset(of: [250, 600, 900]))
            // No match; a word that is only a prefix of the rare word.
            #expect(try ids("zephyr").isEmpty)
            #expect(try ids("nonexistentword").isEmpty)
        }
    }

    @Test func commonWordsAndBooleanQueries() throws {
        try withArticles { _ throws in
            let apple = Self.expected("apple")
            #expect(apple.count > 50 && apple.count < 1000)
            #expect(try Set(ids("apple")) == apple)
            #expect(try ids("apple").count == apple.count)   // no duplicates
            #expect(try Set(ids("apple river")) == Self.expected("apple", "river"))
            #expect(try Set(ftsIds("apple AND river")) == Self.expected("apple", "river"))
            #expect(try Set(ftsIds("apple OR river")) == Self.expected("apple").union(Self.expected("river")))
            #expect(try Set(ftsIds("apple NOT river")) == Self.expected("apple").subtracting(Self.expected("river")))
            #expect(try Set(ids("\(Self.rare) apple")) == Self.expected(Self.rare, "apple"))
            #expect(Self.expected(Self.rare, "apple").contains(250))
            #expect(try ids("apple", limit: 7).count == 7)
        }
    }

    @Test func updatesDeletesAndRawSqlAreReflected() throws {
        try withArticles { t throws in
            // Updating a row's text through the model removes it from the results.
            let second = try #require(try FtsArticle.dao.findById(600))
            second.body = "nothing rare here"
            try second.update()
            #expect(try ids(Self.rare) == [250, 900])
            #expect(try ids("rare here") == [600])
            // Deleting through the model.
            let third = try #require(try FtsArticle.dao.findById(900))
            try third.delete()
            #expect(try ids(Self.rare) == [250])
            #expect(try FtsArticle.dao.deleteById(250))
            #expect(try ids(Self.rare) == [])

            // Updating a column that is not indexed leaves the index right.
            let other = try #require(try FtsArticle.dao.findById(1))
            other.views = 10
            try other.update()
            #expect(try Set(ids("\(Self.text(1).title.split(separator: " ")[0])")).contains(1))

            // Rows written by raw SQL are indexed by the triggers.
            try t.db.update("insert into FtsArticle(title, body) values (?, ?)", "raw title", "a \(Self.rare) written by hand")
            let rawId = try #require(try t.db.queryInt("select max(id) from FtsArticle"))
            #expect(rawId == 1001)
            #expect(try ids(Self.rare) == [rawId])
            try t.db.update("insert into FtsArticle(title, body) values (?, null)", "\(Self.rare) in a title only")
            #expect(try Set(ids(Self.rare)) == [rawId, 1002])
            try t.db.update("update FtsArticle set body = 'gone' where id = ?", rawId)
            #expect(try ids(Self.rare) == [1002])
            #expect(try ids("gone") == [rawId])
            try t.db.update("delete from FtsArticle where id = 1002")
            #expect(try ids(Self.rare) == [])
            // A batch of model saves in a rolled-back transaction leaves no trace in the index.
            _ = try t.db.tx { _ in
                let a = FtsArticle()
                a.title = Self.rare
                try a.save()
                #expect(try ids(Self.rare).count == 1)
                return false
            }
            #expect(try ids(Self.rare) == [])
            try integrityCheck(t)
        }
    }

    @Test func malformedFTS5QueriesThrowADatabaseError() throws {
        try withArticles { _ throws in
            for query in ["\"unbalanced", "\(Self.rare) OR", "AND", "nosuchcolumn:\(Self.rare)", "(apple", "apple)",
                          "\(Self.rare)') OR 1=1 --", "NEAR(apple river"] {
                #expect(throws: DatabaseError.self, "\(query)") { try FtsArticle.dao.search(fts5Query: query) }
            }
            // The database is fine afterwards.
            #expect(try ids(Self.rare) == [250, 600, 900])
            // Quoted as a phrase, punctuation is harmless.
            #expect(try ids("\"\(Self.rare)\"") == [250, 600, 900])
        }
    }

    /// What a user types into a search box is words, never query syntax: hyphens, quotes,
    /// colons, operators and parentheses find what they spell or nothing, and never throw.
    @Test func plainSearchTextIsNeverQuerySyntax() throws {
        try withArticles { _ throws in
            #expect(try ids("nothing-matches-this") == [])
            for query in ["\"unbalanced", "\(Self.rare) OR", "AND", "nosuchcolumn:\(Self.rare)", "(apple", "apple)",
                          "\(Self.rare)') OR 1=1 --", "NEAR(apple river", "zephyr*", "-", "\"\"", "   ", "hello\u{0}world", "\u{0}"] {
                #expect(throws: Never.self, "\(query)") { _ = try FtsArticle.dao.search(query) }
            }
            // Punctuation around a word still finds it; every word must be there.
            #expect(try ids("\(Self.rare):") == [250, 600, 900])
            #expect(try ids("(\(Self.rare))") == [250, 600, 900])
            #expect(try ids("\"\(Self.rare)\"") == [250, 600, 900])
            #expect(try ids("AND \(Self.rare)") == [])   // "and" is a word here, and no row has it
            #expect(try Set(ids("apple \(Self.rare)")) == Self.expected("apple", Self.rare))
            #expect(try ids("   ").isEmpty)
            // Words as words: "OR" is not an operator.
            #expect(try ids("\(Self.rare) OR violet").isEmpty)
        }
    }

    @Test func searchOnAModelWithoutSearchColumnsThrows() throws {
        try withDatabase { t throws in
            t.context.register(FtsPlain.self)
            let plain = FtsPlain()
            plain.title = "hello"
            try plain.save()
            let error = try #require(throws: DicRecordError.self) { try FtsPlain.dao.search("hello") }
            #expect(error.kind == .invalidModel)
            #expect(error.message.contains("FtsPlain"))
            #expect(try t.db.queryInt("select count(*) from sqlite_master where name like 'FtsPlain_fts%'") == 0)

            let unregistered = try #require(throws: DicRecordError.self) { try FtsUnregistered.dao.search("hello") }
            #expect(unregistered.kind == .notRegistered)
            let bad = try #require(throws: DicRecordError.self) { try FtsBadColumns.dao.search("hello") }
            #expect(bad.kind == .invalidModel)
            #expect(bad.message.contains("missing"))
        }
    }
}
