// The DicRecord tour: `swift run tour` runs it on a temporary folder; `swift run tour DIR`
// keeps the databases in DIR so you can open them with the sqlite3 CLI afterwards.
import DicRecord
import Foundation

/// A user type with its own converter: money stored as INTEGER cents, never as a lossy REAL.
struct Money: Sendable, Equatable, CustomStringConvertible {
    var cents: Int64
    var description: String { String(format: "¥%.2f", Double(cents) / 100) }
}

struct MoneyConverter: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: Money) throws -> DatabaseValue { .integer(value.cents) }
    func decode(_ value: DatabaseValue) throws -> Money {
        guard case .integer(let cents) = value else {
            throw ConversionError.cannotDecode(value, to: Money.self, "expected INTEGER cents")
        }
        return Money(cents: cents)
    }
}

/// Typed models: the tables are created (and later upgraded) from these declarations.
final class Mentor: Model {
    @Column var name: String?
    @Children(foreignKey: "mentor_id") var pupils: [Pupil]
}

final class Pupil: Model {
    @Column var name: String?
    @Column var age: Int = 10
    @Column var bio: String?
    @Column var hobbies: [String]?            // Codable, no converter: JSON text
    @Column var createdAt: Date?              // stamped on insert
    @Reference var mentor: Mentor?            // column mentor_id, loaded lazily
    override class var indexes: [Index] { [Index("name")] }
    override class var searchColumns: [String] { ["name", "bio"] }
}

func say(_ text: String) { print("\n▸ " + text) }

/// The synchronous API, as plain threads and synchronous code use it. (In async code the
/// compiler picks the `async` twins of the same calls: see `asyncTour()`.)
func syncTour(folder: URL) throws {
    say("Converters: Date, URL, Color are built in; Money gets a converter of our own.")
    Converters.register(MoneyConverter())
    try Db.update("""
        create table teacher(id integer primary key autoincrement, name text not null, born real,
                             homepage text, favorite integer, salary integer)
        """)
    let born = Date(timeIntervalSince1970: 1_020_873_600)  // 2002-05-08
    try Db.update("insert into teacher(name, born, homepage, favorite, salary) values (?, ?, ?, ?, ?)",
                  "张老师", born, URL(string: "https://example.com/张"), Color(red: 200, green: 30, blue: 30), Money(cents: 1_234_567))
    let stored = try Db.findFirst("select typeof(born) born, typeof(homepage) homepage, typeof(favorite) favorite, typeof(salary) salary from teacher")
    print("  stored as:", stored?.description ?? "-")

    say("Records: untyped rows, typed on read. Nothing converts until you ask.")
    if let t = try Db.findFirst("select * from teacher where name = ?", "张老师") {
        let name: String? = t.name
        let date: Date? = t.born
        let home: URL? = t.homepage
        let color: Color? = t.favorite
        let salary: Money? = t.salary
        print("  name:", name ?? "-", "| born:", date.map { "\($0)" } ?? "-", "| homepage:", home?.absoluteString ?? "-")
        print("  favorite:", color.map { "rgba(\($0.red), \($0.green), \($0.blue), \($0.alpha))" } ?? "-", "| salary:", salary?.description ?? "-")
        t.salary = Money(cents: 1_500_000)
        print("  modified after a raise:", t.modifiedColumns)
        try Db.update("teacher", t)
        print("  saved; salary is now", try Db.queryFirst("select salary from teacher where id = ?", t.id, as: Money.self)?.description ?? "-")
    }

    say("A batch of 3,000 inserts, atomic, in one transaction.")
    try Db.update("create table student(id integer primary key autoincrement, name text, age integer, teacher_id integer)")
    let rows: [[DatabaseArgument]] = (0..<3_000).map { i in ["学生\(i)", 10 + i % 10, 1] }
    let started = Date()
    let counts = try Db.batch("insert into student(name, age, teacher_id) values (?, ?, ?)", rows)
    print("  inserted \(counts.reduce(0, +)) rows in \(String(format: "%.1f", Date().timeIntervalSince(started) * 1000)) ms")

    say("find, findFirst and paginate, in the PSDb/JFinal style.")
    let teens = try Db.find("select * from student where age between ? and ? limit 3", 13, 15)
    print("  first three aged 13–15:", teens.compactMap { $0.name as String? })
    let first = try Db.findFirst("select s.*, t.name t_name from student s join teacher t on s.teacher_id = t.id")
    print("  a join:", first?.name ?? "-", "taught by", first?["t_name"] ?? "-")
    let page = try Db.paginate(3, 20, "select *", "from student where name like ? order by id", "学生1%")
    print("  page \(page.pageNumber) of \(page.totalPage), \(page.totalRow) rows in all, \(page.list.count) here; last page? \(page.isLastPage)")

    say("A transaction that changes its mind: everything inside rolls back.")
    let before = try Db.queryInt("select count(*) from student") ?? 0
    try Db.tx { db in
        try db.update("delete from student where age < ?", 15)
        print("  inside: \(try db.queryInt("select count(*) from student") ?? 0) students left")
        return false
    }
    print("  after rollback: \(try Db.queryInt("select count(*) from student") ?? 0) (was \(before))")

    say("Db.use(\"backup\"): the same API on another config.")
    try Db.use("backup").update("create table teacher(id integer primary key, name text, age integer)")
    let copy = try Record(["id": 11, "name": "李老师", "age": 40])
    try Db.use("backup").save("teacher", copy)
    if let t = try Db.use("backup").findFirst("select * from teacher where id = ?", 11) {
        print("  backup has:", t, "| JSON:", try t.toJSON())
    }
    print("  main has \(try Db.queryInt("select count(*) from teacher") ?? 0) teacher(s); backup has \(try Db.use("backup").queryInt("select count(*) from teacher") ?? 0)")

    say("Models: declared columns; 'school' creates their tables at start.")
    let school = try DbContext(path: folder.appendingPathComponent("db/school.sqlite").path, configName: "school")
    school.register(Mentor.self, Pupil.self)
    try school.start()
    print("  ", try Db.use("school").queryString("select sql from sqlite_master where name = 'Pupil'") ?? "-")
    let mentor = Mentor(); mentor.name = "王老师"
    try mentor.save()
    for (name, age, bio) in [("小明", 12, "likes chess and swift"), ("小红", 13, "plays the violin"), ("小刚", 11, "writes swift every day")] {
        let p = Pupil(); p.name = name; p.age = age; p.bio = bio; p.hobbies = ["reading"]; p.mentor = mentor
        try p.save()
    }
    let pupils = try Pupil.dao.findByCondition("age >= ? order by age", 12)
    try Pupil.dao.preload(\.mentor, in: pupils)       // one query for every mentor
    print("  aged 12+:", pupils.map { "\($0.name ?? "-") (\($0.age), mentor \($0.mentor?.name ?? "-"))" })
    let oldest: Int? = try Pupil.dao.max("age")
    print("  \(try Pupil.dao.count()) pupils, oldest \(oldest ?? 0), average age \(try Pupil.dao.avg("age") ?? 0)")
    print("  \(mentor.name ?? "-") mentors \(mentor.pupils.count); full-text search for 'swift':", try Pupil.dao.search("swift").compactMap(\.name))
    school.stop()

    say("Bad input is a thrown error that says where, never a crash.")
    do {
        _ = try Db.find("select * from student where age > ? and name = ?", 1)
    } catch {
        print("  \(error)")
    }
    do {
        _ = try Db.use("nope").find("select 1")
    } catch {
        print("  \(error)")
    }
}

/// The same API from async code: every call has an `async` twin that runs on DicRecord's own
/// threads, so waiting for SQLite never blocks Swift's cooperative pool.
func asyncTour() async throws {
    say("Async: the same calls with await; an async transaction, and reads from concurrent tasks.")
    let teens = try await Db.find("select * from student where age = ? limit 2", 15)
    print("  two 15-year-olds:", teens.compactMap { $0.name as String? })
    try await Db.tx { db in                    // every call of this task on "main" joins it
        try await db.update("update student set age = age + 1 where age = ?", 19)
        try await db.update("insert into student(name, age, teacher_id) values (?, ?, ?)", "新同学", 10, 1)
        return true                            // commit; false or a throw rolls back
    }
    let counts = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
        for age in [10, 19, 20] {
            group.addTask { (age, try await Db.queryInt("select count(*) from student where age = ?", age) ?? 0) }
        }
        return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
    }
    print("  students aged 10, 19, 20 after the transaction:", [10, 19, 20].map { counts[$0] ?? 0 })
}

let arguments = CommandLine.arguments.dropFirst()
let keep = arguments.first.map { URL(fileURLWithPath: $0) }
let folder = keep ?? FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-tour-\(UUID().uuidString)")

do {
    say("Two contexts: 'main' and 'backup', each its own SQLite file (folders are created).")
    let main = try DbContext(path: folder.appendingPathComponent("db/database.sqlite").path)
    let backup = try DbContext(path: folder.appendingPathComponent("db/backup.sqlite").path, configName: "backup")
    try main.start()
    try backup.start()
    defer { backup.stop(); main.stop() }
    print("  main is", main.path)
    print("  backup is", backup.path)

    try syncTour(folder: folder)
    try await asyncTour()
    say("Done." + (keep != nil ? " The databases are in \(folder.path)/db." : ""))
    print("  More samples: swift run multi-database | custom-converter | migrations | relations")
} catch {
    FileHandle.standardError.write(Data("tour failed: \(error)\n".utf8))
    if keep == nil { try? FileManager.default.removeItem(at: folder) }
    exit(1)
}
if keep == nil { try? FileManager.default.removeItem(at: folder) }
