import Foundation
import Testing
@testable import DicRecord

/// The reentrancy rule: a call made on a config from inside another call on that config (an
/// `each` callback, a converter, a model hook, a `tx` closure) joins the connection the outer call
/// holds, or takes a free reader, and never waits for itself. A call inside the onOpen hook on the
/// config being opened throws `.misuse`. Each test runs under a watchdog, so a deadlock fails it.
@Suite struct ReentrancyTests {
    private func setUp(_ db: Db) throws {
        try db.update("create table t (id integer primary key, v integer, tag text)")
        try db.update("create table log (id integer primary key, note text)")
        try db.batch("insert into t (v, tag) values (?, ?)", (1...20).map { (i: Int) -> [DatabaseArgument] in [i, "tag\(i)"] })
    }

    private func guarded(_ body: @escaping @Sendable () throws -> Void) async throws {
        try await withWatchdog(seconds: 60) { try await onThread(body) }
    }

    @Test(arguments: [1, 4])
    func callsInsideEachCallbacksJoinOrTakeAReader(readers: Int) async throws {
        var options = DbContext.Options()
        options.readerCount = readers
        try await withDatabase(options: options) { t in
            try setUp(t.db)
            let db = t.db
            try await guarded {
                var visited = 0
                try db.each("select * from t order by id") { record in
                    visited += 1
                    let id: Int = try record.get("id")
                    // Reads, a nested each, writes and a transaction, all from inside the callback.
                    #expect(try db.findFirst("select v from t where id = ?", id)?["v"] as Int? == id)
                    var inner = 0
                    try db.each("select id from t where id <= ?", 3) { _ in inner += 1; return true }
                    #expect(inner == 3)
                    try db.update("insert into log (note) values (?)", "saw \(id)")
                    try db.tx { db in
                        try db.update("update t set tag = ? where id = ?", "seen", id)
                        return true
                    }
                    // A nested read takes a free reader (a fresh snapshot, which sees what the
                    // callback committed); with the only reader held by the each, it reads on that
                    // one, whose snapshot is the each's.
                    #expect(try db.queryInt("select count(*) from log") == (readers > 1 ? id : 0))
                    return id < 10
                }
                #expect(visited == 10)
                #expect(try db.queryInt("select count(*) from t where tag = 'seen'") == 10)
            }
        }
    }

    @Test func callsInsideAnEachInsideATransactionJoinTheTransaction() async throws {
        try await withDatabase { t in
            try setUp(t.db)
            let db = t.db
            try await guarded {
                let committed = try db.tx { db in
                    try db.each("select id from t") { record in
                        let id: Int = try record.get("id")
                        try db.update("insert into log (note) values (?)", "n\(id)")
                        return true
                    }
                    #expect(try db.queryInt("select count(*) from log") == 20)  // its own uncommitted work
                    return false
                }
                #expect(committed == false)
                #expect(try db.queryInt("select count(*) from log") == 0)
            }
        }
    }

    @Test func asyncEachCallbackCanCallTheDatabase() async throws {
        try await withDatabase { t in
            try setUp(t.db)
            let db = t.db
            let sum = Counter()
            try await withWatchdog(seconds: 60) {
                try await db.each("select id from t where id <= ?", 5) { record in
                    let id: Int = try record.get("id")
                    sum.add(try db.queryInt("select v from t where id = ?", id) ?? 0)
                    try db.update("insert into log (note) values ('async')")
                    return true
                }
            }
            #expect(sum.value == 15)
            #expect(try await db.queryInt("select count(*) from log") == 5)
        }
    }

    @Test func convertersThatCallTheDatabaseDoNotDeadlock() async throws {
        try await withDatabase { t in
            try setUp(t.db)
            let name = t.context.configName
            let registry = ContextRegistry.active
            t.context.register(converter: LookupConverter(configName: name, registry: registry))
            let db = t.db
            try await guarded {
                // decode runs a query while the outer read holds a reader.
                try db.each("select tag from t where id <= 3") { record in
                    let tag: Looked? = record["tag"]
                    #expect(tag?.rows == 20)
                    return true
                }
                // encode runs a query while the write holds the writer, inside a transaction.
                try db.tx { db in
                    try db.update("insert into log (note) values (?)", Looked(text: "x", rows: 0))
                    return true
                }
                #expect(try db.queryString("select note from log") == "x/20")
            }
        }
    }

    @Test func modelHooksThatCallTheDatabaseDoNotDeadlock() async throws {
        try await withDatabase { t in
            t.context.register(ReentrantNote.self)
            try await t.db.update("create table audit (id integer primary key, what text)")
            let db = t.db
            try await guarded {
                let note = ReentrantNote()
                note.text = "hello"
                let saved = try note.save()
                #expect(saved)
                #expect(try ReentrantNote.dao.findById(1)?.seenCount == 1)  // didLoad counted the table
                note.text = "again"
                try db.tx { _ in
                    try note.update()
                    return true
                }
                let deleted = try note.delete()
                #expect(deleted)
                #expect(try db.query("select what from audit order by id", as: String.self)
                        == ["willSave 0", "didSave 1", "willSave 1", "didSave 1", "didDelete 0"])
            }
        }
    }

    @Test func aCallInsideOnOpenThrowsInsteadOfWaitingForItself() async throws {
        var options = DbContext.Options()
        let outcomes = SqlLog(), opened = Counter()
        options.onOpen = { connection in
            // The writer opens first, at start; readers open lazily, inside a read, where a Db call
            // would wait for the connection being opened. It throws instead; the connection given
            // to the hook works.
            opened.add(1)
            guard opened.value > 1 else { return }
            do {
                _ = try Db.main.find("select 1")
                outcomes.append("ran")
            } catch let error as DicRecordError {
                outcomes.append("\(error.kind)")
            }
            try connection.execute("PRAGMA cache_size = 100")
        }
        try await withDatabase(options: options) { t in
            try setUp(t.db)
            let db = t.db
            try await guarded {
                let count = try db.queryInt("select count(*) from t")
                #expect(count == 20)
            }
            #expect(outcomes.statements.first == "misuse")
            #expect(!outcomes.statements.contains("ran"))
        }
    }
}

struct Looked: Sendable, Equatable {
    var text: String
    var rows: Int
}

/// A converter that queries the database in both directions.
struct LookupConverter: TypeConverter {
    let configName: String
    let registry: ContextRegistry
    var storageType: StorageType { .text }

    private func rows() throws -> Int {
        try ContextRegistry.withScoped(registry) {
            try Db.use(configName).queryInt("select count(*) from t") ?? -1
        }
    }

    func encode(_ value: Looked) throws -> DatabaseValue {
        .text("\(value.text)/\(try rows())")
    }

    func decode(_ value: DatabaseValue) throws -> Looked {
        guard case .text(let text) = value else { throw NotText() }
        return Looked(text: text, rows: try rows())
    }
}

struct NotText: Error {}

final class ReentrantNote: Model {
    @Column var text: String?
    var seenCount = 0

    private func audit(_ what: String) {
        let count = (try? ReentrantNote.dao.count()) ?? -1
        _ = try? Db.main.update("insert into audit (what) values (?)", "\(what) \(count)")
    }

    override func willSave() throws { audit("willSave") }
    override func didSave() { audit("didSave") }
    override func didDelete() { audit("didDelete") }
    override func didLoad() { seenCount = (try? ReentrantNote.dao.count()) ?? -1 }
}
