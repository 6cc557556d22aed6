import Foundation
import Testing
@testable import DicRecord

final class UndoPupil: Model {
    @Column var name: String?
    @Column var age: Int = 0
}

/// A save whose transaction rolls back leaves its record as it was: no generated key, its
/// modified flags back, so saving again inserts again and an update still has its edits.
@Suite struct RollbackUndoTests {
    /// The rollback log keeps its tail's room for the connection's next transaction: what a
    /// committed transaction saved stays saved, what the next one rolls back is undone.
    @Test func aTransactionAfterACommittedOneUndoesOnlyItsOwnSaves() throws {
        try withDatabase { t in
            try t.db.update("create table q (id integer primary key, v integer)")
            let kept = try (0..<3).map { try Record(["v": $0]) }
            let undone = try (0..<2).map { try Record(["v": 10 + $0]) }
            try t.db.tx { db in
                for r in kept { try db.save("q", r) }
                return true
            }
            try t.db.tx { db in
                for r in undone { try db.save("q", r) }
                #expect(undone.map { $0["id"] as Int? } == [4, 5])
                return false
            }
            #expect(kept.map { $0["id"] as Int? } == [1, 2, 3])
            #expect(undone.allSatisfy { !$0.hasColumn("id") && $0.modifiedColumns == ["v"] })
            #expect(try t.db.queryInt("select count(*) from q") == 3)
        }
    }

    @Test func aFailedBatchSaveLeavesNoKeysBehind() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, name text unique)")
            let records = try (0..<10).map { try Record(["name": $0 == 6 ? "dup" : "n\($0)"]) }
            let clash = try Record(["name": "dup"])
            try t.db.save("p", clash)
            #expect(throws: DatabaseError.self) { try t.db.batchSave("p", records) }
            for record in records {
                #expect(record.hasColumn("id") == false)
                #expect(record.modifiedColumns == ["name"])
            }
            #expect(try t.db.queryInt("select count(*) from p") == 1)
            // Fix the bad one and save them all again: every record is inserted, fresh keys.
            records[6].name = "n6"
            #expect(try t.db.batchSave("p", records) == Array(repeating: 1, count: 10))
            #expect(records.map { $0["id"] as Int? } == (2...11).map { Optional($0) })
            #expect(try t.db.queryInt("select count(*) from p") == 11)
        }
    }

    @Test func aModelSavedInATransactionThatRollsBackCanBeSavedAgain() throws {
        try withDatabase { t in
            t.context.register(UndoPupil.self)
            let pupil = UndoPupil()
            pupil.name = "ann"
            try t.db.tx { _ in
                try pupil.save()
                #expect(pupil.id == 1)
                return false
            }
            #expect(pupil.id == nil)
            #expect(pupil.modifiedColumns.contains("name"))
            try pupil.save()
            #expect(try UndoPupil.dao.findById(pupil.id)?.name == "ann")
            #expect(try UndoPupil.dao.count() == 1)
        }
    }

    @Test func anUpdateRolledBackKeepsItsEditsMarked() throws {
        try withDatabase { t in
            t.context.register(UndoPupil.self)
            let pupil = UndoPupil()
            pupil.name = "bob"
            try pupil.save()
            pupil.age = 12
            #expect(throws: DicRecordError.self) {
                try t.db.tx { _ in
                    try pupil.update()
                    throw DicRecordError(.invalidArgument, "stop")
                }
            }
            #expect(pupil.modifiedColumns == ["age"])
            #expect(try pupil.update())
            #expect(try UndoPupil.dao.findById(pupil.id)?.age == 12)
        }
    }

    @Test func savepointsUndoOnlyWhatRolledBack() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, name text)")
            let kept = try Record(["name": "kept"]), dropped = try Record(["name": "dropped"])
            let insideDropped = try Record(["name": "inside"])
            try t.db.tx { db in
                try db.save("p", kept)
                try db.tx { db in
                    try db.save("p", dropped)
                    return false
                }
                return true  // the outer commits: only the inner save is undone
            }
            #expect(kept["id"] as Int? == 1)
            #expect(dropped.hasColumn("id") == false)
            try t.db.tx { db in
                try db.tx { db in
                    try db.save("p", insideDropped)
                    return true   // released into the outer transaction...
                }
                return false      // ...which rolls back: undone too
            }
            #expect(insideDropped.hasColumn("id") == false)
            #expect(insideDropped.modifiedColumns == ["name"])
            #expect(try t.db.queryInt("select count(*) from p") == 1)
        }
    }

    @Test func anExplicitKeyStaysAndItsFlagsComeBack() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, name text)")
            let record = try Record(["id": 42, "name": "x"])
            try t.db.tx { db in
                try db.save("p", record)
                return false
            }
            #expect(record["id"] as Int? == 42)
            #expect(Set(record.modifiedColumns) == ["id", "name"])
        }
    }

    /// A transaction begun by raw SQL and left open would be joined by whoever writes next: it is
    /// rolled back and the call throws; the connection is clean for the next caller.
    @Test func aRawBeginLeftOpenIsRolledBackAndReported() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, name text)")
            let error = try #require(throws: DicRecordError.self) { try t.db.update("BEGIN") }
            #expect(error.kind == DicRecordError.Kind.misuse)
            #expect(error.message.contains("use tx"))
            let inside = try #require(throws: DicRecordError.self) {
                try t.db.execute { connection in
                    try connection.execute("BEGIN; INSERT INTO p (name) VALUES ('stray')")
                }
            }
            #expect(inside.kind == DicRecordError.Kind.misuse)
            #expect(try t.db.queryInt("select count(*) from p") == 0)
            #expect(try t.db.tx { db in try db.update("insert into p (name) values ('ok')") == 1 })
            #expect(try t.db.queryInt("select count(*) from p") == 1)
        }
    }

    /// The log keeps its entries in chunks (`SaveUndoLog.chunkSize`): saves on both sides of a
    /// chunk's end, in savepoints released into their transaction and rolled back, are all undone,
    /// and only they.
    @Test func savesAcrossTheLogsChunksAreUndoneExactly() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, name text)")
            let size = SaveUndoLog.chunkSize
            let outer = try (0..<(size - 3)).map { try Record(["name": "o\($0)"]) }
            let released = try (0..<(size + 5)).map { try Record(["name": "r\($0)"]) }
            let dropped = try (0..<7).map { try Record(["name": "d\($0)"]) }
            try t.db.tx { db in
                try db.batchSave("p", outer)
                try db.tx { db in
                    try db.tx { db in
                        _ = try db.batchSave("p", released)
                        return true      // released into the savepoint above, across a chunk's end
                    }
                    return true          // and into the transaction
                }
                try db.tx { db in
                    _ = try db.batchSave("p", dropped)
                    return false         // rolled back alone
                }
                #expect(outer.allSatisfy { $0.hasColumn("id") } && released.allSatisfy { $0.hasColumn("id") })
                #expect(dropped.allSatisfy { !$0.hasColumn("id") && $0.modifiedColumns == ["name"] })
                return false             // then everything goes
            }
            for record in outer + released + dropped {
                #expect(record.hasColumn("id") == false)
                #expect(record.modifiedColumns == ["name"])
            }
            #expect(try t.db.queryInt("select count(*) from p") == 0)
            // Saved again, for good: keys in order, nothing left to undo from before.
            try t.db.tx { db in try db.batchSave("p", outer + released); return true }
            #expect((outer + released).map { $0["id"] as Int? } == (1...(2 * size + 2)).map { Optional($0) })
        }
    }

    /// The rare parts of an undo entry: flags past the 64th column, and a key that held a value
    /// before the save wrote one back (an upsert's RETURNING).
    @Test func flagsPastTheSixtyFourthAndAPreviousKeyComeBack() throws {
        try withDatabase { t in
            let names = (0..<70).map { "c\($0)" }
            try t.db.update("create table wide (id integer primary key, \(names.map { "\($0) integer" }.joined(separator: ", ")))")
            let wide = Record()
            for (i, name) in names.enumerated() { wide.set(name, i) }
            try t.db.tx { db in
                try db.save("wide", wide)
                #expect(wide.modifiedColumns.isEmpty && wide["id"] as Int? == 1)
                return false
            }
            #expect(wide.modifiedColumns == names)
            #expect(wide.hasColumn("id") == false)

            t.context.register(UndoPupil.self)
            let pupil = UndoPupil()
            pupil.name = "dee"
            try pupil.save()
            let id = try #require(pupil.id)
            let twin = UndoPupil()
            twin.id = id
            twin.name = "dee again"
            try t.db.tx { _ in
                let saved = try twin.saveOrUpdate()
                #expect(saved)
                return false
            }
            #expect(twin.id == id)
            #expect(twin.modifiedColumns.contains("name"))
            #expect(try UndoPupil.dao.findById(id)?.name == "dee")

            // A key that held another value gets it back.
            let record = try Record(["name": "x", "id": 7])
            let layout = record.layout   // (one thread: no lock needed)
            let undo = RollbackUndo(target: record, layout: layout, bits: 0b1, extra: .init(more: [], previousKey: .integer(5)),
                                    depth: 1, keyPosition: 1, previousKey: .other)
            _ = record.clearModified()
            undo.apply()
            #expect(record["id"] as Int? == 5)
            #expect(record.modifiedColumns == ["name"])
        }
    }

    /// A key set to nil on purpose is a modified column: a rolled-back save gives the flag back
    /// with the NULL.
    @Test func aKeySetToNilKeepsItsFlagThroughARollback() throws {
        try withDatabase { t in
            try t.db.update("create table p (id integer primary key, name text)")
            let record = try Record(["id": nil, "name": "n"])
            #expect(Set(record.modifiedColumns) == ["id", "name"])
            try t.db.tx { db in
                try db.save("p", record)
                #expect(record["id"] as Int? == 1 && record.modifiedColumns.isEmpty)
                return false
            }
            #expect(record.hasColumn("id") && record.storedValue("id") == .null)
            #expect(Set(record.modifiedColumns) == ["id", "name"])
        }
    }

    @Test func asyncTransactionsUndoToo() async throws {
        try await withDatabase { t in
            t.context.register(UndoPupil.self)
            let pupil = UndoPupil()
            pupil.name = "cy"
            let committed = try await t.db.tx { _ in
                try await pupil.save()
                return false
            }
            #expect(committed == false)
            #expect(pupil.id == nil)
            try await pupil.save()
            #expect(pupil.id == 1)
        }
    }
}
