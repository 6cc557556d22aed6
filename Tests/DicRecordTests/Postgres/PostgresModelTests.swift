import Foundation
import Synchronization
import Testing
@testable import DicRecord
@testable import DicRecordPostgres

final class PgDocument: Model {
    struct Meta: Codable, Equatable, Sendable {
        var pages: Int
        var tags: [String]
    }
    @Column var title: String?
    @Column var meta: Meta?
    @Column var published: Date?
    @Column var rating: Double = 0
    @Column var draft: Bool = true
    @Column var createdAt: Date?
    @Column var updatedAt: Date?
    override class var tableName: String { "pg_document" }
    override class var indexes: [Index] { [Index("title", unique: true)] }
}

/// Models on PostgreSQL where the engine shows through: the DDL the upkeep writes, full-text
/// search (SQLite's FTS5, refused here by name), two servers starting at once, native types read
/// into declared columns. The behaviours both engines share run in the parameterized suites.
@Suite(.enabled(if: PostgresServer.enabled)) struct PostgresModelTests {
    @Test func theUpkeepWritesPostgresTypesAndAnIdentityKey() throws {
        try withDatabase(engine: .postgres) { t in
            t.context.register(PgDocument.self)
            let columns = try t.db.find("""
                select column_name, data_type, is_nullable, is_identity from information_schema.columns
                where table_schema = current_schema() and table_name = 'pg_document' order by ordinal_position
                """).map { "\($0.column_name as String? ?? "")|\($0.data_type as String? ?? "")|\($0.is_nullable as String? ?? "")|\($0.is_identity as String? ?? "")" }
            #expect(columns == ["id|bigint|NO|YES", "title|text|YES|NO", "meta|text|YES|NO", "published|double precision|YES|NO",
                                "rating|double precision|NO|NO", "draft|bigint|NO|NO", "createdAt|double precision|YES|NO",
                                "updatedAt|double precision|YES|NO"])
            let indexes = try t.db.query("select indexdef from pg_indexes where schemaname = current_schema() and tablename = 'pg_document' order by indexname",
                                         as: String.self)
            #expect(indexes.contains { $0?.contains("CREATE UNIQUE INDEX dicrecord_pg_document_unique_title") == true })

            let doc = PgDocument()
            doc.title = "Guide"
            doc.meta = .init(pages: 12, tags: ["a", "b"])
            doc.published = Date(timeIntervalSince1970: 1_700_000_000.25)
            try doc.save()
            #expect(doc.id == 1)
            #expect(doc.createdAt != nil && doc.updatedAt != nil)
            let found = try #require(try PgDocument.dao.findById(doc.id))
            #expect(found.meta == .init(pages: 12, tags: ["a", "b"]))
            #expect(found.published == Date(timeIntervalSince1970: 1_700_000_000.25))
            #expect(found.draft)
            // A unique violation is the database's error, nothing written.
            let twin = PgDocument()
            twin.title = "Guide"
            let error = try #require(throws: DatabaseError.self) { try twin.save() }
            #expect(error.sqlState == "23505")
            #expect(twin.id == nil)
            #expect(try PgDocument.dao.count() == 1)
            // saveOrUpdate finds the unique key through the catalog.
            let again = PgDocument()
            again.title = "Guide"
            again.rating = 4.5
            #expect(try again.saveOrUpdate())
            #expect(again.id == doc.id)
            #expect(try PgDocument.dao.findById(doc.id)?.rating == 4.5)
            // Native PostgreSQL types read into declared columns: jsonb into a Codable, a
            // timestamptz into a Date, boolean into Bool.
            let native = try #require(try PgDocument.dao.findFirst("""
                select 7 as id, 'native' as title, '{"pages": 3, "tags": ["x"]}'::jsonb as meta,
                       timestamptz '2024-01-02 03:04:05.5+00' as published, 2.5 as rating, true as draft
                """))
            #expect(native.meta == .init(pages: 3, tags: ["x"]))
            #expect(native.published == Date(timeIntervalSince1970: 1_704_164_645.5))
            #expect(native.draft)
        }
    }

    @Test func fullTextSearchColumnsAreRefusedByNameAndNothingIsCreated() throws {
        try withDatabase(engine: .postgres) { t in
            t.context.stop()
            let context = try t.reopen()
            context.register(PgDocument.self, FtsArticle.self)
            let error = try #require(throws: DicRecordError.self) { try context.start() }
            #expect(error.kind == .invalidModel)
            #expect(error.message.contains("FtsArticle") && error.message.contains("SQLite-only"))
            let check = try t.reopen(configName: "check")
            try check.start()
            defer { check.stop() }
            // All or nothing: the other model's table was not made either.
            #expect(try Db.use("check").onReader { try $0.tableExists("pg_document") } == false)
        }
    }

    @Test func serversStartingAtOnceUpkeepTheSchemaOneAfterTheOther() throws {
        // Started from several threads, so in the global registry, under names of their own.
        let scratch = try PostgresServer.scratch()
        defer { scratch.finish() }
        let names = (0..<4).map { "app\($0)_\(UUID().uuidString.prefix(8))" }
        let contexts = try names.map { try DbContext(postgres: PostgresServer.url(searchPath: scratch.schema) ?? "", configName: $0) }
        defer { contexts.forEach { $0.stop() } }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: contexts.count) { i in
            contexts[i].register(PgDocument.self)
            do { try contexts[i].start() } catch { failures.withLock { $0.append("\(error)") } }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try Db.use(names[0]).queryInt("select count(*) from dicrecord_schema where table_name = 'pg_document'") == 1)
        let doc = PgDocument()
        doc.title = "one"
        try doc.use(names[3]).save()
        #expect(try PgDocument.dao.use(names[1]).count() == 1)
    }

    @Test func migrationsKeepTheirVersionInATableAndRunInTransactions() throws {
        try withDatabase(engine: .postgres) { t in
            t.context.stop()
            let first = try t.reopen()
            first.migration(version: 1) { db in try db.update("create table m_log (id bigint primary key, line text)") }
            first.migration(version: 2) { db in
                try db.update("insert into m_log values (1, 'two')")
                // A tx inside a migration step is a savepoint of the step's transaction.
                let kept = try db.tx { db in
                    try db.update("insert into m_log values (2, 'rolled back')")
                    return false
                }
                #expect(!kept)
            }
            try first.start()
            #expect(try Db.use("main").onWriter { try $0.databaseVersion() } == 2)
            #expect(try Db.use("main").query("select line from m_log order by id", as: String.self) == ["two"])
            first.stop()
            let older = try t.reopen()
            older.migration(version: 1) { _ in }
            let error = try #require(throws: DicRecordError.self) { try older.start() }
            #expect(error.kind == .schemaVersion)
        }
    }
}
