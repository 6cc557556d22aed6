import Foundation
import Testing
@testable import DicRecord

// Failure safety: a transaction or batch that fails part-way (full disk, a constraint, a hook
// that throws) leaves the database exactly as it was — every table's rows in order and the
// schema — and the error says what failed. (Single-statement bad input: BadInputTests;
// tx/savepoint semantics: TransactionTests; a hook stopping a single save: ModelHookTests.)

final class SafetyItem: Model {
    @Column var name: String?
    @Column var qty: Int?
    override class var tableName: String { "safety_item" }
    override class var indexes: [Index] { [Index("name", unique: true)] }

    /// When set, `willSave` refuses.
    var refuse = false
    override func willSave() throws {
        if refuse { throw FailureSafetyTests.Refused(name: name) }
    }
}

@Suite("Failure safety: failed transactions and batches change nothing")
struct FailureSafetyTests {
    struct Refused: Error, Equatable { let name: String? }

    /// Everything in the file: sqlite_master, and every table's rows in rowid order (sqlite_sequence included).
    struct Snapshot: Equatable, CustomStringConvertible {
        var master: [[DatabaseValue]]
        var tables: [String: [[DatabaseValue]]]
        var description: String { "\(master.count) schema entries, rows: \(tables.mapValues(\.count))" }
    }

    private static func snapshot(_ db: Db) throws -> Snapshot {
        try db.execute { connection in
            #expect(!connection.isInTransaction)
            let master = try connection.rows("select type, name, tbl_name, rootpage, sql from sqlite_master order by type, name")
            var tables: [String: [[DatabaseValue]]] = [:]
            for row in try connection.rows("select name from sqlite_master where type = 'table' order by name") {
                guard case .text(let name) = row[0] else { continue }
                tables[name] = try connection.rows("select * from \(SqlText.quote(name)) order by rowid")
            }
            return Snapshot(master: master, tables: tables)
        }
    }

    private static func expectUnchanged(_ before: Snapshot, _ db: Db, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let after = try snapshot(db)
        #expect(after == before, "the database changed: before \(before), after \(after)", sourceLocation: sourceLocation)
        #expect(try db.queryString("PRAGMA integrity_check") == "ok", sourceLocation: sourceLocation)
    }

    /// `code(id, code unique, note)` with an AUTOINCREMENT key (so sqlite_sequence is in the snapshot) and 3 rows.
    private static func makeCodes(_ db: Db) throws {
        try db.update("create table code(id integer primary key autoincrement, code text not null unique, note text)")
        try db.update("create index code_note on code(note)")
        try db.batch("insert into code(code, note) values (?, ?)", [["existing-1", "a"], ["existing-2", "b"], ["existing-3", "c"]])
    }

    // MARK: (a) Full disk

    @Test func aFullDiskFailsTheTransactionOrBatchAndChangesNothing() throws {
        try withDatabase { t throws in
            try Self.makeCodes(t.db)
            let before = try Self.snapshot(t.db)
            let pages = try #require(try t.db.queryInt("PRAGMA page_count"))
            // The writer may grow the file by two pages only: "disk full" for any real insert.
            try t.db.execute { connection in try connection.execute("PRAGMA max_page_count = \(pages + 2)") }
            #expect(try t.db.queryInt("PRAGMA max_page_count") == pages + 2)

            let payload = String(repeating: "x", count: 1000)
            let sql = "insert into code(code, note) values (?, ?)"
            let rows: [[DatabaseArgument]] = (0..<2000).map { ["full-\($0)", payload] }

            let tx = try #require(throws: DatabaseError.self) {
                try t.db.tx { db in
                    for row in rows { try db.update(sql, arguments: StatementArguments(row)) }
                    return true
                }
            }
            #expect(tx.resultCode == 13)                    // SQLITE_FULL
            #expect(tx.sql == sql)
            try Self.expectUnchanged(before, t.db)

            let batch = try #require(throws: DatabaseError.self) { try t.db.batch(sql, rows) }
            #expect(batch.resultCode == 13)
            #expect(batch.batchPosition?.count == 2000)
            try Self.expectUnchanged(before, t.db)

            let records = try (0..<2000).map { try Record(["code": "record-\($0)", "note": payload]) }
            let save = try #require(throws: DatabaseError.self) { try t.db.batchSave("code", records) }
            #expect(save.resultCode == 13)
            #expect(save.batchPosition?.count == 2000)
            try Self.expectUnchanged(before, t.db)

            // With room again, the same transaction goes through.
            try t.db.execute { connection in try connection.execute("PRAGMA max_page_count = 1073741823") }
            #expect(try t.db.tx { db in
                for row in rows { try db.update(sql, arguments: StatementArguments(row)) }
                return true
            })
            #expect(try t.db.queryInt("select count(*) from code") == 2003)
            #expect(try t.db.queryString("PRAGMA integrity_check") == "ok")
        }
    }

    // MARK: (b) A constraint violation part-way through a batch

    @Test func aUniqueViolationAtRow500OfABatchWritesNothingAndNamesTheRow() throws {
        try withDatabase { t throws in
            try Self.makeCodes(t.db)
            let before = try Self.snapshot(t.db)
            let sql = "insert into code(code, note) values (?, ?)"
            var rows: [[DatabaseArgument]] = (0..<1000).map { ["batch-\($0)", "n\($0)"] }
            rows[500] = ["batch-17", "duplicate"]           // the same code as row 17 of this batch

            let error = try #require(throws: DatabaseError.self) { try t.db.batch(sql, rows) }
            #expect(error.extendedResultCode == 2067)       // SQLITE_CONSTRAINT_UNIQUE
            #expect(error.batchPosition == BatchPosition(index: 500, count: 1000))
            #expect(error.sql == sql)
            #expect(error.arguments == [.text("batch-17"), .text("duplicate")])
            #expect(error.description.contains("batch item 500 (0-based) of 1000"))
            #expect(error.description.contains(sql))
            try Self.expectUnchanged(before, t.db)

            // A row the library refuses itself (wrong argument count) is named the same way.
            rows[500] = ["batch-500"]
            let count = try #require(throws: DicRecordError.self) { try t.db.batch(sql, rows) }
            #expect(count.kind == .argumentCount)
            #expect(count.batchPosition == BatchPosition(index: 500, count: 1000))
            #expect(count.description.contains("batch item 500"))
            try Self.expectUnchanged(before, t.db)

            // Fixed, the batch goes through whole.
            rows[500] = ["batch-500", "n500"]
            #expect(try t.db.batch(sql, rows) == Array(repeating: 1, count: 1000))
            #expect(try t.db.queryInt("select count(*) from code") == 1003)
        }
    }

    @Test func aFailingStatementAtIndex500OfASqlBatchWritesNothingAndNamesTheStatement() throws {
        try withDatabase { t throws in
            try Self.makeCodes(t.db)
            let before = try Self.snapshot(t.db)
            var statements: [Sql] = (0..<1000).map { i in
                switch i % 3 {
                case 0: Sql("insert into code(code, note) values (?, ?)", "sql-\(i)", "n")
                case 1: Sql("update code set note = ? where code = ?", "touched-\(i)", "existing-1")
                default: Sql("delete from code where code = ?", "existing-3")
                }
            }
            let bad = Sql("update code set code = 'existing-2' where code = ?", "existing-1")
            statements[500] = bad

            let error = try #require(throws: DatabaseError.self) { try t.db.batch(statements) }
            #expect(error.extendedResultCode == 2067)
            #expect(error.batchPosition == BatchPosition(index: 500, count: 1000))
            #expect(error.sql == bad.sql)
            #expect(error.description.contains("batch item 500 (0-based) of 1000"))
            #expect(error.description.contains(bad.sql))
            try Self.expectUnchanged(before, t.db)

            // A statement that does not compile is named too.
            statements[500] = Sql("insert into no_such_table values (1)")
            let missing = try #require(throws: DatabaseError.self) { try t.db.batch(statements) }
            #expect(missing.batchPosition?.index == 500)
            #expect(missing.message.contains("no_such_table"))
            try Self.expectUnchanged(before, t.db)
        }
    }

    // MARK: (c) A hook that throws in a transaction that already saved models

    @Test func aThrowingWillSaveMidTransactionRollsBackEveryEarlierSave() throws {
        try withDatabase { t throws in
            t.context.register(SafetyItem.self)
            let kept = SafetyItem()
            kept.name = "kept"
            kept.qty = 1
            try kept.save()
            let doomed = SafetyItem()
            doomed.name = "doomed"
            try doomed.save()
            try Self.makeCodes(t.db)
            let before = try Self.snapshot(t.db)

            #expect(throws: Refused(name: "refused")) {
                try t.db.tx { db in
                    for i in 0..<20 {
                        let item = SafetyItem()
                        item.name = "new-\(i)"
                        try item.save()
                    }
                    kept.qty = 99
                    #expect(try kept.update())
                    #expect(try doomed.delete())
                    try db.update("insert into code(code) values ('in-tx')")
                    #expect(try SafetyItem.dao.count() == 21)
                    let refused = SafetyItem()
                    refused.name = "refused"
                    refused.refuse = true
                    try refused.save()
                    Issue.record("the refused save did not throw")
                    return true
                }
            }
            try Self.expectUnchanged(before, t.db)
            #expect(try SafetyItem.dao.findById(kept.id ?? -1)?.qty == 1)

            // A nested tx that the hook fails, caught by the outer closure: only the nested work goes.
            #expect(try t.db.tx { db in
                let outer = SafetyItem()
                outer.name = "outer"
                try outer.save()
                #expect(throws: Refused(name: "inner-refused")) {
                    try db.tx { _ in
                        let inner = SafetyItem()
                        inner.name = "inner"
                        try inner.save()
                        let refused = SafetyItem()
                        refused.name = "inner-refused"
                        refused.refuse = true
                        try refused.save()
                        return true
                    }
                }
                return true
            })
            #expect(try t.db.query("select name from safety_item order by id", as: String.self) == ["kept", "doomed", "outer"])
        }
    }

    // MARK: (d) batchSave / batchUpdate with a record that fails part-way

    @Test func aBatchSaveWhoseRecord500FailsWritesNothingAndNamesTheRecord() throws {
        try withDatabase { t throws in
            try Self.makeCodes(t.db)
            let before = try Self.snapshot(t.db)
            func records() throws -> [Record] {
                try (0..<1000).map { try Record(["code": "save-\($0)", "note": "n\($0)"]) }
            }

            // A UNIQUE violation.
            var batch = try records()
            batch[500] = try Record(["code": "existing-2", "note": "duplicate"])
            let unique = try #require(throws: DatabaseError.self) { try t.db.batchSave("code", batch) }
            #expect(unique.extendedResultCode == 2067)
            #expect(unique.batchPosition == BatchPosition(index: 500, count: 1000))
            #expect(unique.sql?.hasPrefix("INSERT INTO \"code\"") == true)
            #expect(unique.description.contains("batch item 500 (0-based) of 1000"))
            try Self.expectUnchanged(before, t.db)

            // A column the table lacks: its INSERT does not compile.
            batch = try records()
            batch[500].set("nope", 1)
            let column = try #require(throws: DatabaseError.self) { try t.db.batchSave("code", batch) }
            #expect(column.message.contains("nope"))
            #expect(column.batchPosition == BatchPosition(index: 500, count: 1000))
            try Self.expectUnchanged(before, t.db)

            // A NOT NULL violation, inside a transaction that saved models first: all of it rolls back.
            t.context.register(SafetyItem.self)
            let beforeModels = try Self.snapshot(t.db)
            batch = try records()
            batch[500].set("code", nil)
            let inTx = try #require(throws: DatabaseError.self) {
                try t.db.tx { db in
                    for i in 0..<5 {
                        let item = SafetyItem()
                        item.name = "tx-\(i)"
                        try item.save()
                    }
                    try db.batchSave("code", batch)
                    return true
                }
            }
            #expect(inTx.extendedResultCode == 1299)        // SQLITE_CONSTRAINT_NOTNULL
            #expect(inTx.batchPosition?.index == 500)
            try Self.expectUnchanged(beforeModels, t.db)

            // The database is usable and takes the whole batch. (The records of the failed batch
            // got their state back too: RollbackUndoTests.)
            let retry = try records()
            #expect(try t.db.batchSave("code", retry).count == 1000)
            #expect(try t.db.queryInt("select count(*) from code") == 1003)
        }
    }

    @Test func aBatchUpdateWhoseRecord500FailsWritesNothingAndNamesTheRecord() throws {
        try withDatabase { t throws in
            try t.db.update("create table code(id integer primary key, code text not null unique, note text)")
            try t.db.batch("insert into code(id, code, note) values (?, ?, ?)", (1...1000).map { (i: Int) -> [DatabaseArgument] in [i, "c\(i)", "n"] })
            let before = try Self.snapshot(t.db)
            let records = try t.db.find("select * from code order by id")
            for (i, record) in records.enumerated() { record.note = "updated-\(i)" }
            records[500].set("code", "c1")                      // clashes with row 1
            let error = try #require(throws: DatabaseError.self) { try t.db.batchUpdate("code", records) }
            #expect(error.extendedResultCode == 2067)
            #expect(error.batchPosition == BatchPosition(index: 500, count: 1000))
            #expect(error.description.contains("batch item 500"))
            try Self.expectUnchanged(before, t.db)
        }
    }
}
