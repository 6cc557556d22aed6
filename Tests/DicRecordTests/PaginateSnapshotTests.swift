import Foundation
import Testing
@testable import DicRecord

// `paginate` reads its count and its page in one snapshot: a commit that lands between the two
// (here, from the fetch itself, on the writer) is seen by neither.
@Suite("Paginate's count and page agree")
struct PaginateSnapshotTests {
    @Test(arguments: Engine.available) func aCommitBetweenCountAndPageIsSeenByNeither(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            try DbSuiteKit.makeStudents(t.db, count: 5)
            let db = t.db
            var inserted = false
            let page = try db.paginate(1, 10, "select *", "from student order by id", .none) { sql -> [Record] in
                // The count has run: another connection commits three rows before the page is read.
                let done = DispatchSemaphore(value: 0)
                Thread {
                    _ = try? db.batch("insert into student(name, age) values (?, ?)", [["x", 1], ["y", 2], ["z", 3]])
                    done.signal()
                }.start()
                done.wait()
                inserted = true
                return try db.find(sql)
            }
            #expect(inserted)
            #expect(try db.queryInt("select count(*) from student") == 8)
            #expect(page.totalRow == 5)
            #expect(page.list.count == 5)
        }
    }
}
