import Foundation
import Testing
@testable import DicRecord

@Suite struct PaginateKeysetTests {
    private func seed(_ t: TestDatabase, rows: Int) throws {
        try t.db.update(t.db.ddl("create table people(id integer primary key, name text, active integer)"))
        try t.db.batch("insert into people(id, name, active) values (?, ?, ?)",
                       (1...rows).map { [$0 * 10, "p\($0)", $0 % 3 == 0 ? 0 : 1] })
    }

    @Test(arguments: Engine.available) func walkingKeysetPagesVisitsEveryMatchingRowOnceInKeyOrder(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try seed(t, rows: 95)
            var seen: [Int] = []
            var page = try t.db.paginate(after: nil, 10, "select *", "from people where active = ?", 1)
            seen += page.list.compactMap { $0.id as Int? }
            var pages = 1
            while let next = page.nextKey {
                page = try t.db.paginate(after: next, 10, "select *", "from people where active = ?", 1)
                seen += page.list.compactMap { $0.id as Int? }
                pages += 1
            }
            let expected = (1...95).filter { $0 % 3 != 0 }.map { $0 * 10 }
            #expect(seen == expected)
            #expect(pages == (expected.count + 9) / 10)
            #expect(page.isLastPage)
        }
    }

    @Test(arguments: Engine.available) func descendingKeysetPagesGoBackwards(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try seed(t, rows: 25)
            let first = try t.db.paginate(after: nil, 10, "select id, name", "from people", key: "id", descending: true)
            #expect(first.list.compactMap { $0.id as Int? } == Array(stride(from: 250, through: 160, by: -10)))
            #expect(first.nextKey == .integer(160))
            let second = try t.db.paginate(after: first.nextKey, 10, "select id, name", "from people", key: "id", descending: true)
            #expect(second.list.first?.id as Int? == 150)
        }
    }

    @Test(arguments: Engine.available) func aDeepKeysetPageSeeksThroughTheKeyIndexWithoutCounting(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try seed(t, rows: 50)
            t.clearLog()
            let page = try t.db.paginate(after: 400, 5, "select *", "from people order by id")
            #expect(page.list.compactMap { $0.id as Int? } == [410, 420, 430, 440, 450])
            #expect(page.nextKey == .integer(450))
            #expect(!t.statements.contains { $0.lowercased().contains("count(") })
            if engine == .sqlite {
                let plan = try t.db.find("explain query plan " + (t.statements.last ?? ""), 400)
                #expect(plan.contains { ($0.detail as String?)?.contains("INTEGER PRIMARY KEY") == true })
            }
        }
    }

    @Test(arguments: Engine.available) func aKeyColumnMissingFromTheSelectIsAClearError(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try seed(t, rows: 30)
            #expect(throws: (any Error).self) {
                _ = try t.db.paginate(after: nil, 10, "select name", "from people")
            }
            let error = try #require(throws: DicRecordError.self) {
                _ = try t.db.paginate(after: nil, 0, "select *", "from people")
            }
            #expect(error.kind == .invalidArgument)
        }
    }

    @Test(arguments: Engine.available) func aKnownTotalSkipsTheCountQuery(engine: Engine) throws {
        try withDatabase(engine: engine) { t in
            try seed(t, rows: 40)
            t.clearLog()
            let page = try t.db.paginate(2, 10, "select *", "from people order by id", totalRow: 40)
            #expect(page.totalRow == 40 && page.totalPage == 4 && page.list.count == 10)
            #expect(page.list.first?.id as Int? == 110)
            #expect(!t.statements.contains { $0.lowercased().contains("count(") })
            let past = try t.db.paginate(9, 10, "select *", "from people", totalRow: 40)
            #expect(past.list.isEmpty && past.totalPage == 4)
            let error = try #require(throws: DicRecordError.self) {
                _ = try t.db.paginate(1, 10, "select *", "from people", totalRow: -1)
            }
            #expect(error.kind == .invalidArgument)
        }
    }
}
