import Foundation
import Testing
@testable import DicRecord

// `paginate`: totals, DISTINCT and GROUP BY counts, ORDER BY removal in the count query,
// placeholders in both parts, pages past the end and invalid arguments.

@Suite("Paginate")
struct PaginateTests {
    /// 20 students, age 1...20, grp = age % 4 (4 groups of 5).
    private func seed(_ db: Db) throws {
        try DbSuiteKit.makeStudents(db, count: 20)
        try db.update("alter table student add column grp integer")
        try db.update("update student set grp = age % 4")
    }

    private func countStatements(_ t: TestDatabase) -> [String] {
        t.statements.filter { $0.uppercased().hasPrefix("SELECT COUNT(*) FROM (") }
    }

    private func dataStatements(_ t: TestDatabase) -> [String] {
        t.statements.filter { $0.contains("LIMIT") && !$0.uppercased().hasPrefix("SELECT COUNT(*) FROM (") }
    }

    @Test(arguments: Engine.available) func twentyRowsInPagesOfTen(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            let page1 = try t.db.paginate(1, 10, "select *", "from student order by id")
            #expect(page1.totalRow == 20)
            #expect(page1.totalPage == 2)
            #expect(page1.pageNumber == 1)
            #expect(page1.pageSize == 10)
            #expect(page1.list.count == 10)
            #expect(page1.list.map { DbSuiteKit.int($0, "id") } == (1...10).map { Optional($0) })
            #expect(page1.isFirstPage)
            #expect(!page1.isLastPage)

            let page2 = try t.db.paginate(2, 10, "select *", "from student order by id")
            #expect(page2.list.map { DbSuiteKit.int($0, "id") } == (11...20).map { Optional($0) })
            #expect(page2.totalRow == 20)
            #expect(page2.totalPage == 2)
            #expect(!page2.isFirstPage)
            #expect(page2.isLastPage)

            // Static shortcut, and a partly filled last page.
            let page3 = try Db.paginate(3, 7, "select id", "from student order by id")
            #expect(page3.totalPage == 3)
            #expect(page3.list.count == 6)
            #expect(page3.list.first.flatMap { DbSuiteKit.int($0, "id") } == 15)
            #expect(page3.isLastPage)
        }
    }

    @Test(arguments: Engine.available) func distinctAndGroupByCountTheirOwnRows(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            let distinct = try t.db.paginate(1, 3, "select distinct grp", "from student order by grp")
            #expect(distinct.totalRow == 4)
            #expect(distinct.totalPage == 2)
            #expect(distinct.list.map { DbSuiteKit.int($0, "grp") } == [0, 1, 2])

            let grouped = try t.db.paginate(1, 10, "select grp, count(*) as n", "from student group by grp order by grp")
            #expect(grouped.totalRow == 4)
            #expect(grouped.totalPage == 1)
            #expect(grouped.list.count == 4)
            #expect(grouped.list.map { DbSuiteKit.int($0, "n") } == [5, 5, 5, 5])

            let having = try t.db.paginate(1, 10, "select grp, sum(age) as s", "from student group by grp having sum(age) > ?", 50)
            // Sums: grp 0 → 4+8+12+16+20 = 60, 1 → 45, 2 → 50, 3 → 55.
            #expect(having.totalRow == 2)
            #expect(Set(having.list.compactMap { DbSuiteKit.int($0, "grp") }) == [0, 3])

            let sub = try t.db.paginate(1, 10, "select *", "from (select grp from student where age > ?) as sub where grp = ?", 10, 1)
            #expect(sub.totalRow == 2)   // ages 11...20 with age % 4 == 1: 13 and 17
        }
    }

    @Test(arguments: Engine.available) func trailingOrderByIsDroppedFromTheCount(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            t.clearLog()
            let page = try t.db.paginate(1, 5, "select *", "from student where age >= ? order by age desc", 4)
            #expect(page.totalRow == 17)
            #expect(page.totalPage == 4)
            #expect(page.list.map { DbSuiteKit.int($0, "age") } == [20, 19, 18, 17, 16])
            let counts = countStatements(t)
            #expect(counts.count == 1)
            #expect(counts.first.map { !$0.lowercased().contains("order by") } == true)
            #expect(counts.first.map { $0.contains("from student where age >= ?") } == true)
            let data = dataStatements(t)
            #expect(data.count == 1)
            #expect(data.first.map { $0.contains("order by age desc") } == true)
        }
    }

    @Test(arguments: Engine.available) func orderByInsideAStringOrSubqueryIsNotCut(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            try t.db.update("update student set name = 'order by x' where id = 1")
            t.clearLog()
            let page = try t.db.paginate(1, 5, "select *", "from student where name != 'order by x' and id in (select id from student order by id limit 10)")
            #expect(page.totalRow == 9)
            let count = countStatements(t).first ?? ""
            #expect(count.contains("name != 'order by x'"))
            #expect(count.contains("order by id limit 10)"))
        }
    }

    @Test(arguments: Engine.available) func orderByWithAPlaceholderIsKeptAndStillBinds(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            t.clearLog()
            let page = try t.db.paginate(1, 3, "select *", "from student where age > ? order by abs(age - ?), age", 2, 10)
            #expect(page.totalRow == 18)
            #expect(page.totalPage == 6)
            #expect(page.list.map { DbSuiteKit.int($0, "age") } == [10, 9, 11])
            let count = countStatements(t).first ?? ""
            #expect(count.lowercased().contains("order by abs(age - ?)"))
        }
    }

    @Test(arguments: Engine.available) func placeholdersInTheSelectAndTheRestBindInOrder(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            let page = try t.db.paginate(1, 10, "select id, ? as tag, age * ? as scaled", "from student where age <= ? order by id", "T", 100, 3)
            #expect(page.totalRow == 3)
            #expect(page.list.map { DbSuiteKit.string($0, "tag") } == ["T", "T", "T"])
            #expect(page.list.map { DbSuiteKit.int($0, "scaled") } == [100, 200, 300])

            // Array and dictionary forms.
            let array = try t.db.paginate(1, 10, "select ? as tag, id", "from student where age > ?", arguments: ["A", 18])
            #expect(array.totalRow == 2)
            #expect(array.list.map { DbSuiteKit.string($0, "tag") } == ["A", "A"])
            let named = try t.db.paginate(2, 2, "select :tag as tag, id", "from student where age between :low and :high order by id",
                                          arguments: ["tag": "N", "low": 5, "high": 9])
            #expect(named.totalRow == 5)
            #expect(named.totalPage == 3)
            #expect(named.list.map { DbSuiteKit.int($0, "id") } == [7, 8])
            #expect(named.list.map { DbSuiteKit.string($0, "tag") } == ["N", "N"])
            // A wrong argument count is an error, not a silent NULL.
            DbSuiteKit.expectError(.argumentCount) {
                _ = try t.db.paginate(1, 10, "select ? as tag, id", "from student where age > ?", "only one")
            }
        }
    }

    @Test(arguments: Engine.available) func pagePastTheLastIsEmptyWithRealTotalsAndNoDataQuery(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            t.clearLog()
            let page = try t.db.paginate(5, 10, "select *", "from student order by id")
            #expect(page.list.isEmpty)
            #expect(page.totalRow == 20)
            #expect(page.totalPage == 2)
            #expect(page.pageNumber == 5)
            #expect(page.pageSize == 10)
            #expect(!page.isFirstPage)
            #expect(page.isLastPage)
            #expect(countStatements(t).count == 1)
            #expect(dataStatements(t).isEmpty)
            #expect(!t.statements.contains { $0.hasPrefix("select * from student") })
            // Huge page numbers are no overflow either.
            let far = try t.db.paginate(Int.max, 10, "select *", "from student")
            #expect(far.list.isEmpty)
            #expect(far.totalRow == 20)
        }
    }

    @Test(arguments: Engine.available) func numberedPlaceholdersWork(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            let page = try t.db.paginate(1, 4, "select ?2 as tag, id", "from student where age > ?1 order by id", 15, "n")
            #expect(page.totalRow == 5)
            #expect(page.list.map { DbSuiteKit.int($0, "id") } == [16, 17, 18, 19])
            #expect(page.list.map { DbSuiteKit.string($0, "tag") } == ["n", "n", "n", "n"])
        }
    }

    /// A huge page size is no overflow: one page with every row. Run in a child process,
    /// because an arithmetic overflow traps and would end the whole test run.
    @Test func hugePageSizeDoesNotOverflow() async {
        await #expect(processExitsWith: .success) {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-dbsuite-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: folder) }
            try DbContext.withIsolatedRegistry {
                let context = try DbContext(path: folder.appendingPathComponent("p.sqlite").path)
                try context.start()
                defer { context.stop() }
                try Db.update(Db.ddl("create table t(x)"))
                try Db.batch("insert into t values (?)", (1...20).map { [$0] })
                let page = try Db.paginate(1, Int.max, "select *", "from t")
                guard page.totalRow == 20, page.totalPage == 1, page.list.count == 20 else { exit(1) }
                let later = try Db.paginate(2, Int.max, "select *", "from t")
                guard later.list.isEmpty, later.totalPage == 1 else { exit(1) }
            }
        }
    }

    @Test(arguments: Engine.available) func pageNumberAndSizeBelowOneAreErrors(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            t.clearLog()
            DbSuiteKit.expectError(.invalidArgument) { _ = try t.db.paginate(0, 10, "select *", "from student") }
            DbSuiteKit.expectError(.invalidArgument) { _ = try t.db.paginate(1, 0, "select *", "from student") }
            DbSuiteKit.expectError(.invalidArgument) { _ = try t.db.paginate(-1, 10, "select *", "from student") }
            DbSuiteKit.expectError(.invalidArgument) { _ = try t.db.paginate(1, -5, "select *", "from student") }
            DbSuiteKit.expectError(.invalidArgument) { _ = try Db.paginate(0, 0, "select *", "from student") }
            // Refused before any SQL ran.
            #expect(t.statements.filter { $0.contains("student") }.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func emptyTable(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 0)
            t.clearLog()
            let page = try t.db.paginate(1, 10, "select *", "from student")
            #expect(page.list.isEmpty)
            #expect(page.totalRow == 0)
            #expect(page.totalPage == 0)
            #expect(page.pageNumber == 1)
            #expect(page.isFirstPage)
            #expect(page.isLastPage)
            #expect(dataStatements(t).isEmpty)
        }
    }

    @Test(arguments: Engine.available) func exactMultipleOfThePageSize(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            let page = try t.db.paginate(4, 5, "select *", "from student order by id")
            #expect(page.totalPage == 4)
            #expect(page.list.count == 5)
            #expect(page.isLastPage)
            let one = try t.db.paginate(20, 1, "select *", "from student order by id")
            #expect(one.totalPage == 20)
            #expect(one.list.map { DbSuiteKit.int($0, "id") } == [20])
        }
    }

    @Test(arguments: Engine.available) func countAndPageAreConsistentInsideATransaction(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try seed(t.db)
            try t.db.tx { db in
                try db.update("delete from student where age > 15")
                let page = try db.paginate(1, 10, "select *", "from student order by id")
                #expect(page.totalRow == 15)
                #expect(page.totalPage == 2)
                let last = try db.paginate(2, 10, "select *", "from student order by id")
                #expect(last.list.count == 5)
                return false
            }
            #expect(try t.db.paginate(1, 10, "select *", "from student").totalRow == 20)
        }
    }
}
