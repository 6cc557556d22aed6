import Foundation
import Synchronization
import Testing
@testable import DicRecord
@testable import DicRecordPostgres

final class PgLongNames: Model {
    @Column var aVeryLongColumnNameThatGoesOnAndOn: String?
    @Column var aVeryLongColumnNameThatGoesOnAndOnAgain: String?
    override class var tableName: String { "a_table_with_a_rather_long_name" }
    override class var indexes: [Index] {
        [Index("aVeryLongColumnNameThatGoesOnAndOn", unique: true), Index("aVeryLongColumnNameThatGoesOnAndOnAgain", unique: true)]
    }
}

final class PgContact: Model {
    @Column var email: String?
    @Column var name: String?
    override class var tableName: String { "pg_contact" }
}

/// The corners of the PostgreSQL engine a review found: cached statements and cursors after a
/// schema change, migrations and upkeep under concurrent starts, names PostgreSQL would cut,
/// unique indexes an upsert cannot use, queries no cursor takes, untyped NULL arguments.
@Suite(.enabled(if: PostgresServer.enabled)) struct PostgresEdgeTests {
    private var oneConnection: DbContext.Options {
        var options = DbContext.Options()
        options.poolSize = 1
        return options
    }

    @Test func cachedStatementsAndCursorsFollowASchemaChange() throws {
        try withDatabase(options: oneConnection, engine: .postgres) { t in
            let db = t.db
            try db.update("create table item (id bigint primary key, name text)")
            try db.update("insert into item values (1, 'a'), (2, 'b')")
            #expect(try db.find("select * from item order by id").first?.columnNames == ["id", "name"])
            try db.each("select * from item order by id") { (_: Record) in true }
            try db.update("alter table item add column price double precision default 2.5")
            // Outside a transaction: prepared again, the new column read.
            #expect(try db.find("select * from item order by id").first?.columnNames == ["id", "name", "price"])
            var prices: [Double?] = []
            try db.each("select * from item order by id") { (record: Record) in prices.append(record["price"]); return true }
            #expect(prices == [2.5, 2.5])
            // A column retyped: the cursor's rows are read as they now are, never as the old type.
            try db.update("alter table item alter column price type bigint using price::bigint")
            var retyped: [Int?] = []
            try db.each("select * from item order by id") { (record: Record) in retyped.append(record["price"]); return true }
            #expect(retyped == [2, 2])   // 2.5 as bigint: PostgreSQL rounds half to even
            // Inside a transaction a stale statement fails that transaction once, then is prepared afresh.
            #expect(try db.find("select * from item").first?.columnCount == 3)
            try db.update("alter table item add column note text")
            let stale = try #require(throws: DatabaseError.self) { try db.tx { db in _ = try db.find("select * from item"); return true } }
            #expect(stale.sqlState == "0A000")
            #expect(try db.tx { db in try db.find("select * from item").first?.columnCount == 4 })
        }
    }

    @Test func migrationStepsRunOnceWhenServersStartTogether() throws {
        let scratch = try PostgresServer.scratch()
        defer { scratch.finish() }
        let url = PostgresServer.url(searchPath: scratch.schema) ?? ""
        let names = (0..<4).map { "mig\($0)_\(UUID().uuidString.prefix(8))" }
        let contexts = try names.map { try DbContext(postgres: url, configName: $0) }
        defer { contexts.forEach { $0.stop() } }
        for context in contexts {
            context.migration(version: 1) { db in try db.update("create table if not exists m_runs (n bigint)") }
            context.migration(version: 2) { db in try db.update("insert into m_runs values (2)") }
        }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: contexts.count) { i in
            do { try contexts[i].start() } catch { failures.withLock { $0.append("\(error)") } }
        }
        #expect(failures.withLock { $0 } == [])
        #expect(try Db.use(names[0]).queryInt("select count(*) from m_runs") == 1)
    }

    @Test(arguments: Engine.available) func aSaveInAMigrationStaysSavedWhenALaterTransactionRollsBack(engine: Engine) throws {
        final class Box: @unchecked Sendable { var record: Record? }   // written once, by the migration, before it is read
        let box = Box()
        try withDatabase(engine: engine) { t in
            t.context.stop()
            let context = try t.reopen()
            context.migration(version: 1) { db in
                try db.update(db.ddl("create table admin (id integer primary key, name text)"))
                let admin = try Record(["name": "root"])
                try db.save("admin", admin)
                box.record = admin
            }
            try context.start()
            defer { context.stop() }
            let admin = try #require(box.record)
            #expect((admin["id"] as Int?) == 1)
            _ = try Db.use("main").tx { db in
                try db.update("insert into admin (name) values ('other')")
                return false
            }
            // The rollback took back its own work only: the migration's save keeps its key and flags.
            #expect((admin["id"] as Int?) == 1)
            #expect(admin.modifiedColumns.isEmpty)
        }
    }

    @Test func longIndexNamesAreKeptDistinctAndStable() throws {
        try withDatabase(engine: .postgres) { t in
            t.context.register(PgLongNames.self)
            let before = try t.db.find("select indexname::text as n, indexdef as d from pg_indexes where tablename = 'a_table_with_a_rather_long_name' and indexname like 'dicrecord%' order by 1")
            #expect(before.count == 2)
            #expect(before.allSatisfy { ($0["n"] as String?).map { $0.utf8.count <= 63 } == true })
            // Both are unique: two rows with one value in either column are refused.
            let a = PgLongNames(); a.aVeryLongColumnNameThatGoesOnAndOn = "x"; a.aVeryLongColumnNameThatGoesOnAndOnAgain = "1"
            try a.save()
            let b = PgLongNames(); b.aVeryLongColumnNameThatGoesOnAndOn = "y"; b.aVeryLongColumnNameThatGoesOnAndOnAgain = "1"
            #expect(throws: DatabaseError.self) { try b.save() }
            // A second start keeps them as they are (no drop and re-create).
            t.context.stop()
            let again = try t.reopen()
            again.register(PgLongNames.self)
            try again.start()
            defer { again.stop() }
            let oids = "select indexrelid::bigint from pg_index where indrelid = to_regclass('a_table_with_a_rather_long_name') order by 1"
            let after = try Db.use("main").query(oids, as: Int.self)
            #expect(after.count == 3)
            #expect(try Db.use("main").find("select indexname::text as n from pg_indexes where tablename = 'a_table_with_a_rather_long_name' and indexname like 'dicrecord%' order by 1").map { $0["n"] as String? }
                    == before.map { $0["n"] as String? })
        }
    }

    @Test func anUpsertUsesTheKeyColumnsOfAUniqueIndexNotItsIncludedOnes() throws {
        try withDatabase(engine: .postgres) { t in
            try t.db.update("create table pg_contact (id bigint generated by default as identity primary key, email text, name text)")
            try t.db.update("create unique index pg_contact_email on pg_contact (email) include (name)")
            t.context.register(PgContact.self)
            let first = PgContact(); first.email = "a@b.c"; first.name = "A"
            try first.saveOrUpdate()
            let second = PgContact(); second.email = "a@b.c"; second.name = "B"
            try second.saveOrUpdate()
            #expect(second.id == first.id)
            #expect(try t.db.queryString("select name from pg_contact") == "B")
            // An explicit id moves the identity past it: the next generated key does not collide.
            let fixed = PgContact(); fixed.id = 50; fixed.email = "f@b.c"
            try fixed.saveOrUpdate()
            let next = PgContact(); next.email = "n@b.c"
            try next.save()
            #expect(next.id == 51)
        }
    }

    @Test func queriesNoCursorTakesRunWholeAndUntypedNullsBind() throws {
        try withDatabase(options: oneConnection, engine: .postgres) { t in
            let db = t.db
            try db.update("create table t (i bigint)")
            try db.batch("insert into t values (?)", [[1], [2]])
            var seen = 0
            try db.each("select * into backup from t") { (_: Record) in seen += 1; return true }
            #expect(try db.queryInt("select count(*) from backup") == 2)
            _ = try db.tx { db in
                try db.each("select i from t order by i for\nupdate") { (_: Record) in seen += 1; return true }
                try db.each("select i from t /* a comment */ order by i") { (_: Record) in seen += 1; return true }
                return true
            }
            #expect(seen == 4)
            #expect(try db.queryInt("select ? + ?", nil, 1) == nil)
            #expect(try db.queryInt("select count(*) where ? is null", nil) == 1)
        }
    }

    /// A record read from SQLite with TEXT that is not UTF-8, saved to PostgreSQL (whose text is
    /// UTF-8 only): refused, naming the column, with nothing written, alone or in a batch (it
    /// wrote U+FFFD replacement characters before).
    @Test func aNonUTF8TextFromSQLiteIsRefusedByPostgresNotReplaced() throws {
        try withDatabase(engine: .postgres) { t in
            try t.db.update("create table copied (id bigserial primary key, s text, n bigint)")
            let lite = try DbContext.inMemory(configName: "lite")
            try lite.start()
            defer { lite.stop() }
            let source = Db.use("lite")
            try source.update("create table a (id integer primary key, s text, n int)")
            try source.update("insert into a values (1, cast(x'FFFE41' as text), 1), (2, 'fine', 2)")
            let rows = try source.find("select s, n from a order by id")
            let error = try #require(throws: DicRecordError.self) { try t.db.save("copied", rows[0]) }
            #expect(error.message.contains(#"column "s" holds TEXT that is not UTF-8"#))
            let batch = try #require(throws: DicRecordError.self) { try t.db.batchSave("copied", [rows[1], rows[0]]) }
            #expect(batch.message.contains(#"column "s" holds TEXT that is not UTF-8"#))
            #expect(try t.db.queryInt("select count(*) from copied") == 0)
            // As Data it is written, byte for byte.
            try t.db.update("create table raw (id bigserial primary key, b bytea)")
            let bytes: Data = try #require(rows[0].s)
            #expect(try t.db.save("raw", try Record(["b": bytes])))
            #expect(try t.db.queryString("select encode(b, 'hex') from raw") == "fffe41")
            // The valid row alone goes through.
            #expect(try t.db.save("copied", rows[1]))
            #expect(try t.db.queryString("select s from copied") == "fine")
            // As a key of an UPDATE or DELETE it is refused too: its replacement characters
            // would match another row, or none.
            try t.db.update("create table keyed (s text primary key, n bigint)")
            try t.db.update("insert into keyed values ('\u{FFFD}\u{FFFD}A', 1)")
            let keyed = try #require(try source.findFirst("select s, n from a where id = 1"))
            keyed.n = 5
            let update = try #require(throws: DicRecordError.self) { try t.db.update("keyed", keyed, primaryKey: "s") }
            #expect(update.message.contains(#"column "s" holds TEXT that is not UTF-8"#))
            let delete = try #require(throws: DicRecordError.self) { try t.db.delete("keyed", keyed, primaryKey: "s") }
            #expect(delete.message.contains(#"column "s" holds TEXT that is not UTF-8"#))
            #expect(try t.db.query("select n from keyed", as: Int.self) == [1])
        }
    }

    /// Models read from SQLite whose reference key is TEXT that is not UTF-8, looked up in
    /// PostgreSQL: preload and a reference load refuse the key naming its column (they attached
    /// the row keyed by its U+FFFD replacement characters before).
    @Test func aNonUTF8ReferenceKeyFromSQLiteIsRefusedByPostgres() throws {
        try withDatabase(engine: .postgres) { t in
            try t.db.update(#"create table "BadKeyRegion"(id text primary key, name text)"#)
            t.context.register(BadKeyRegion.self, BadKeyTown.self)
            try t.db.update(#"insert into "BadKeyRegion" values ('\#u{FFFD}(', 'replacement')"#)
            let lite = try DbContext.inMemory(configName: "lite")
            try lite.start()
            defer { lite.stop() }
            // A model over a record read from SQLite (bound to no config: PostgreSQL's here).
            let row = try #require(try Db.use("lite").findFirst("select 1 as id, 'in c3' as name, cast(x'C328' as text) as region_id"))
            let town = BadKeyTown(record: row)
            let preload = try #require(throws: DicRecordError.self) { try BadKeyTown.dao.preload(\.region, in: [town]) }
            #expect(preload.message.contains(#"column "region_id" holds TEXT that is not UTF-8"#))
            let load = try #require(throws: DicRecordError.self) { try town.load(\.region) }
            #expect(load.message.contains(#"column "region_id" holds TEXT that is not UTF-8"#))
            #expect(town.region == nil)
        }
    }
}
