import Foundation
import Testing
@testable import DicRecord

// Model hooks (willSave/didSave/didLoad/didDelete), createdAt/updatedAt stamping, dao
// aggregates, and saveOrUpdate (an upsert that never REPLACEs).

/// Records every hook it runs, with the number of statements the database had run by then.
final class HookItem: Model {
    @Column var name: String?
    @Column var rank: Int?
    override class var tableName: String { "hook_item" }

    /// What the hooks append to: (hook, statement count seen by `probe` at that moment).
    var events: [String] = []
    var probe: (() -> Int)?
    var failWith: (any Error)?

    override func willSave() throws {
        events.append("willSave@\(probe?() ?? -1)")
        if let failWith { throw failWith }
    }
    override func didSave() { events.append("didSave@\(probe?() ?? -1)") }
    override func didLoad() { events.append("didLoad") }
    override func didDelete() { events.append("didDelete@\(probe?() ?? -1)") }
}

final class HookStamped: Model {
    @Column var name: String?
    @Column var createdAt: Date?
    @Column var updatedAt: Date?
}

final class HookSnakeStamped: Model {
    @Column var name: String?
    @Column var created_at: Date?
    @Column var updated_at: Date?
}

/// Timestamp columns of another type are left alone.
final class HookTextStamped: Model {
    @Column var name: String?
    @Column var createdAt: String?
    @Column var updatedAt: Int?
}

final class HookScore: Model {
    @Column var name: String?
    @Column var points: Int?
    @Column var weight: Double?
}

final class HookContact: Model {
    @Column var name: String?
    @Column var email: String?
    @Column var note: String?
    override class var indexes: [Index] { [Index("email", unique: true)] }
}

/// Two unique keys, declared email first.
final class HookDualKey: Model {
    @Column var name: String?
    @Column var email: String?
    @Column var phone: String?
    override class var indexes: [Index] { [Index("email", unique: true), Index("phone", unique: true)] }
}

/// Normalizes its name in willSave.
final class HookNormalized: Model {
    @Column var name: String?
    @Column var saves: Int = 0
    override func willSave() throws {
        name = name?.trimmingCharacters(in: .whitespaces).lowercased()
        saves += 1
    }
}

/// A contact with timestamps, to see what an upsert that updates does to createdAt.
final class HookStampedContact: Model {
    @Column var email: String?
    @Column var name: String?
    @Column var createdAt: Date?
    @Column var updatedAt: Date?
    override class var indexes: [Index] { [Index("email", unique: true)] }
}

@Suite("Model hooks, timestamps, aggregates, saveOrUpdate")
struct ModelHookTests {
    struct Refused: Error, Equatable { let reason: String }

    private func item(_ t: TestDatabase, _ name: String) -> HookItem {
        let item = HookItem()
        item.name = name
        item.probe = { t.statements.count }
        return item
    }

    // MARK: 5. Hooks

    @Test(arguments: Engine.available) func hooksFireInOrderAroundTheirStatement(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookItem.self)
            let a = item(t, "a")
            t.clearLog()
            try a.save()
            // willSave before the INSERT (0 statements run), didSave after it (1).
            #expect(a.events == ["willSave@0", "didSave@1"])
            #expect(t.statements.count == 1)
            #expect(t.statements[0].hasPrefix(#"INSERT INTO "hook_item""#))

            a.rank = 3
            t.clearLog()
            try a.update()
            #expect(a.events == ["willSave@0", "didSave@1", "willSave@0", "didSave@1"])
            #expect(t.statements == [#"UPDATE "hook_item" SET "rank" = ? WHERE "id" = ?"#])

            // An update with nothing modified writes nothing and runs no hook.
            #expect(try a.update() == false)
            #expect(a.events.count == 4)

            t.clearLog()
            #expect(try a.delete())
            #expect(a.events == ["willSave@0", "didSave@1", "willSave@0", "didSave@1", "didDelete@1"])
            // Nothing deleted: no didDelete.
            #expect(try a.delete() == false)
            #expect(a.events.count == 5)
            // A new model has run no hook at all.
            #expect(HookItem().events.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func saveOrUpdateRunsTheSaveHooks(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookItem.self)
            let a = item(t, "a")
            t.clearLog()
            try a.saveOrUpdate()
            #expect(a.events.map { String($0.prefix { $0 != "@" }) } == ["willSave", "didSave"])
            // willSave ran before any SQL, didSave after the upsert.
            #expect(a.events.first == "willSave@0")
            #expect(a.id == 1)
            a.rank = 4
            try a.saveOrUpdate()
            #expect(a.events.map { String($0.prefix { $0 != "@" }) } == ["willSave", "didSave", "willSave", "didSave"])
            #expect(try HookItem.dao.findById(1)?.rank == 4)
        }
    }

    @Test(arguments: Engine.available) func changesMadeInWillSaveAreWritten(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookNormalized.self)
            let n = HookNormalized()
            n.name = "  MiXeD  "
            try n.save()
            #expect(n.name == "mixed")
            #expect(try t.db.queryString("select name from \"HookNormalized\" where id = ?", n.id) == "mixed")
            #expect(try t.db.queryInt("select saves from \"HookNormalized\" where id = ?", n.id) == 1)
            n.name = " UPDATED"
            try n.update()
            #expect(try t.db.queryString("select name from \"HookNormalized\" where id = ?", n.id) == "updated")
            #expect(try t.db.queryInt("select saves from \"HookNormalized\" where id = ?", n.id) == 2)
            #expect(n.modifiedColumns.isEmpty)
        }
    }

    @Test(arguments: Engine.available) func didLoadRunsOnceForEachModelAFinderReturns(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookItem.self)
            for name in ["a", "b", "c", "d"] { try item(t, name).save() }
            let all = try HookItem.dao.findAll()
            #expect(all.count == 4)
            #expect(all.allSatisfy { $0.events == ["didLoad"] })
            let some = try HookItem.dao.findByCondition("name in (?, ?)", "b", "c")
            #expect(some.map(\.events) == [["didLoad"], ["didLoad"]])
            #expect(try HookItem.dao.find("select * from hook_item where name = ?", "d").map(\.events) == [["didLoad"]])
            #expect(try HookItem.dao.findById(1)?.events == ["didLoad"])
            #expect(try HookItem.dao.findById(1, loadColumns: "id")?.events == ["didLoad"])
            #expect(try HookItem.dao.findFirst("select * from hook_item order by id desc")?.events == ["didLoad"])
            #expect(try HookItem.dao.findFirstByCondition("name = ?", "a")?.events == ["didLoad"])
            let page = try HookItem.dao.paginate(1, 3, "select *", "from hook_item order by id")
            #expect(page.list.map(\.events) == Array(repeating: ["didLoad"], count: 3))
            // No row, no model, no hook; finders on a bad query throw rather than load anything.
            #expect(try HookItem.dao.findById(999) == nil)
            #expect(throws: DatabaseError.self) { try HookItem.dao.findByCondition("no_such_column = 1") }

            // A loaded model then saved: didLoad first, then the save hooks.
            let b = try #require(some.first)
            b.probe = { t.statements.count }
            b.rank = 1
            t.clearLog()
            try b.update()
            try b.delete()
            #expect(b.events == ["didLoad", "willSave@0", "didSave@1", "didDelete@2"])
        }
    }

    @Test(arguments: Engine.available) func aThrowingWillSaveStopsSaveWithNothingWritten(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookItem.self)
            try item(t, "existing").save()
            let a = item(t, "refused")
            a.failWith = Refused(reason: "no")
            t.clearLog()
            #expect(throws: Refused(reason: "no")) { try a.save() }
            #expect(a.id == nil)
            #expect(a.events == ["willSave@0"])          // no didSave
            #expect(t.statements.isEmpty)                // no SQL at all
            #expect(try HookItem.dao.count() == 1)
            #expect(a.modifiedColumns == ["name"])       // still pending: a retry can save it
            // saveOrUpdate is stopped the same way.
            #expect(throws: Refused(reason: "no")) { try a.saveOrUpdate() }
            #expect(try HookItem.dao.count() == 1)
            #expect(a.id == nil)
            // Once allowed, the same instance saves.
            a.failWith = nil
            try a.save()
            #expect(a.id == 2)
            #expect(try HookItem.dao.findById(2)?.name == "refused")
        }
    }

    @Test(arguments: Engine.available) func aThrowingWillSaveStopsUpdateWithTheRowUnchanged(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookItem.self)
            let saved = item(t, "before")
            saved.rank = 1
            try saved.save()
            let found = try #require(try HookItem.dao.findById(saved.id))
            found.probe = { t.statements.count }
            found.name = "after"
            found.rank = 2
            found.failWith = Refused(reason: "locked")
            t.clearLog()
            let error = try #require(throws: Refused.self) { try found.update() }
            #expect(error == Refused(reason: "locked"))
            #expect(t.statements.isEmpty)
            #expect(found.events == ["didLoad", "willSave@0"])
            let row = try #require(try t.db.findFirst("select name, rank from hook_item where id = ?", saved.id))
            #expect(row.name as String? == "before")
            #expect(row.rank as Int? == 1)
            #expect(Set(found.modifiedColumns) == ["name", "rank"])
            // A failure inside a transaction rolls the transaction back with it.
            let other = item(t, "in tx")
            #expect(throws: Refused(reason: "locked")) {
                try t.db.tx { _ in
                    try other.save()
                    try found.update()
                    return true
                }
            }
            #expect(try HookItem.dao.count() == 1)
        }
    }

    @Test(arguments: Engine.available) func aWillSaveErrorOfALibraryTypeComesOutUnchanged(engine: Engine) throws {
        // A willSave that throws a DicRecordError: the caller gets that very error.
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookItem.self)
            let a = item(t, "x")
            a.failWith = DicRecordError(.invalidArgument, "refused by the model")
            let error = try #require(throws: DicRecordError.self) { try a.save() }
            #expect(error.kind == .invalidArgument)
            #expect(error.message == "refused by the model")
            #expect(try HookItem.dao.count() == 0)
        }
    }

    // MARK: 6. Timestamps

    @Test(arguments: Engine.available) func createdAtAndUpdatedAtAreStamped(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookStamped.self)
            let before = Date()
            let s = HookStamped()
            s.name = "a"
            try s.save()
            let after = Date()
            let created = try #require(s.createdAt)
            let updated = try #require(s.updatedAt)
            #expect(created >= before && created <= after)
            #expect(updated >= before && updated <= after)
            let stored = try #require(try HookStamped.dao.findById(s.id))
            #expect(stored.createdAt == created)
            #expect(stored.updatedAt == updated)
            #expect(stored.modifiedColumns.isEmpty)

            Thread.sleep(forTimeInterval: 0.01)
            stored.name = "b"
            t.clearLog()
            try stored.update()
            // The update writes updatedAt, never createdAt.
            #expect(t.statements.count == 1)
            #expect(t.statements[0].contains(#""updatedAt" = ?"#))
            #expect(!t.statements[0].contains("createdAt"))
            let newUpdated = try #require(stored.updatedAt)
            #expect(newUpdated > updated)
            #expect(stored.createdAt == created)
            let again = try #require(try HookStamped.dao.findById(s.id))
            #expect(again.createdAt == created)
            #expect(again.updatedAt == newUpdated)
            #expect(again.name == "b")

            // A createdAt given before the first save is kept; an update with nothing modified
            // stamps nothing.
            let given = Date(timeIntervalSince1970: 1_000_000)
            let old = HookStamped()
            old.name = "old"
            old.createdAt = given
            try old.save()
            #expect(try HookStamped.dao.findById(old.id)?.createdAt == given)
            let stamp = old.updatedAt
            #expect(try old.update() == false)
            #expect(old.updatedAt == stamp)
        }
    }

    @Test(arguments: Engine.available) func snakeCaseTimestampsAreStampedAndOtherTypesAreNot(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookSnakeStamped.self, HookTextStamped.self)
            let s = HookSnakeStamped()
            s.name = "a"
            try s.save()
            let created = try #require(s.created_at)
            let updated = try #require(s.updated_at)
            Thread.sleep(forTimeInterval: 0.01)
            s.name = "b"
            try s.update()
            #expect(s.created_at == created)
            #expect(try #require(s.updated_at) > updated)
            #expect(try HookSnakeStamped.dao.findById(s.id)?.created_at == created)

            let text = HookTextStamped()
            text.name = "x"
            try text.save()
            #expect(text.createdAt == nil)
            #expect(text.updatedAt == nil)
            #expect(try t.db.queryInt("select count(*) from \"HookTextStamped\" where \"createdAt\" is null and \"updatedAt\" is null") == 1)
        }
    }

    @Test(arguments: Engine.available) func saveOrUpdateThatUpdatesKeepsTheRowsCreatedAt(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookStampedContact.self)
            let first = HookStampedContact()
            first.email = "a@x"
            first.name = "A"
            try first.save()
            let created = try #require(first.createdAt)
            Thread.sleep(forTimeInterval: 0.01)
            let second = HookStampedContact()
            second.email = "a@x"
            second.name = "B"
            try second.saveOrUpdate()
            #expect(second.id == first.id)
            let row = try #require(try HookStampedContact.dao.findById(first.id))
            #expect(row.name == "B")
            #expect(try #require(row.updatedAt) > created)
            // The row was created by the first save; an upsert that updates it must not move that.
            #expect(row.createdAt?.timeIntervalSince1970 == created.timeIntervalSince1970)
        }
    }

    // MARK: 7. Aggregates

    @Test(arguments: Engine.available) func aggregatesOnAnEmptyTable(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookScore.self)
            #expect(try HookScore.dao.count() == 0)
            #expect(try HookScore.dao.count("points") == 0)
            let max: Int? = try HookScore.dao.max("points")
            let min: Int? = try HookScore.dao.min("points")
            let sum: Int? = try HookScore.dao.sum("points")
            let sumDouble: Double? = try HookScore.dao.sum("weight")
            let maxName: String? = try HookScore.dao.max("name")
            #expect(max == nil)
            #expect(min == nil)
            #expect(sum == nil)
            #expect(sumDouble == nil)
            #expect(maxName == nil)
            #expect(try HookScore.dao.total("points") == 0.0)
            #expect(try HookScore.dao.avg("points") == nil)
            #expect(try HookScore.dao.max("points", as: Int.self) == nil)
        }
    }

    private func fillScores(_ t: TestDatabase) throws {
        let rows: [(String, Int?, Double?)] = [("a", 10, 1.5), ("b", 20, nil), ("c", nil, 2.5), ("d", 5, 0.25), ("e", -3, nil)]
        for (name, points, weight) in rows {
            let s = HookScore()
            s.name = name
            s.points = points
            s.weight = weight
            try s.save()
        }
    }

    @Test(arguments: Engine.available) func aggregatesOnAFilledTable(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookScore.self)
            try fillScores(t)
            let dao = HookScore.dao
            #expect(try dao.count() == 5)
            #expect(try dao.count("points") == 4)
            #expect(try dao.count("weight") == 3)
            #expect(try dao.count("name") == 5)
            let maxPoints: Int? = try dao.max("points")
            let minPoints: Int? = try dao.min("points")
            let sumPoints: Int? = try dao.sum("points")
            #expect(maxPoints == 20)
            #expect(minPoints == -3)
            #expect(sumPoints == 32)
            #expect(try dao.total("points") == 32.0)
            #expect(try dao.avg("points") == 8.0)
            let maxWeight: Double? = try dao.max("weight")
            let minWeight: Double? = try dao.min("weight")
            let sumWeight: Double? = try dao.sum("weight")
            #expect(maxWeight == 2.5)
            #expect(minWeight == 0.25)
            #expect(sumWeight == 4.25)
            #expect(try dao.total("weight") == 4.25)
            #expect(try dao.avg("weight") == 4.25 / 3)
            let maxName: String? = try dao.max("name")
            let minName: String? = try dao.min("name")
            #expect(maxName == "e")
            #expect(minName == "a")
        }
    }

    @Test(arguments: Engine.available) func aggregatesWithAConditionAndArguments(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookScore.self)
            try fillScores(t)
            let dao = HookScore.dao
            #expect(try dao.count("points", where: "points > ?", 0) == 3)
            #expect(try dao.count("weight", where: "name in (?, ?, ?)", "a", "b", "c") == 2)
            let sum: Int? = try dao.sum("points", where: "name in (?, ?)", "a", "b")
            #expect(sum == 30)
            let max: Int? = try dao.max("points", where: "name <> ?", "b")
            #expect(max == 10)
            let min: Double? = try dao.min("weight", where: "points >= ?", 10)
            #expect(min == 1.5)
            #expect(try dao.total("points", where: "points < ?", 0) == -3.0)
            #expect(try dao.avg("points", where: "name >= ?", "c") == 1.0)
            // Matching rows whose values are all NULL: count 0, sum/max/avg nil, total 0.
            #expect(try dao.count("points", where: "name = ?", "c") == 0)
            let nullSum: Int? = try dao.sum("points", where: "name = ?", "c")
            let nullMax: Int? = try dao.max("points", where: "name = ?", "c")
            #expect(nullSum == nil)
            #expect(nullMax == nil)
            #expect(try dao.avg("points", where: "name = ?", "c") == nil)
            #expect(try dao.total("points", where: "name = ?", "c") == 0.0)
            // No matching row at all.
            #expect(try dao.count("points", where: "name = ?", "zzz") == 0)
            #expect(try dao.total("weight", where: "1 = 0") == 0.0)
            let none: Double? = try dao.max("weight", where: "name = ?", "zzz")
            #expect(none == nil)
            // A text argument compared to a number is SQLite's affinity at work: '5' = 5.
            #expect(try dao.count("points", where: "points = ?", "5") == 1)
        }
    }

    @Test(arguments: Engine.available) func aggregatesRefuseBadInput(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookScore.self)
            try fillScores(t)
            let dao = HookScore.dao
            // An unknown column: a thrown error naming it, not a number (SQLite alone would read
            // an unknown double-quoted name as a string literal and aggregate that constant).
            let error = #expect(throws: DicRecordError.self) { try dao.count("no_such_column") }
            #expect(error?.message.contains("no_such_column") ?? false)
            #expect(throws: DicRecordError.self) { try dao.total("nope") }
            #expect(throws: DicRecordError.self) { try dao.avg("nope") }
            #expect(throws: DicRecordError.self) { let _: String? = try dao.max("nope") }
            // The column name is quoted, never spliced in as SQL: the table survives.
            #expect(throws: DicRecordError.self) { try dao.count(#"points") from HookScore; drop table HookScore; --"#) }
            #expect(try dao.count() == 5)
            #expect(try dao.count("points") == 4)
            // A bad condition, and the wrong number of arguments.
            #expect(throws: DatabaseError.self) { try dao.count("points", where: "points >") }
            #expect(throws: (any Error).self) { try dao.count("points", where: "points > ?") }
            #expect(throws: (any Error).self) { try dao.count("points", where: "points > ?", 1, 2) }
            // A value that does not convert to the asked type throws rather than reading nil.
            let conversion = try #require(throws: ConversionError.self) { let _: Int? = try dao.max("name") }
            // The result column's name is the engine's: SQLite names it by the expression.
            #expect(conversion.column == (engine == .sqlite ? "max(\"name\")" : "max"))
            // An unregistered model.
            #expect(throws: DicRecordError.self) { try Unregistered.dao.count("age") }
        }
    }

    // MARK: 8. saveOrUpdate

    private func contact(_ email: String?, _ name: String?, note: String? = nil) -> HookContact {
        let c = HookContact()
        if let email { c.email = email }
        if let name { c.name = name }
        if let note { c.note = note }
        return c
    }

    private func rows(_ t: TestDatabase) throws -> [String] {
        try t.db.find("select id, name, email, note from \"HookContact\" order by id").map {
            "\($0.id as Int? ?? -1)|\($0.name as String? ?? "NULL")|\($0.email as String? ?? "NULL")|\($0.note as String? ?? "NULL")"
        }
    }

    @Test(arguments: Engine.available) func saveOrUpdateOnAUniqueKeyUpdatesOnlyTheSuppliedColumns(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookContact.self)
            let first = contact("a@x", "Ann", note: "keep")
            try first.save()
            let firstId = try #require(first.id)
            t.clearLog()

            let second = contact("a@x", "Annie")
            #expect(try second.saveOrUpdate())
            #expect(try rows(t) == ["\(firstId)|Annie|a@x|keep"])
            #expect(second.id == firstId)
            #expect(second.modifiedColumns.isEmpty)
            #expect(t.statements.contains { $0.contains("ON CONFLICT") })
            let upsert = try #require(t.statements.first { $0.hasPrefix("INSERT") })
            #expect(upsert.contains(#"ON CONFLICT ("email") DO UPDATE SET"#))
            #expect(upsert.contains(#""name" = excluded."name""#))
            #expect(!upsert.contains("note"))
            #expect(upsert.hasSuffix(#"RETURNING "id""#))

            // The same values again, twice: still one row, same id.
            let third = contact("a@x", "Annie")
            try third.saveOrUpdate()
            try third.saveOrUpdate()
            #expect(third.id == firstId)
            #expect(try rows(t) == ["\(firstId)|Annie|a@x|keep"])

            // A fresh email inserts.
            let other = contact("b@x", "Bob")
            try other.saveOrUpdate()
            let otherId = try #require(other.id)
            #expect(otherId != firstId)
            #expect(try rows(t) == ["\(firstId)|Annie|a@x|keep", "\(otherId)|Bob|b@x|NULL"])

            // Never REPLACE (which would delete the row and reset note).
            #expect(!t.statements.contains { $0.uppercased().contains("REPLACE") })
        }
    }

    @Test(arguments: Engine.available) func saveOrUpdateByPrimaryKey(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookContact.self)
            let a = contact("a@x", "Ann", note: "keep")
            try a.save()
            let b = contact("b@x", "Bob", note: "b note")
            try b.save()
            t.clearLog()

            let byId = HookContact()
            byId.id = b.id
            byId.name = "Robert"
            try byId.saveOrUpdate()
            #expect(byId.id == b.id)
            #expect(try rows(t) == ["1|Ann|a@x|keep", "2|Robert|b@x|b note"])
            #expect(t.statements.contains { $0.contains(#"ON CONFLICT ("id")"#) })

            // The key takes precedence over the unique email: the row with that id is updated.
            let both = HookContact()
            both.id = a.id
            both.email = "a@x"
            both.note = "changed"
            try both.saveOrUpdate()
            #expect(try rows(t) == ["1|Ann|a@x|changed", "2|Robert|b@x|b note"])

            // An id no row has: inserted with that id.
            let newId = HookContact()
            newId.id = 50
            newId.name = "Zed"
            try newId.saveOrUpdate()
            #expect(newId.id == 50)
            #expect(try rows(t) == ["1|Ann|a@x|changed", "2|Robert|b@x|b note", "50|Zed|NULL|NULL"])

            // A model loaded and re-upserted with nothing modified: no change.
            let loaded = try #require(try HookContact.dao.findById(1))
            try loaded.saveOrUpdate()
            #expect(try rows(t) == ["1|Ann|a@x|changed", "2|Robert|b@x|b note", "50|Zed|NULL|NULL"])
            #expect(!t.statements.contains { $0.uppercased().contains("REPLACE") })
        }
    }

    @Test(arguments: Engine.available) func saveOrUpdateWithTwoUniqueKeysUsesTheFirstDeclaredOne(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookDualKey.self)
            let first = HookDualKey()
            first.name = "A"
            first.email = "a@x"
            first.phone = "111"
            try first.save()
            // Same email (the first unique key), a new phone: the row with that email is updated.
            let again = HookDualKey()
            again.name = "A2"
            again.email = "a@x"
            again.phone = "222"
            t.clearLog()
            let outcome = Result { try again.saveOrUpdate() }
            #expect(throws: Never.self) { try outcome.get() }
            #expect(t.statements.contains { $0.contains(#"ON CONFLICT ("email")"#) }, "\(t.statements)")
            #expect(again.id == first.id)
            let rows = try t.db.find("select id, name, email, phone from \"HookDualKey\" order by id").map {
                "\($0.id as Int? ?? -1)|\($0.name as String? ?? "NULL")|\($0.email as String? ?? "NULL")|\($0.phone as String? ?? "NULL")"
            }
            #expect(rows == ["1|A2|a@x|222"])
            // Only the second key supplied: it is the conflict target.
            let second = HookDualKey()
            second.name = "B"
            second.email = "b@x"
            second.phone = "333"
            try second.save()
            let byPhone = HookDualKey()
            byPhone.phone = "333"
            byPhone.name = "by phone"
            try byPhone.saveOrUpdate()
            #expect(byPhone.id == second.id)
            #expect(try HookDualKey.dao.count() == 2)
            let updated = try #require(try HookDualKey.dao.findById(second.id))
            #expect(updated.name == "by phone")
            #expect(updated.email == "b@x")
        }
    }

    @Test(arguments: Engine.available) func saveOrUpdateRefusesWhatWouldBreakAnotherRow(engine: Engine) throws {
        try withDatabase(engine: engine) { t throws in
            t.context.register(HookContact.self)
            try contact("a@x", "Ann", note: "keep").save()
            try contact("b@x", "Bob", note: "b note").save()

            // Row 1 by key, taking row 2's email: a UNIQUE violation, not a silent REPLACE of row 2.
            let steal = HookContact()
            steal.id = 1
            steal.email = "b@x"
            let error = try #require(throws: DatabaseError.self) { try steal.saveOrUpdate() }
            #expect(error.message.localizedCaseInsensitiveContains("unique"))
            #expect(try rows(t) == ["1|Ann|a@x|keep", "2|Bob|b@x|b note"])
            #expect(steal.modifiedColumns.sorted() == ["email", "id"])   // nothing was cleared

            // Neither key nor a unique column supplied: a plain insert.
            let noKey = contact(nil, "Nobody")
            try noKey.saveOrUpdate()
            #expect(noKey.id == 3)
            #expect(try rows(t) == ["1|Ann|a@x|keep", "2|Bob|b@x|b note", "3|Nobody|NULL|NULL"])
            // A NULL email is not a conflict: two rows with NULL emails may coexist.
            let noKey2 = contact(nil, "Nobody")
            try noKey2.saveOrUpdate()
            #expect(noKey2.id == 4)

            // A value of the wrong type for a declared column is refused with nothing written.
            let bad = HookContact()
            bad.email = "c@x"
            bad["name"] = Data([0xff])
            #expect(throws: ConversionError.self) { try bad.saveOrUpdate() }
            #expect(bad.id == nil)
            #expect(try HookContact.dao.count() == 4)
        }
    }
}
