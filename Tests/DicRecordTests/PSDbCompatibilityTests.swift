import Foundation
import Testing
@testable import DicRecord

// PSDicRecord's own PSDb tests (Example/Tests/PSDb.test.m, class PSDbTests), re-expressed on
// Record and Db with the same seed: 20 rows through a batch of
// `insert into student(name, age) values(?, ?)` with name "张<i>" and age i, for i = 0..19,
// and showSql on, as its setUp did. Unlike the original each test has its own database.

@Suite("PSDb compatibility")
struct PSDbCompatibilityTests {
    /// PSDbTests' class setUp: the student table, showSql = YES, and 20 rows through `batchSqls:`.
    private func withSeededDatabase(_ body: (TestDatabase) throws -> Void) throws {
        try withDatabase { t in
            t.context.showSql = true
            try t.db.update("create table student(id integer primary key autoincrement, name text, age integer, date real)")
            let counts = try Db.main.batch((0..<20).map { (i: Int) in Sql("insert into student(name, age) values(?, ?)", "张\(i)", i) })
            #expect(counts == Array(repeating: 1, count: 20))
            try body(t)
        }
    }

    /// `[PSDb use:@"abc"]` throws (unknown config); `[PSDb use:nil]` is main.
    @Test func testUse() throws {
        try withSeededDatabase { t throws in
            let error = DbSuiteKit.expectError(.unknownConfig) { _ = try Db.use("abc").find("select * from student") }
            #expect(error?.message.contains("abc") == true)
            #expect(error?.message.contains("main") == true)
            let main = Db.use(nil)
            #expect(try main.context().configName == "main")
            #expect(try main.queryInt("select count(*) from student") == 20)
        }
    }

    /// `queryOne:@"select count(1) from student"` is non-nil; `queryOne:@"select * from student"` throws.
    @Test func testQueryOne() throws {
        try withSeededDatabase { t throws in
            let count = try Db.main.queryFirst("select count(1) from student", as: Int.self)
            #expect(count == 20)
            #expect(try Db.queryInt("select count(1) from student") == 20)
            DbSuiteKit.expectError(.multipleColumns) { _ = try Db.main.queryFirst("select * from student", as: Int.self) }
            // NULL is nil (PSDicRecord's fix "return nil instead of NSNull").
            #expect(try Db.main.queryFirst("select date from student", as: Date.self) == nil)
        }
    }

    /// `update:@"update student set name = '张三' where name = ?", @"张3"` gives 1.
    @Test func testUpdate() throws {
        try withSeededDatabase { t throws in
            let changed = try Db.main.update("update student set name = '张三' where name = ?", "张3")
            #expect(changed == 1)
            #expect(try Db.main.queryInt("select age from student where name = '张三'") == 3)
            #expect(try Db.main.queryInt("select count(*) from student where name = '张3'") == 0)
        }
    }

    /// `find:@"select * from student where 1 = ?", @1` is non-empty.
    @Test func testFindRecords() throws {
        try withSeededDatabase { t throws in
            let records = try Db.main.find("select * from student where 1 = ?", 1)
            #expect(!records.isEmpty)
            #expect(records.count == 20)
            let names = records.compactMap { DbSuiteKit.string($0, "name") }
            #expect(Set(names) == Set((0..<20).map { "张\($0)" }))
            #expect(try Db.main.find("select * from student where 1 = ?", 0).isEmpty)
            // Table names match case-insensitively, as in SQLite.
            #expect(try Db.main.find("select * from Student where name like ?", "张%").count == 20)
        }
    }

    /// `findFirst:` with "... where 1 = ?" and "... where 1 = ? limit 1", both with @1, is non-nil.
    @Test func testFindFirstRecord() throws {
        try withSeededDatabase { t throws in
            let first = try Db.main.findFirst("select * from student where 1 = ?", 1)
            #expect(first != nil)
            let limited = try Db.main.findFirst("select * from student where 1 = ? limit 1", 1)
            #expect(limited != nil)
            if let first, let limited {
                #expect(first == limited)
                #expect(DbSuiteKit.string(first, "name") == "张0")
                #expect(DbSuiteKit.int(first, "age") == 0)
            }
            #expect(try Db.main.findFirst("select * from student where 1 = 0") == nil)
        }
    }

    /// `paginate:1 size:10 withSelect:@"select *" where:@"from student where 1 = ?", @1`:
    /// pageSize 10, page 1, totalRow 20 > pageSize, totalPage 2.
    @Test func testPage() throws {
        try withSeededDatabase { t throws in
            let page = try Db.main.paginate(1, 10, "select *", "from student where 1 = ?", 1)
            #expect(page.pageSize == 10)
            #expect(page.pageNumber == 1)
            #expect(page.totalRow == 20)
            #expect(page.totalRow > page.pageSize)
            #expect(page.totalPage == 2)
            #expect(page.list.count == 10)
        }
    }
}
