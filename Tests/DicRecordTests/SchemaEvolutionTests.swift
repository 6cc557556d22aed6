import Foundation
import Synchronization
import Testing
@testable import DicRecord

// Schema evolution across restarts: model versions and `migrate(from:to:)`, columns added,
// renamed and dropped, indexes kept in step with the declarations, downgrades refused, the
// database's own migrations (`PRAGMA user_version`), and models whose declarations are wrong.
// Every test works on its own file; each restart is a fresh `DbContext` on that file.

// MARK: - Models

// evo_item: v1 → v2 (a third column filled by migrate), with a counter of migrate calls.
final class EvoItemV1: Model {
    @Column var name: String?
    @Column var qty: Int = 0
    override class var tableName: String { "evo_item" }
}

final class EvoItemV2: Model {
    static let migrateCalls = Mutex<[String]>([])
    @Column var name: String?
    @Column var qty: Int = 0
    @Column var score: Int?
    override class var tableName: String { "evo_item" }
    override class var version: Int { 2 }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        migrateCalls.withLock { $0.append("\(old)->\(new)") }
        return old >= 1 ? [Sql("update evo_item set score = qty * 10")] : []
    }
}

// evo_fresh: a model at version 2 whose table does not exist yet.
final class EvoFreshV2: Model {
    static let migrateCalls = Mutex<[String]>([])
    @Column var name: String?
    override class var tableName: String { "evo_fresh" }
    override class var version: Int { 2 }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        migrateCalls.withLock { $0.append("\(old)->\(new)") }
        return []
    }
}

// evo_stock: v1 → v2 (works) → v3 (its migration fails after adding a column and an index).
final class EvoStockV1: Model {
    @Column var name: String?
    @Column var qty: Int = 0
    override class var tableName: String { "evo_stock" }
}

final class EvoStockV2: Model {
    @Column var name: String?
    @Column var qty: Int = 0
    @Column var score: Int?
    override class var tableName: String { "evo_stock" }
    override class var version: Int { 2 }
    override class var indexes: [Index] { [Index("name")] }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        old == 1 ? [Sql("update evo_stock set score = qty + 1000")] : []
    }
}

final class EvoStockV3: Model {
    @Column var name: String?
    @Column var qty: Int = 0
    @Column var score: Int?
    @Column var note: String?
    override class var tableName: String { "evo_stock" }
    override class var version: Int { 3 }
    override class var indexes: [Index] { [Index("note"), Index("qty", unique: true)] }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        [Sql("update evo_stock set note = 'migrated', qty = qty + 1"), Sql("update nosuchtable set x = 1")]
    }
}

// evo_note: a column added without a version bump.
final class EvoNoteV1: Model {
    @Column var title: String?
    override class var tableName: String { "evo_note" }
}

final class EvoNoteV1Plus: Model {
    static let migrateCalls = Mutex<[String]>([])
    @Column var title: String?
    @Column var pinned: Bool = false
    @Column var rank: Int?
    override class var tableName: String { "evo_note" }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        migrateCalls.withLock { $0.append("\(old)->\(new)") }
        return []
    }
}

// evo_tag: indexes added and dropped to match the declarations.
final class EvoTagV1: Model {
    @Column var name: String?
    @Column var email: String?
    override class var tableName: String { "evo_tag" }
    override class var indexes: [Index] { [Index("name"), Index("email", unique: true)] }
}

final class EvoTagV2: Model {
    @Column var name: String?
    @Column var email: String?
    override class var tableName: String { "evo_tag" }
    override class var indexes: [Index] { [Index("name", "email")] }
}

// evo_person: a column renamed and a plain column dropped.
final class EvoPersonV1: Model {
    @Column var name: String?
    @Column var nick: String?
    @Column var city: String?
    override class var tableName: String { "evo_person" }
}

final class EvoPersonV2: Model {
    @Column var fullName: String?
    @Column var city: String?
    override class var tableName: String { "evo_person" }
    override class var renamedColumns: [String: String] { ["name": "fullName"] }
    override class var droppedColumns: [String] { ["nick"] }
}

// evo_acct: dropping a UNIQUE column (ALTER TABLE DROP COLUMN refuses it: table rebuild) and an
// indexed one.
final class EvoAcctV1: Model {
    @Column var code: String?
    @Column var name: String?
    @Column var city: String?
    @Column var qty: Int = 0
    override class var tableName: String { "evo_acct" }
    override class func constraint(for column: String) -> String? { column == "code" ? "UNIQUE" : nil }
    override class var indexes: [Index] { [Index("name"), Index("city")] }
}

final class EvoAcctV2: Model {
    @Column var city: String?
    @Column var qty: Int = 0
    override class var tableName: String { "evo_acct" }
    override class var droppedColumns: [String] { ["code", "name"] }
    override class var indexes: [Index] { [Index("city")] }
}

// evo_down: a table at version 2, then code that declares version 1.
final class EvoDownV2: Model {
    @Column var name: String?
    @Column var extra: String?
    override class var tableName: String { "evo_down" }
    override class var version: Int { 2 }
}

final class EvoDownV1: Model {
    @Column var name: String?
    @Column var other: String?
    override class var tableName: String { "evo_down" }
    override class var indexes: [Index] { [Index("name")] }
}

/// Registered beside the downgrading model: its table must not be created either.
final class EvoDownBystander: Model {
    @Column var name: String?
    override class var tableName: String { "evo_down_bystander" }
}

// Wrong declarations.
struct EvoPlainStruct {
    var x = 1
}

final class EvoBadColumn: Model {
    @Column var name: String?
    @Column var plain: EvoPlainStruct?
    override class var tableName: String { "evo_bad_column" }
}

final class EvoBadIndex: Model {
    @Column var name: String?
    override class var tableName: String { "evo_bad_index" }
    override class var indexes: [Index] { [Index("nosuchcolumn")] }
}

final class EvoInnocent: Model {
    @Column var name: String?
    override class var tableName: String { "evo_innocent" }
}

/// Records the order in which migration steps ran.
final class EvoRecorder: Sendable {
    private let items = Mutex<[Int]>([])
    func append(_ step: Int) { items.withLock { $0.append(step) } }
    var steps: [Int] { items.withLock { $0 } }
}

struct EvoStepError: Error {}

// MARK: - Helpers

/// A database file of its own, in an isolated registry; the test's own context is stopped so
/// that each `session` can start a fresh "main" on the file.
private func withEvoFile<T>(_ engine: Engine = .sqlite, _ body: (TestDatabase) throws -> T) throws -> T {
    try withDatabase(engine: engine) { t throws in
        t.context.stop()
        return try body(t)
    }
}

/// Starts a fresh context "main" on the test's file with `models` registered and `migrations`
/// declared (in the order given), runs `body`, stops it. Throws what `start()` throws.
private func session<T>(_ t: TestDatabase, _ models: [Model.Type] = [],
                        migrations: [(Int, @Sendable (Db) throws -> Void)] = [],
                        log: SqlLog? = nil,
                        _ body: (Db) throws -> T) throws -> T {
    var options = DbContext.Options()
    if let log { options.onSql = { log.append($0.sql) } }
    let context = try t.reopen(options: options)
    for model in models { context.register(model) }
    for (version, step) in migrations { context.migration(version: version, step) }
    try context.start()
    defer { context.stop() }
    return try body(Db.use("main"))
}

/// Starts and stops a context on the file; throws what `start()` throws.
private func start(_ t: TestDatabase, _ models: [Model.Type] = [], migrations: [(Int, @Sendable (Db) throws -> Void)] = []) throws {
    try session(t, models, migrations: migrations) { _ throws in }
}

/// Everything observable about a table and the schema: rows, columns, sqlite_master, bookkeeping, user_version.
private struct EvoSnapshot: Equatable {
    var rows: [String]
    var columns: [String]
    var master: [String]
    var bookkeeping: [String]
    var userVersion: Int
}

private func snapshot(_ db: Db, table: String) throws -> EvoSnapshot {
    let sqlite = db.testEngine == .sqlite
    return EvoSnapshot(
        rows: try db.find("select * from \(table) order by id").map(\.description),
        columns: sqlite ? try db.find("pragma table_info(\(table))").map(\.description)
            : try db.find("select column_name, data_type, is_nullable, column_default from information_schema.columns where table_schema = current_schema() and table_name = ? order by ordinal_position", table).map(\.description),
        master: sqlite ? try db.find("select type, name, tbl_name, sql from sqlite_master order by name").map(\.description)
            : try db.find("select c.relname::text as name, c.relkind::text as kind, coalesce(pg_get_indexdef(c.oid), '') as def from pg_class c where c.relnamespace = current_schema()::regnamespace order by 1").map(\.description),
        bookkeeping: try db.find("select * from dicrecord_schema order by table_name").map(\.description),
        userVersion: try userVersion(db))
}

private func columnNames(_ db: Db, _ table: String) throws -> [String] {
    try db.onReader { try $0.columnNames(of: table) }
}

private func storedVersion(_ db: Db, _ table: String) throws -> Int? {
    try db.queryInt("select version from dicrecord_schema where table_name = ?", table)
}

private func tableExists(_ db: Db, _ table: String) throws -> Bool {
    try db.onReader { try $0.tableExists(table) }
}

/// Index name → unique flag, for the indexes of `table` made by CREATE INDEX (not those of keys and constraints).
private func indexList(_ db: Db, _ table: String) throws -> [String: Bool] {
    var result: [String: Bool] = [:]
    let sql = db.testEngine == .sqlite
        ? "select name, \"unique\" as u from pragma_index_list(?) where origin = 'c'"
        : """
          select c.relname::text as name, i.indisunique as u from pg_index i join pg_class c on c.oid = i.indexrelid
          where i.indrelid = to_regclass(?) and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
          """
    for row in try db.find(sql, table) {
        let name: String? = row["name"]
        let unique: Int? = row["u"]
        if let name { result[name] = unique == 1 }
    }
    return result
}

/// The index's definition as the database keeps it.
private func indexSQL(_ db: Db, _ name: String) throws -> String? {
    db.testEngine == .sqlite ? try db.queryString("select sql from sqlite_master where name = ?", name)
        : try db.queryString("select indexdef from pg_indexes where schemaname = current_schema() and indexname = ?", name)
}

private func userVersion(_ db: Db) throws -> Int {
    try db.onWriter { try $0.databaseVersion() }
}

/// 100 rows of v1 (`name` "item<i>", `qty` i) saved through the model.
private func fillItems<M: Model>(_ type: M.Type, _ db: Db, set: (M, Int) -> Void) throws {
    try db.transaction { _ throws in
        for i in 0..<100 {
            let model = M()
            set(model, i)
            try model.save()
        }
    }
}

// MARK: - Tests

// Serialized: the models count their migrate calls in statics, which the engines' cases share.
@Suite("Schema evolution", .serialized)
struct SchemaEvolutionTests {
    // 1. A version bump adds the column, runs migrate(1, 2) once, keeps the rows.
    @Test(arguments: Engine.available) func versionBumpAddsTheColumnAndMigratesOnce(engine: Engine) throws {
        EvoItemV2.migrateCalls.withLock { $0 = [] }
        try withEvoFile(engine) { t throws in
            try session(t, [EvoItemV1.self]) { db throws in
                try fillItems(EvoItemV1.self, db) { m, i in m.name = "item\(i)"; m.qty = i }
                #expect(try EvoItemV1.dao.count() == 100)
                #expect(try columnNames(db, "evo_item") == ["id", "name", "qty"])
                #expect(try storedVersion(db, "evo_item") == 1)
            }
            #expect(EvoItemV2.migrateCalls.withLock { $0 }.isEmpty)

            try session(t, [EvoItemV2.self]) { db throws in
                #expect(try columnNames(db, "evo_item") == ["id", "name", "qty", "score"])
                #expect(EvoItemV2.migrateCalls.withLock { $0 } == ["1->2"])
                let rows = try EvoItemV2.dao.find("select * from evo_item order by id")
                #expect(rows.count == 100)
                #expect(rows.map { "\($0.id ?? -1)|\($0.name ?? "nil")|\($0.qty)|\($0.score.map(String.init) ?? "nil")" }
                        == (0..<100).map { "\($0 + 1)|item\($0)|\($0)|\($0 * 10)" })
                #expect(try storedVersion(db, "evo_item") == 2)
                #expect(try db.queryString("select model from dicrecord_schema where table_name = 'evo_item'")?.hasSuffix("EvoItemV2") == true)
            }

            try session(t, [EvoItemV2.self]) { db throws in
                #expect(EvoItemV2.migrateCalls.withLock { $0 } == ["1->2"])
                #expect(try storedVersion(db, "evo_item") == 2)
                #expect(try db.queryInt("select count(*) from evo_item where score = qty * 10") == 100)
            }
        }
    }

    // 1b. A table created at version 2 gets migrate(from: 0, to: 2), once.
    @Test(arguments: Engine.available) func aTableCreatedAtAVersionMigratesFromZero(engine: Engine) throws {
        EvoFreshV2.migrateCalls.withLock { $0 = [] }
        try withEvoFile(engine) { t throws in
            try start(t, [EvoFreshV2.self])
            try session(t, [EvoFreshV2.self]) { db throws in
                #expect(EvoFreshV2.migrateCalls.withLock { $0 } == ["0->2"])
                #expect(try storedVersion(db, "evo_fresh") == 2)
            }
        }
    }

    // 2. A failing migrate rolls back everything of that start: columns, rows, version, indexes.
    @Test(arguments: Engine.available) func aFailingMigrationLeavesTheDatabaseExactlyAsItWas(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoStockV1.self]) { db throws in
                try fillItems(EvoStockV1.self, db) { m, i in m.name = "stock\(i)"; m.qty = i % 7 }
            }
            try start(t, [EvoStockV2.self])
            let before = try session(t) { db throws in try snapshot(db, table: "evo_stock") }
            #expect(before.rows.count == 100)
            #expect(before.master.contains { $0.contains("dicrecord_evo_stock_name") })

            let error = #expect(throws: DatabaseError.self) {
                try start(t, [EvoStockV3.self])
            }
            #expect(error?.message.contains("EvoStockV3.migrate(from: 2, to: 3) failed") == true, "\(String(describing: error))")
            #expect(error?.message.contains("nosuchtable") == true)

            try session(t) { db throws in
                let after = try snapshot(db, table: "evo_stock")
                #expect(after == before)
                #expect(try columnNames(db, "evo_stock") == ["id", "name", "qty", "score"])
                #expect(try storedVersion(db, "evo_stock") == 2)
                #expect(try indexList(db, "evo_stock") == ["dicrecord_evo_stock_name": false])
                #expect(try db.queryInt("select count(*) from evo_stock where score = qty + 1000") == 100)
                #expect(try db.queryInt("select sum(qty) from evo_stock") == (0..<100).map { $0 % 7 }.reduce(0, +))
            }
        }
    }

    // 3. A column declared without a version bump is added at start (no migrate).
    @Test(arguments: Engine.available) func aColumnAddedWithoutAVersionBumpIsAdded(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoNoteV1.self]) { db throws in
                for i in 0..<5 {
                    let n = EvoNoteV1(); n.title = "note\(i)"; try n.save()
                }
                #expect(try columnNames(db, "evo_note") == ["id", "title"])
            }
            try session(t, [EvoNoteV1Plus.self]) { db throws in
                #expect(try columnNames(db, "evo_note") == ["id", "title", "pinned", "rank"])
                if t.engine == .sqlite {
                    let pinned = try #require(try db.findFirst("select * from pragma_table_info('evo_note') where name = 'pinned'"))
                    #expect(pinned["notnull"] as Int? == 1)
                    #expect(pinned["dflt_value"] as String? == "0")
                } else {
                    let pinned = try #require(try db.findFirst("select is_nullable, column_default from information_schema.columns where table_schema = current_schema() and table_name = 'evo_note' and column_name = 'pinned'"))
                    #expect(pinned["is_nullable"] as String? == "NO")
                    #expect(pinned["column_default"] as String? == "0")
                }
                let notes = try EvoNoteV1Plus.dao.find("select * from evo_note order by id")
                #expect(notes.map { $0.title ?? "nil" } == (0..<5).map { "note\($0)" })
                #expect(notes.allSatisfy { $0.pinned == false && $0.rank == nil })
                #expect(try storedVersion(db, "evo_note") == 1)
                #expect(EvoNoteV1Plus.migrateCalls.withLock { $0 }.isEmpty)
                let n = EvoNoteV1Plus(); n.title = "new"; n.pinned = true; n.rank = 3
                try n.save()
                let found = try #require(try EvoNoteV1Plus.dao.findById(n.id))
                #expect(found.pinned == true && found.rank == 3)
            }
        }
    }

    // 4. Declared indexes are created, undeclared dicrecord_ ones dropped, the user's kept.
    @Test(arguments: Engine.available) func indexesFollowTheDeclarations(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoTagV1.self]) { db throws in
                #expect(try indexList(db, "evo_tag") == ["dicrecord_evo_tag_name": false, "dicrecord_evo_tag_unique_email": true])
                #expect(try indexSQL(db, "dicrecord_evo_tag_unique_email")?.contains("UNIQUE") == true)
                _ = try db.update("create index my_tag_name on evo_tag(name)")
                let a = EvoTagV1(); a.name = "a"; a.email = "same@x"; try a.save()
                let b = EvoTagV1(); b.name = "b"; b.email = "same@x"
                let error = #expect(throws: DatabaseError.self) { try b.save() }
                #expect(error?.resultCode == 19)
                #expect(try EvoTagV1.dao.count() == 1)
            }
            try session(t, [EvoTagV2.self]) { db throws in
                #expect(try indexList(db, "evo_tag") == ["dicrecord_evo_tag_name_email": false, "my_tag_name": false])
                let sql = try indexSQL(db, "dicrecord_evo_tag_name_email")
                #expect(sql?.contains(db.testEngine == .sqlite ? #"("name", "email")"# : "(name, email)") == true, "\(sql ?? "nil")")
                // No unique key on email any more.
                let b = EvoTagV2(); b.name = "b"; b.email = "same@x"
                #expect(try b.save())
                #expect(try EvoTagV2.dao.count() == 2)
            }
            // Restarting with the same declarations changes nothing.
            try session(t, [EvoTagV2.self]) { db throws in
                #expect(try indexList(db, "evo_tag") == ["dicrecord_evo_tag_name_email": false, "my_tag_name": false])
            }
        }
    }

    // 5a. renamedColumns keeps the data under the new name; droppedColumns removes a column.
    @Test(arguments: Engine.available) func renameAndDropColumns(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoPersonV1.self]) { _ throws in
                for i in 0..<10 {
                    let p = EvoPersonV1(); p.name = "name\(i)"; p.nick = "nick\(i)"; p.city = "city\(i)"; try p.save()
                }
            }
            try session(t, [EvoPersonV2.self]) { db throws in
                #expect(try columnNames(db, "evo_person") == ["id", "fullName", "city"])
                let people = try EvoPersonV2.dao.find("select * from evo_person order by id")
                #expect(people.map { "\($0.id ?? -1)|\($0.fullName ?? "nil")|\($0.city ?? "nil")" }
                        == (0..<10).map { "\($0 + 1)|name\($0)|city\($0)" })
                #expect(people.allSatisfy { !$0.columnNames.contains("nick") && !$0.columnNames.contains("name") })
            }
            // A second start with the same declarations is a no-op.
            try session(t, [EvoPersonV2.self]) { db throws in
                #expect(try columnNames(db, "evo_person") == ["id", "fullName", "city"])
                #expect(try db.queryInt("select count(*) from evo_person where \"fullName\" like 'name%'") == 10)
            }
        }
    }

    // 5b. Dropping a UNIQUE column needs the table rebuild; an indexed one loses its index first.
    @Test(arguments: Engine.available) func droppingUniqueAndIndexedColumnsKeepsTheRest(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            var ids: [Int] = []
            try session(t, [EvoAcctV1.self]) { db throws in
                for i in 0..<20 {
                    let a = EvoAcctV1(); a.code = "C\(i)"; a.name = "n\(i)"; a.city = "city\(i % 3)"; a.qty = i
                    try a.save()
                }
                // Gaps in the ids, so that "ids kept" means something.
                _ = try db.update("delete from evo_acct where id % 4 = 0")
                ids = try db.query("select id from evo_acct order by id", as: Int.self).compactMap { $0 }
                #expect(try indexList(db, "evo_acct") == ["dicrecord_evo_acct_name": false, "dicrecord_evo_acct_city": false])
            }
            let log = SqlLog()
            try session(t, [EvoAcctV2.self], log: log) { db throws in
                #expect(try columnNames(db, "evo_acct") == ["id", "city", "qty"])
                let rows = try EvoAcctV2.dao.find("select * from evo_acct order by id")
                #expect(rows.map { $0.id ?? -1 } == ids)
                #expect(rows.map { "\($0.id ?? -1)|\($0.city ?? "nil")|\($0.qty)" }
                        == ids.map { "\($0)|city\(($0 - 1) % 3)|\($0 - 1)" })
                #expect(try indexList(db, "evo_acct") == ["dicrecord_evo_acct_city": false])
                #expect(try tableExists(db, "evo_acct_dicrecord_rebuild") == false)
                // The code values may now repeat (no UNIQUE left); new rows get new ids.
                let a = EvoAcctV2(); a.city = "new"; try a.save()
                #expect((a.id ?? 0) > (ids.last ?? 0))
            }
            // SQLite rebuilds the table to drop a UNIQUE column; PostgreSQL drops it in place.
            #expect(log.statements.contains { $0.contains("evo_acct_dicrecord_rebuild") } == (t.engine == .sqlite), "the rebuild path is SQLite's")
        }
    }

    // 5c. A rebuild keeps AUTOINCREMENT's promise: an id deleted before it is never reused.
    @Test(arguments: Engine.available) func aRebuildDoesNotReuseDeletedIds(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoAcctV1.self]) { db throws in
                for i in 0..<10 {
                    let a = EvoAcctV1(); a.code = "C\(i)"; a.qty = i; try a.save()
                }
                _ = try db.update("delete from evo_acct where id > 5")
            }
            try session(t, [EvoAcctV2.self]) { _ throws in
                let a = EvoAcctV2(); a.qty = 99; try a.save()
                #expect(a.id == 11, "ids 6…10 were handed out before the rebuild; AUTOINCREMENT must not reuse them")
            }
        }
    }

    // 5d. A rebuild keeps the user's own indexes on the columns that stay.
    @Test(arguments: Engine.available) func aRebuildKeepsTheUsersOwnIndexes(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoAcctV1.self]) { db throws in
                let a = EvoAcctV1(); a.code = "C"; a.city = "x"; try a.save()
                _ = try db.update("create index my_acct_qty on evo_acct(qty)")
            }
            try session(t, [EvoAcctV2.self]) { db throws in
                #expect(try columnNames(db, "evo_acct") == ["id", "city", "qty"])
                let indexes = try indexList(db, "evo_acct")
                #expect(indexes == ["dicrecord_evo_acct_city": false, "my_acct_qty": false])
            }
        }
    }

    // 6. A model declaring a lower version than the stored one is refused; nothing changes.
    @Test(arguments: Engine.available) func aDowngradeIsRefusedAndChangesNothing(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t, [EvoDownV2.self]) { _ throws in
                for i in 0..<10 {
                    let d = EvoDownV2(); d.name = "d\(i)"; d.extra = "e\(i)"; try d.save()
                }
            }
            let before = try session(t) { db throws in try snapshot(db, table: "evo_down") }
            let error = #expect(throws: DicRecordError.self) {
                try start(t, [EvoDownBystander.self, EvoDownV1.self])
            }
            #expect(error?.kind == .schemaVersion)
            #expect(error?.message.contains("EvoDownV1") == true, "\(String(describing: error))")
            try session(t) { db throws in
                #expect(try snapshot(db, table: "evo_down") == before)
                #expect(try storedVersion(db, "evo_down") == 2)
                #expect(try columnNames(db, "evo_down") == ["id", "name", "extra"])
                #expect(try tableExists(db, "evo_down_bystander") == false)
                #expect(try indexList(db, "evo_down").isEmpty)
            }
        }
    }

    // 7a. Database migrations run in order, once, and only the new ones.
    @Test(arguments: Engine.available) func databaseMigrationsRunInOrderAndOnce(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            let recorder = EvoRecorder()
            let step1: (Int, @Sendable (Db) throws -> Void) = (1, { db throws in
                recorder.append(1)
                _ = try db.update(db.ddl("create table evo_log(id integer primary key, line text)"))
            })
            let step2: (Int, @Sendable (Db) throws -> Void) = (2, { db throws in
                recorder.append(2)
                _ = try db.update(db.ddl("alter table evo_log add column at real"))
                _ = try db.update("insert into evo_log(line, at) values ('two', 2.5)")
            })
            let step3: (Int, @Sendable (Db) throws -> Void) = (3, { db throws in
                recorder.append(3)
                _ = try db.update("insert into evo_log(line, at) values ('three', 3.5)")
            })
            // Declared out of order: run in version order.
            try session(t, migrations: [step2, step1]) { db throws in
                #expect(recorder.steps == [1, 2])
                #expect(try userVersion(db) == 2)
                #expect(try columnNames(db, "evo_log") == ["id", "line", "at"])
            }
            try session(t, migrations: [step1, step2]) { db throws in
                #expect(recorder.steps == [1, 2])
                #expect(try userVersion(db) == 2)
            }
            try session(t, migrations: [step1, step2, step3]) { db throws in
                #expect(recorder.steps == [1, 2, 3])
                #expect(try userVersion(db) == 3)
                #expect(try db.query("select line from evo_log order by id", as: String.self) == ["two", "three"])
            }
        }
    }

    // 7b. A failing step rolls back only itself; the steps before it stay.
    @Test(arguments: Engine.available) func aFailingDatabaseMigrationRollsBackOnlyItsOwnStep(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            let recorder = EvoRecorder()
            let steps: [(Int, @Sendable (Db) throws -> Void)] = [
                (1, { db throws in
                    recorder.append(1)
                    _ = try db.update(db.ddl("create table evo_log(id integer primary key, line text)"))
                }),
                (2, { db throws in
                    recorder.append(2)
                    _ = try db.update("insert into evo_log(line) values ('two')")
                }),
                (3, { db throws in
                    recorder.append(3)
                    _ = try db.update(db.ddl("alter table evo_log add column broken text"))
                    _ = try db.update("insert into evo_log(line) values ('three')")
                    _ = try db.update("insert into nosuchtable values (1)")
                }),
                (4, { _ throws in recorder.append(4) }),
            ]
            let error = #expect(throws: DatabaseError.self) { try start(t, migrations: steps) }
            #expect(error?.message.contains("migration 3 failed") == true, "\(String(describing: error))")
            #expect(recorder.steps == [1, 2, 3])
            try session(t) { db throws in
                #expect(try userVersion(db) == 2)
                #expect(try columnNames(db, "evo_log") == ["id", "line"])
                #expect(try db.query("select line from evo_log order by id", as: String.self) == ["two"])
            }
            // A step that throws a Swift error: the same, and the error comes through.
            let swiftStep: [(Int, @Sendable (Db) throws -> Void)] = [
                steps[0], steps[1],
                (3, { db throws in
                    recorder.append(30)
                    _ = try db.update("insert into evo_log(line) values ('thirty')")
                    throw EvoStepError()
                }),
            ]
            #expect(throws: EvoStepError.self) { try start(t, migrations: swiftStep) }
            #expect(recorder.steps == [1, 2, 3, 30])
            try session(t) { db throws in
                #expect(try userVersion(db) == 2)
                #expect(try db.query("select line from evo_log order by id", as: String.self) == ["two"])
            }
        }
    }

    // 7c. A file whose user_version is above the last step is refused.
    @Test(arguments: Engine.available) func aNewerUserVersionIsRefused(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            try session(t) { db throws in try db.onWriter { try $0.setDatabaseVersion(5) } }
            let recorder = EvoRecorder()
            let steps: [(Int, @Sendable (Db) throws -> Void)] = (1...3).map { v in
                (v, { db throws in
                    recorder.append(v)
                    _ = try db.update(db.ddl("create table evo_step\(v)(id integer primary key)"))
                })
            }
            let error = #expect(throws: DicRecordError.self) { try start(t, migrations: steps) }
            #expect(error?.kind == .schemaVersion)
            #expect(recorder.steps.isEmpty)
            try session(t) { db throws in
                #expect(try userVersion(db) == 5)
                #expect(try (1...3).allSatisfy { try !tableExists(db, "evo_step\($0)") })
            }
        }
    }

    // 7d. Two steps with the same version: start throws, nothing runs.
    @Test(arguments: Engine.available) func duplicateMigrationVersionsAreRefused(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            let recorder = EvoRecorder()
            let steps: [(Int, @Sendable (Db) throws -> Void)] = [
                (1, { _ throws in recorder.append(1) }),
                (2, { _ throws in recorder.append(2) }),
                (2, { _ throws in recorder.append(22) }),
            ]
            let error = #expect(throws: DicRecordError.self) { try start(t, migrations: steps) }
            #expect(error?.message.contains("version 2") == true, "\(String(describing: error))")
            #expect(recorder.steps.isEmpty)
            try session(t) { db throws in #expect(try userVersion(db) == 0) }
        }
    }

    // 8a. A column of a type with no converter that is not Codable: invalidModel, no table.
    @Test(arguments: Engine.available) func aColumnWithNoConverterIsAnInvalidModel(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            let error = #expect(throws: DicRecordError.self) { try start(t, [EvoInnocent.self, EvoBadColumn.self]) }
            #expect(error?.kind == .invalidModel)
            #expect(error?.message.contains("EvoBadColumn") == true, "\(String(describing: error))")
            #expect(error?.message.contains("plain") == true)
            try session(t) { db throws in
                #expect(try tableExists(db, "evo_bad_column") == false)
                #expect(try tableExists(db, "evo_innocent") == false)
            }
        }
    }

    // 8b. An index on an undeclared column: invalidModel, no table.
    @Test(arguments: Engine.available) func anIndexOnAnUndeclaredColumnIsAnInvalidModel(engine: Engine) throws {
        try withEvoFile(engine) { t throws in
            let error = #expect(throws: DicRecordError.self) { try start(t, [EvoBadIndex.self]) }
            #expect(error?.kind == .invalidModel)
            #expect(error?.message.contains("EvoBadIndex") == true, "\(String(describing: error))")
            #expect(error?.message.contains("nosuchcolumn") == true)
            try session(t) { db throws in
                #expect(try tableExists(db, "evo_bad_index") == false)
            }
        }
    }
}
