// Two databases side by side: `swift run multi-database`.
//
// A DbContext is one SQLite file under a config name. Here "main" holds the live data and
// "backup" a copy. It shows Db.main and the static Db methods, Db.use("backup"), a copy made in
// a transaction, that a transaction on one config never includes another config's work, and a
// config stopped and started again. Everything runs in a temporary folder that is removed at the end.
import DicRecord
import Foundation

/// A check that failed: thrown so that the sample exits non-zero with this message on stderr.
struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw CheckFailed(description: "check failed: " + message()) }
}

func say(_ text: String) { print("\n▸ " + text) }

/// The names in `table` of config `db`, in id order.
func names(_ db: Db, _ table: String) throws -> [String] {
    try db.query("select name from \(table) order by id", as: String.self).compactMap { $0 }
}

func run(in folder: URL) throws {
    say("Two contexts, two files. The one named \"main\" is the main config.")
    let main = try DbContext(path: folder.appendingPathComponent("live.sqlite").path)   // configName "main"
    let backup = try DbContext(path: folder.appendingPathComponent("backup.sqlite").path, configName: "backup")
    try main.start()
    defer { main.stop() }
    try backup.start()
    defer { backup.stop() }
    print("  main:  ", try Db.main.context().path)
    print("  backup:", try Db.use("backup").context().path)

    say("The static Db methods are shortcuts for Db.main: Db.update(...) == Db.main.update(...).")
    try Db.update("create table teacher(id integer primary key autoincrement, name text not null, subject text)")
    for (name, subject) in [("Ms. Li", "math"), ("Mr. Wang", "physics"), ("Ms. Zhao", "music")] {
        try Db.update("insert into teacher(name, subject) values (?, ?)", name, subject)
    }
    let teachers = try Db.find("select * from teacher order by id")            // static: the main config
    print("  Db.find on main:")
    for teacher in teachers { print("   ", teacher) }
    try check(try Db.main.queryInt("select count(*) from teacher") == 3, "main should hold 3 teachers")

    say("Db.use(\"backup\") is the same API on the other file. It has no teacher table yet.")
    let backupDb = Db.use("backup")
    print("  backup tables:", try backupDb.query("select name from sqlite_master where type = 'table'", as: String.self).compactMap { $0 })
    try backupDb.update("create table teacher(id integer primary key, name text not null, subject text)")

    say("Copy every row from main to backup inside one backup transaction: all rows or none.")
    let copied = try backupDb.transaction { db in
        var count = 0
        // `each` streams main's rows; each one is saved as it is (its id included) on backup.
        try Db.each("select * from teacher order by id") { row in
            try db.save("teacher", row)
            count += 1
            return true
        }
        return count
    }
    print("  copied \(copied) rows; backup now has", try names(backupDb, "teacher"))
    try check(try names(backupDb, "teacher") == names(Db.main, "teacher"), "backup should equal main after the copy")

    say("A transaction belongs to one config. Rolling back main's does not undo backup's work.")
    try Db.tx { db in
        try db.update("delete from teacher where subject = ?", "music")      // main: part of the tx
        try backupDb.update("insert into teacher(name, subject) values (?, ?)", "Mr. Chen", "art")   // backup: its own write
        print("  inside main's tx: main has \(try db.queryInt("select count(*) from teacher") ?? -1) teachers")
        return false                                                           // roll main back
    }
    let mainNames = try names(Db.main, "teacher")
    let backupNames = try names(backupDb, "teacher")
    print("  after the rollback: main has", mainNames)
    print("                      backup has", backupNames)
    try check(mainNames.count == 3, "main's delete should have been rolled back")
    try check(backupNames.contains("Mr. Chen"), "backup's insert is not part of main's transaction and stays")

    say("Stop a config: its name is free and Db.use(\"backup\") throws until it starts again.")
    backup.stop()
    do {
        _ = try backupDb.find("select * from teacher")
        throw CheckFailed(description: "check failed: a stopped config should throw")
    } catch let error as DicRecordError {
        print("  \(error)")
    }
    try backup.start()            // the same context, started again: the file is still there
    let again = try names(backupDb, "teacher")
    print("  started again; backup still has", again)
    try check(again == backupNames, "backup's rows should survive stop and start")

    say("Main is still main: Db.findFirst reads the live file.")
    let first = try Db.findFirst("select * from teacher where subject = ?", "music")
    print("  ", first.map { "\($0)" } ?? "-")
    try check(first?.name == "Ms. Zhao", "main should still have the music teacher")
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-multi-\(UUID().uuidString)")
var failed = false
do {
    try run(in: folder)
    say("Done.")
} catch {
    FileHandle.standardError.write(Data("multi-database failed: \(error)\n".utf8))
    failed = true
}
try? FileManager.default.removeItem(at: folder)
exit(failed ? 1 : 0)
