// Schema changes across releases, data kept: `swift run migrations`.
//
// The same database file is opened three times, as an app would be after two upgrades. Each
// "release" declares the book table its own way; at start DicRecord compares the declaration
// with the file and brings the table up to date in one transaction:
//   v1  title, author, isbn
//   v2  author renamed to writer (renamedColumns), a new column slug filled by migrate(from:to:)
//   v3  isbn dropped (droppedColumns), indexes on writer and slug
// Beside the model, a plain table (no model) evolves through the database's own numbered
// migrations, `context.migration(version:)`, tracked in PRAGMA user_version.
import DicRecord
import Foundation

// A model's declarations are static, so each release is its own class. They share one table.

/// Release 1.
final class BookV1: Model {
    @Column var title: String?
    @Column var author: String?
    @Column var isbn: String?
    override class var tableName: String { "book" }
}

/// Release 2: author is now writer (the data moves with it), and a new column slug is filled
/// for the existing rows when the stored version (1) is below the declared one (2).
final class BookV2: Model {
    @Column var title: String?
    @Column var writer: String?
    @Column var isbn: String?
    @Column var slug: String?
    override class var tableName: String { "book" }
    override class var version: Int { 2 }
    override class var renamedColumns: [String: String] { ["author": "writer"] }
    override class func migrate(from old: Int, to new: Int) -> [Sql] {
        // old is 0 when the table is created at this version: there are no rows to fill then.
        old >= 1 ? [Sql("update book set slug = lower(replace(title, ' ', '-')) where slug is null")] : []
    }
}

/// Release 3: isbn is gone, writer and slug are indexed (slug unique).
final class BookV3: Model {
    @Column var title: String?
    @Column var writer: String?
    @Column var slug: String?
    override class var tableName: String { "book" }
    override class var version: Int { 3 }
    override class var droppedColumns: [String] { ["isbn"] }
    override class var indexes: [Index] { [Index("writer"), Index("slug", unique: true)] }
}

struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw CheckFailed(description: "check failed: " + message()) }
}

func say(_ text: String) { print("\n▸ " + text) }

/// The database's own migrations for the plain `log` table, steps 1 through `last`. A release
/// declares every step so far; at start only those above the file's user_version run.
func declareLogMigrations(_ context: DbContext, through last: Int) {
    let steps: [@Sendable (Db) throws -> Void] = [
        { db in try db.update("create table log(id integer primary key, line text)") },
        { db in try db.update("alter table log add column level text not null default 'info'") },
        { db in try db.update("update log set level = 'warning' where line like '%!'") },
    ]
    for (index, step) in steps.prefix(last).enumerated() {
        context.migration(version: index + 1, step)
    }
}

/// Starts release `release` of the app on `path`: a fresh context with that release's model and
/// migrations. The caller stops it.
func startRelease(_ release: Int, path: String, model: Model.Type) throws -> DbContext {
    let context = try DbContext(path: path)
    context.register(model)
    declareLogMigrations(context, through: release)
    try context.start()            // migrations, then the model's table, all or nothing
    return context
}

/// Prints the table's columns, indexes, stored model version and rows.
func show(_ table: String) throws {
    let indexes = try Db.query("select name from sqlite_master where type = 'index' and tbl_name = ? and sql is not null order by name",
                               table, as: String.self).compactMap { $0 }
    let version = try Db.queryInt("select version from dicrecord_schema where table_name = ?", table)
    print("  \(table)(\(try columns(table).joined(separator: ", ")))  model version \(version.map(String.init) ?? "-")"
          + (indexes.isEmpty ? "" : "  indexes \(indexes)"))
    for row in try Db.find("select * from \(table) order by id") { print("    \(row)") }
}

/// Prints the plain table and the database's user_version.
func showLog() throws {
    print("  log(\(try columns("log").joined(separator: ", ")))  user_version \(try Db.queryInt("pragma user_version") ?? -1)")
    for row in try Db.find("select * from log order by id") { print("    \(row)") }
}

func columns(_ table: String) throws -> [String] {
    try Db.query("select name from pragma_table_info(?) order by cid", table, as: String.self).compactMap { $0 }
}

func run(in folder: URL) throws {
    let path = folder.appendingPathComponent("library.sqlite").path

    say("Release 1: the table is created from BookV1; log migration 1 creates the log table.")
    let v1 = try startRelease(1, path: path, model: BookV1.self)
    for (title, author, isbn) in [("The Swift Book", "Apple", "978-0"), ("SQLite Internals", "Hipp", "978-1")] {
        let book = BookV1(); book.title = title; book.author = author; book.isbn = isbn
        try book.save()
    }
    try Db.update("insert into log(line) values (?), (?)", "release 1 installed", "disk almost full!")
    try show("book")
    try showLog()
    v1.stop()

    say("Release 2: author renamed to writer, slug added and filled by migrate(from: 1, to: 2).")
    let v2 = try startRelease(2, path: path, model: BookV2.self)
    let added = BookV2(); added.title = "Server Side Swift"; added.writer = "Vapor"; added.slug = "server-side-swift"
    try added.save()                                          // release 2 code writes the new shape
    try show("book")
    try showLog()
    try check(try columns("book") == ["id", "title", "writer", "isbn", "slug"], "v2 columns")
    try check(try BookV2.dao.findById(1)?.writer == "Apple", "the renamed column keeps its data")
    try check(try BookV2.dao.findById(2)?.slug == "sqlite-internals", "migrate filled slug")
    try check(try Db.queryString("select level from log where id = 2") == "info", "log step 2 added level")
    v2.stop()

    say("Release 3: isbn dropped, writer and slug indexed; the rows stay.")
    let v3 = try startRelease(3, path: path, model: BookV3.self)
    try show("book")
    try showLog()
    try check(try columns("book") == ["id", "title", "writer", "slug"], "v3 columns")
    try check(try BookV3.dao.count() == 3, "every book kept")
    try check(try Db.queryString("select level from log where id = 2") == "warning", "log step 3 ran")
    // The unique index is enforced now.
    let duplicate = BookV3(); duplicate.title = "Copy"; duplicate.slug = "the-swift-book"
    do {
        try duplicate.save()
        throw CheckFailed(description: "check failed: a duplicate slug should be refused")
    } catch let error as DatabaseError {
        print("  a duplicate slug is refused: \(error.message)")
    }
    v3.stop()

    say("Starting the same release again changes nothing; older code is refused.")
    let again = try startRelease(3, path: path, model: BookV3.self)
    try check(try columns("book") == ["id", "title", "writer", "slug"], "a second start is a no-op")
    again.stop()
    do {
        let old = try startRelease(1, path: path, model: BookV1.self)
        old.stop()
        throw CheckFailed(description: "check failed: release 1 should be refused on this file")
    } catch let error as DicRecordError {
        print("  release 1:", error)                   // its log migrations stop at 1, the file is at 3
    }
    do {
        let old = try DbContext(path: path)           // the current log migrations, but BookV1
        old.register(BookV1.self)
        declareLogMigrations(old, through: 3)
        try old.start()
        old.stop()
        throw CheckFailed(description: "check failed: BookV1 should be refused on a version 3 table")
    } catch let error as DicRecordError {
        print("  BookV1:", error)
    }
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-migrations-\(UUID().uuidString)")
var failed = false
do {
    try run(in: folder)
    say("Done.")
} catch {
    FileHandle.standardError.write(Data("migrations failed: \(error)\n".utf8))
    failed = true
}
try? FileManager.default.removeItem(at: folder)
exit(failed ? 1 : 0)
