// Teachers and students: `swift run relations`.
//
// A student has one teacher (@Reference, stored in the column teacher_id); a teacher has many
// students (@Children, found by that foreign key). It shows what each access loads and how many
// SQL statements it costs (counted with DbContext.Options.onSql): lazy loading, the N+1 pattern
// and `preload` that avoids it, a join read into models with an extra column, and a count per
// teacher in SQL.
import DicRecord
import Foundation
import Synchronization

final class Teacher: Model {
    @Column var name: String?
    @Column var subject: String?
    @Children(foreignKey: "teacher_id") var students: [Student]   // a query on every access, never cached
    override class var tableName: String { "teacher" }
}

final class Student: Model {
    @Column var name: String?
    @Column var grade: Int = 1
    @Reference var teacher: Teacher?          // column teacher_id; loaded on first access, then kept
    override class var tableName: String { "student" }
}

/// Counts the statements a context runs; onSql calls it after each one, from any thread.
final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }

    /// Runs `body` and returns what it returned and how many statements it ran.
    func counting<T>(_ body: () throws -> T) rethrows -> (T, statements: Int) {
        let before = count.load(ordering: .relaxed)
        let result = try body()
        return (result, count.load(ordering: .relaxed) - before)
    }
}

struct CheckFailed: Error, CustomStringConvertible {
    let description: String
}

func check(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    guard condition else { throw CheckFailed(description: "check failed: " + message()) }
}

func say(_ text: String) { print("\n▸ " + text) }

func statements(_ n: Int) -> String { n == 1 ? "1 statement" : "\(n) statements" }

func run(in folder: URL) throws {
    let counter = StatementCounter()
    var options = DbContext.Options()
    options.onSql = { _ in counter.add() }            // the trace also has the SQL, arguments and duration
    let main = try DbContext(path: folder.appendingPathComponent("school.sqlite").path, options: options)
    main.register(Teacher.self, Student.self)
    try main.start()
    defer { main.stop() }
    say("Two models, two tables: the reference is the INTEGER column teacher_id; @Children adds none.")
    print("  student table:", try Db.queryString("select sql from sqlite_master where name = 'student'") ?? "-")

    say("Assigning a teacher sets the student's teacher_id.")
    var teachers: [String: Teacher] = [:]
    for (name, subject) in [("Ms. Li", "math"), ("Mr. Wang", "physics"), ("Ms. Zhao", "music")] {
        let teacher = Teacher(); teacher.name = name; teacher.subject = subject
        try teacher.save()
        teachers[name] = teacher
    }
    for (name, grade, teacherName) in [("Ann", 3, "Ms. Li"), ("Bob", 3, "Ms. Li"), ("Cai", 4, "Mr. Wang"),
                                       ("Dan", 4, "Ms. Li"), ("Eve", 5, "Mr. Wang"), ("Fay", 5, nil)] {
        let student = Student(); student.name = name; student.grade = grade
        student.teacher = teacherName.flatMap { teachers[$0] }
        try student.save()
    }
    for row in try Db.find("select id, name, teacher_id from student order by id limit 2") { print("  \(row)") }

    say("Lazy loading: the teacher is read on first access, then kept.")
    let (ann, findCost) = try counter.counting { try Student.dao.findFirstByCondition("name = ?", "Ann") }
    guard let ann else { throw CheckFailed(description: "check failed: Ann should be found") }
    print("  found \(ann.name ?? "-"): \(statements(findCost)); teacher_id is \(ann["teacher_id"] as Int? ?? 0)")
    let (first, firstCost) = counter.counting { ann.teacher }
    print("  ann.teacher -> \(first?.name ?? "-"): \(statements(firstCost))")
    let (_, secondCost) = counter.counting { ann.teacher }
    print("  ann.teacher again: \(statements(secondCost))")
    try check(firstCost == 1 && secondCost == 0, "the reference loads once")
    let fay = try Student.dao.findFirstByCondition("name = ?", "Fay")
    let (none, noneCost) = counter.counting { fay?.teacher }
    print("  Fay has no teacher: \(none?.name ?? "nil"), \(statements(noneCost))")

    say("Children: a teacher's students, by the foreign key teacher_id.")
    guard let li = teachers["Ms. Li"] else { throw CheckFailed(description: "check failed: Ms. Li should exist") }
    let (pupils, childrenCost) = counter.counting { li.students }
    print("  \(li.name ?? "-") teaches \(pupils.compactMap(\.name)): \(statements(childrenCost))")
    try check(pupils.count == 3, "Ms. Li has three students")

    say("The N+1 pattern: reading each student's teacher costs one query per student ...")
    let (lazyLines, lazyCost) = try counter.counting {
        try Student.dao.findAll().map { "\($0.name ?? "-") → \($0.teacher?.name ?? "nobody")" }
    }
    print("  \(lazyLines.joined(separator: ", ")): \(statements(lazyCost))")

    say("... preload loads every student's teacher in one query instead.")
    let (preloaded, preloadCost) = try counter.counting {
        let students = try Student.dao.findAll()
        try Student.dao.preload(\.teacher, in: students)
        return students.map { "\($0.name ?? "-") → \($0.teacher?.name ?? "nobody")" }
    }
    print("  \(preloaded.joined(separator: ", ")): \(statements(preloadCost))")
    try check(preloaded == lazyLines, "preload reads the same teachers")
    try check(preloadCost == 2 && lazyCost > preloadCost, "findAll + preload is two statements")

    say("A join read into models: the extra column teacher_name is there by name.")
    let (joined, joinCost) = try counter.counting {
        try Student.dao.find("""
            select s.*, t.name as teacher_name from student s
            left join teacher t on t.id = s.teacher_id
            where s.grade >= ? order by s.id
            """, 4)
    }
    for s in joined {
        print("  \(s.name ?? "-") (grade \(s.grade)): \(s["teacher_name"] as String? ?? "nobody")")
    }
    print("  \(statements(joinCost))")
    try check(joined.count == 4, "four students in grade 4 and up")

    say("How many students each teacher has, counted by SQL.")
    let counts = try Db.find("""
        select t.name, count(s.id) as students from teacher t
        left join student s on s.teacher_id = t.id
        group by t.id order by students desc, t.name
        """)
    for row in counts { print("  \(row.name ?? "-"): \(row.students ?? 0)") }
    try check(counts.map { $0.students ?? -1 } == [3, 2, 0], "3, 2 and 0 students")

    say("Moving a student to another teacher is an assignment and an update.")
    guard let zhao = teachers["Ms. Zhao"] else { throw CheckFailed(description: "check failed: Ms. Zhao should exist") }
    ann.teacher = zhao
    print("  modified:", ann.modifiedColumns)
    try ann.update()
    print("  \(zhao.name ?? "-") now teaches \(zhao.students.compactMap(\.name))")
    try check(zhao.students.count == 1, "Ms. Zhao teaches Ann now")
}

let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-relations-\(UUID().uuidString)")
var failed = false
do {
    try run(in: folder)
    say("Done.")
} catch {
    FileHandle.standardError.write(Data("relations failed: \(error)\n".utf8))
    failed = true
}
try? FileManager.default.removeItem(at: folder)
exit(failed ? 1 : 0)
