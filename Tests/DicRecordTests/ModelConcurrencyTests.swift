import Foundation
import Synchronization
import Testing
@testable import DicRecord

// Models used from many threads at once, each class first touched inside its test (so that key
// path resolution and schema building race), and the review's findings on the model code.

struct ConcPoint: Codable, Equatable, Sendable { var x: Int; var y: Int }

final class ConcAlpha: Model {
    @Column var name: String?
    @Column var tally: Int = 0
    @Column var ratio: Double?
    @Column var flag: Bool = false
    @Column var when: Date?
    @Column var tags: [String]?
    @Column var bytes: Data?
}

final class ConcBeta: Model {
    @Column var title: String?
    @Column var big: Int64?
    @Column var small: Int16 = 0
    @Column var score: Float?
    @Column var point: ConcPoint?
}

final class ConcGamma: Model {
    @Column var uuid: UUID?
    @Column var link: URL?
    @Column var price: Decimal?
    @Column var note: String = "none"
}

/// Every column an integer or a double: a SQLite fetch streams it into its wrappers.
final class ConcTally: Model {
    @Column var a: Int = 0
    @Column var b: Int64?
    @Column var c: Double = 0
}

final class ConcRow: Model {
    @Column var name: String?
    @Column var thread: Int = -1
    @Column var seq: Int = -1
    @Column var amount: Double?
    @Column var tags: [String]?
}

/// Its init sets a column (the schema build runs this init too).
final class ConcPreset: Model {
    @Column var score: Int?
    @Column var label: String?
    required init() {
        super.init()
        score = 5
    }
}

class ConcBase: Model {
    @Column var name: String?
    @Column var level: Int = 1
}

final class ConcDerived: ConcBase {
    @Column var extra: String?
    @Column var weight: Double = 0.5
}

final class ConcPair: Model {
    @Column var a: Int?
    @Column var b: Int?
    @Column var note: String?
    override class var primaryKey: String { "a, b" }
}

final class ConcMode: Model {
    @Column var mode: String = "basic"
    @Column var name: String?
    override class func constraint(for column: String) -> String? {
        column == "mode" ? "CHECK (mode IN ('basic', 'default'))" : nil
    }
}

final class ConcLegacy: Model {
    @Column var name: String?
    override class var droppedColumns: [String] { ["old"] }
}

final class ConcCountry: Model {
    @Column var code: String?
    @Column var name: String?
    override class var primaryKey: String { "code" }
}

final class ConcCity: Model {
    @Column var name: String?
    @Reference var country: ConcCountry?
}

final class ConcPeer: Model {
    @Column var name: String?
}

/// A stored property whose initializer queries another model (it runs before Model.init).
final class ConcHost: Model {
    @Column var name: String?
    let peerName: String? = (try? ConcPeer.dao.findFirst("select * from ConcPeer order by id"))?.name
}

final class ConcGeneric<T>: Model {
    @Column var name: String?
}

/// A non-optional column whose initial value differs per instance.
final class ConcToken: Model {
    @Column var token: UUID = UUID()
    @Column var name: String?
}

final class ConcSharedA: Model {
    @Column var a: String?
    override class var tableName: String { "conc_shared" }
}

final class ConcSharedB: Model {
    @Column var b: Int = 3
    override class var tableName: String { "conc_shared" }
}

final class ConcLate: Model {
    @Column var name: String?
}

final class ConcViewed: Model {
    @Column var name: String?
    override class var droppedColumns: [String] { ["old"] }
}

/// A type with a converter registered in one context only (none globally, not Codable).
private struct ConcCelsius: Sendable, Equatable { var degrees: Double }

private struct ConcCelsiusConverter: TypeConverter {
    var storageType: StorageType { .real }
    func encode(_ value: ConcCelsius) throws -> DatabaseValue { .real(value.degrees) }
    func decode(_ value: DatabaseValue) throws -> ConcCelsius {
        if case .real(let d) = value { return ConcCelsius(degrees: d) }
        throw ConversionError.cannotDecode(value, to: ConcCelsius.self, "expected degrees")
    }
}

private final class ConcThermo: Model {
    @Column var temp: ConcCelsius?
}

/// Counts its hooks.
final class ConcHooked: Model {
    @Column var name: String?
    nonisolated(unsafe) static var saves = 0
    override func didSave() { Self.saves += 1 }
}

/// Collects failures seen on worker threads; reported as issues on the test's own thread.
private final class Problems: Sendable {
    private let items = Mutex<[String]>([])
    private let total = Atomic<Int>(0)
    func check(_ ok: Bool, _ message: @autoclosure () -> String) {
        guard !ok else { return }
        total.add(1, ordering: .relaxed)
        let text = message()
        items.withLock { if $0.count < 10 { $0.append(text) } }
    }
    func report() {
        for item in items.withLock({ $0 }) { Issue.record("\(item)") }
        let count = total.load(ordering: .relaxed)
        if count > 10 { Issue.record("… \(count) failures in all") }
    }
}

/// Runs `body(index)` on `count` new threads released together, in the caller's context registry.
/// Waits at most `seconds`: a deadlock is a recorded issue, not a hung test.
private func onThreads(_ count: Int, seconds: Double = 30, _ name: String = #function,
                       _ body: @escaping @Sendable (Int) -> Void) {
    let seconds = seconds * Double(sanitizerSlowdown)   // ThreadSanitizer's build runs 5-15x slower
    let registry = ContextRegistry.scoped
    let gate = DispatchGroup()
    gate.enter()
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            gate.wait()
            ContextRegistry.withScoped(registry) { body(index) }
            done.leave()
        }.start()
    }
    gate.leave()
    if done.wait(timeout: .now() + seconds) == .timedOut {
        Issue.record("\(name): threads still running after \(Int(seconds)) s (deadlock?)")
    }
}

@Suite("Model concurrency and review findings")
struct ModelConcurrencyTests {
    // MARK: Task 1: concurrency

    @Test func freshModelClassesFromEightThreads() throws {
        let problems = Problems()
        onThreads(8) { i in
            for j in 0..<1000 {
                let k = i * 1000 + j
                let a = ConcAlpha(), b = ConcBeta(), g = ConcGamma()
                if j % 3 == 0 { _ = a.schema; _ = b.schema; _ = g.schema }
                problems.check(a.tally == 0 && !a.flag && a.name == nil && g.note == "none" && b.small == 0,
                               "initial values wrong at \(k)")
                a.name = "a\(k)"; a.tally = k; a.ratio = Double(k) / 4; a.flag = k % 2 == 0
                a.when = Date(timeIntervalSince1970: Double(k)); a.tags = ["t\(k)", "u"]; a.bytes = Data([UInt8(k & 0xff), 1])
                b.title = "b\(k)"; b.big = Int64(k) << 33; b.small = Int16(k % 30000); b.score = Float(k) + 0.5
                b.point = ConcPoint(x: k, y: -k)
                let uuid = UUID()
                g.uuid = uuid; g.link = URL(string: "https://example.com/\(k)"); g.price = Decimal(k) / 100; g.note = "n\(k)"
                problems.check(a.name == "a\(k)" && a.tally == k && a.ratio == Double(k) / 4 && a.flag == (k % 2 == 0)
                               && a.when == Date(timeIntervalSince1970: Double(k)) && a.tags == ["t\(k)", "u"]
                               && a.bytes == Data([UInt8(k & 0xff), 1]), "ConcAlpha \(k) reads \(a)")
                problems.check(b.title == "b\(k)" && b.big == Int64(k) << 33 && b.small == Int16(k % 30000)
                               && b.score == Float(k) + 0.5 && b.point == ConcPoint(x: k, y: -k), "ConcBeta \(k) reads \(b)")
                problems.check(g.uuid == uuid && g.link == URL(string: "https://example.com/\(k)")
                               && g.price == Decimal(k) / 100 && g.note == "n\(k)", "ConcGamma \(k) reads \(g)")
                problems.check(a.modifiedColumns.count == 7 && b.modifiedColumns.count == 5 && g.modifiedColumns.count == 4,
                               "modified columns wrong at \(k)")
            }
        }
        problems.report()
        #expect(ModelSchema.of(ConcAlpha.self).columns.map(\.name) == ["name", "tally", "ratio", "flag", "when", "tags", "bytes"])
        #expect(ModelSchema.of(ConcBeta.self).columns.map(\.slot) == [0, 1, 2, 3, 4])
        #expect(ModelSchema.of(ConcGamma.self).declarationError == nil)
    }

    /// Eight threads fetch streamed models of one class, read them, and write some back: each
    /// thread's models are its own (the schema, its offsets and the fetch's binding are shared).
    @Test func streamedModelsFromEightThreads() throws {
        var options = DbContext.Options()
        options.busyTimeout = 120
        try withDatabase(options: options) { t throws in
            t.context.register(ConcTally.self)
            try t.db.transaction { db in
                for n in 1...100 { try db.update("insert into ConcTally (a, b, c) values (?, ?, ?)", n, n % 3 == 0 ? nil : n * 2, Double(n) / 4) }
            }
            let problems = Problems()
            onThreads(8, seconds: 120) { i in
                for round in 0..<20 {
                    do {
                        let all = try ConcTally.dao.find("select * from ConcTally order by id")
                        problems.check(all.count == 100 && all.allSatisfy(\.valuesInWrappers), "thread \(i) round \(round): not streamed")
                        for m in all {
                            guard let id = m.id else { problems.check(false, "no id"); continue }
                            // `a` is the row's id until its thread writes it (negative).
                            problems.check(m.b == (id % 3 == 0 ? nil : Int64(id * 2)) && m.c == Double(id) / 4
                                           && (m.a == id || m.a < 0), "thread \(i): row \(id) reads \(m)")
                        }
                        // This thread's rows (id % 8 == i) are written back: the record is made
                        // from the wrappers, and an update writes one column.
                        for m in all where (m.id ?? 0) % 8 == i {
                            m.a = -(round + 1)
                            problems.check(try m.update() && m.modifiedColumns.isEmpty, "thread \(i): update of \(m)")
                        }
                    } catch {
                        problems.check(false, "thread \(i): \(error)")
                    }
                }
            }
            problems.report()
            #expect(try t.db.queryInt("select count(*) from ConcTally where a = -20") == 100)
        }
    }

    @Test func concurrentSavesWithConcurrentReads() throws {
        // Eight threads queue for one writer: on a slow, loaded machine (or under ThreadSanitizer)
        // a save can wait longer than the default 5 s busy timeout without anything being wrong.
        var options = DbContext.Options()
        options.busyTimeout = 120
        try withDatabase(options: options) { t throws in
            t.context.register(ConcRow.self)
            let problems = Problems()
            let writersDone = Atomic<Int>(0)
            let savedIds = Mutex<[Int]>([])
            let reads = Atomic<Int>(0)
            @Sendable func consistent(_ m: ConcRow) -> Bool {
                m.id != nil && m.name == "w\(m.thread)-\(m.seq)" && m.amount == Double(m.thread * 1000 + m.seq)
                    && m.tags == ["t\(m.thread)", "s\(m.seq)"] && m.modifiedColumns.isEmpty
            }
            // Threads that may each wait 120 s for the writer get as long (scaled for ThreadSanitizer).
            onThreads(11, seconds: 120) { i in
                if i < 8 {
                    var ids: [Int] = []
                    for j in 0..<200 {
                        let m = ConcRow()
                        m.name = "w\(i)-\(j)"; m.thread = i; m.seq = j; m.amount = Double(i * 1000 + j); m.tags = ["t\(i)", "s\(j)"]
                        do {
                            try m.save()
                            problems.check(consistent(m), "after save: \(m)")
                            if let id = m.id { ids.append(id) }
                        } catch { problems.check(false, "save \(i)/\(j): \(error)") }
                    }
                    savedIds.withLock { $0 += ids }
                    writersDone.add(1, ordering: .releasing)
                    return
                }
                let deadline = Date().addingTimeInterval(25)
                var lastCount = 0
                while writersDone.load(ordering: .acquiring) < 8 && Date() < deadline {
                    do {
                        let all = try ConcRow.dao.findAll()
                        problems.check(all.count >= lastCount, "findAll shrank: \(lastCount) -> \(all.count)")
                        lastCount = all.count
                        for m in all { problems.check(consistent(m), "findAll gave \(m)") }
                        for m in all.suffix(5) {
                            let again = try ConcRow.dao.findById(m.id)
                            problems.check(again.map(consistent) == true && again == m, "findById(\(m.id ?? -1)) gave \(String(describing: again))")
                        }
                        reads.add(1, ordering: .relaxed)
                    } catch { problems.check(false, "read: \(error)") }
                }
            }
            problems.report()
            let ids = savedIds.withLock { $0 }
            #expect(ids.count == 1600)
            #expect(Set(ids).count == 1600)
            let all = try ConcRow.dao.findAll()
            #expect(all.count == 1600)
            #expect(Set(all.compactMap(\.id)) == Set(ids))
            #expect(all.allSatisfy(consistent))
            #expect(Set(all.map { "\($0.thread)/\($0.seq)" }).count == 1600)
            #expect(reads.load(ordering: .relaxed) > 0)
        }
    }

    @Test func anInitThatSetsAColumn() throws {
        let problems = Problems()
        onThreads(8) { i in
            for j in 0..<1000 {
                let m = ConcPreset()
                if j % 2 == 0 { _ = m.schema }
                problems.check(m.score == 5 && m.label == nil && m.modifiedColumns == ["score"], "new ConcPreset: \(m)")
                m.label = "l\(i)-\(j)"; m.score = j
                problems.check(m.score == j && m.label == "l\(i)-\(j)", "ConcPreset reads \(m)")
            }
        }
        problems.report()
        let schema = ModelSchema.of(ConcPreset.self)
        #expect(schema.declarationError == nil)
        #expect(schema.columns.map(\.name) == ["score", "label"])
        try withDatabase { t throws in
            t.context.register(ConcPreset.self)
            let m = ConcPreset(); m.score = 42; m.label = "x"
            try m.save()
            let plain = ConcPreset()
            try plain.save()
            #expect(try t.db.queryInt("select score from ConcPreset where id = ?", plain.id) == 5)
            // BUG: the fetched record is handed to init(), which overwrites the stored 42 with 5.
            let found = try #require(try ConcPreset.dao.findById(m.id))
            #expect(found.score == 42)
            #expect(found.modifiedColumns.isEmpty)
            #expect(try ConcPreset.dao.findAll().map(\.score) == [42, 5])
            // … and an update of another column then writes the 5 back.
            found.label = "y"
            try found.update()
            #expect(try t.db.queryInt("select score from ConcPreset where id = ?", m.id) == 42)
        }
    }

    @Test func aSubclassAndItsBaseFromEightThreads() throws {
        try withDatabase { t throws in
            t.context.register(ConcBase.self, ConcDerived.self)
            let problems = Problems()
            onThreads(8) { i in
                for j in 0..<500 {
                    let base = ConcBase(), derived = ConcDerived()
                    if j % 2 == 0 { _ = derived.schema } else { _ = base.schema }
                    problems.check(base.level == 1 && derived.level == 1 && derived.weight == 0.5, "initial values at \(i)/\(j)")
                    base.name = "b\(i)-\(j)"; base.level = j
                    derived.name = "d\(i)-\(j)"; derived.level = j + 1; derived.extra = "e\(j)"; derived.weight = Double(j)
                    problems.check(base.name == "b\(i)-\(j)" && base.level == j, "base reads \(base)")
                    problems.check(derived.name == "d\(i)-\(j)" && derived.level == j + 1 && derived.extra == "e\(j)"
                                   && derived.weight == Double(j), "derived reads \(derived)")
                    if j % 10 == 0 {
                        do { try base.save(); try derived.save() } catch { problems.check(false, "save: \(error)") }
                    }
                }
                do {
                    for d in try ConcDerived.dao.findAll() {
                        problems.check(d.name?.hasPrefix("d") == true && d.level == Int(d.extra!.dropFirst())! + 1, "fetched derived \(d)")
                    }
                    for b in try ConcBase.dao.findAll() {
                        problems.check(b.name?.hasPrefix("b") == true && b.level % 10 == 0, "fetched base \(b)")
                    }
                } catch { problems.check(false, "findAll: \(error)") }
            }
            problems.report()
            #expect(ModelSchema.of(ConcBase.self).columns.map(\.name) == ["name", "level"])
            #expect(ModelSchema.of(ConcDerived.self).columns.map(\.name) == ["name", "level", "extra", "weight"])
            #expect(try ConcBase.dao.count() == 400)
            #expect(try ConcDerived.dao.count() == 400)
            #expect(try ConcDerived.dao.findAll().allSatisfy { $0.weight == Double($0.level - 1) })
        }
    }

    // MARK: Task 2: review findings (each test fails while its bug is there)

    /// Dao.swift:121-124: deleteById on a composite key deletes by the first key column only.
    @Test func deleteByIdOnACompositeKeyIsRefused() throws {
        try withDatabase { t throws in
            t.context.register(ConcPair.self)
            for (a, b) in [(1, 1), (1, 2), (2, 1)] {
                let p = ConcPair(); p.a = a; p.b = b; try p.save()
            }
            #expect(throws: DicRecordError.self) { try ConcPair.dao.deleteById(1) }
            #expect(try ConcPair.dao.count() == 3)
            #expect(throws: DicRecordError.self) { try ConcPair.dao.findById(1) }
        }
    }

    /// SchemaUpkeep.swift:227: a constraint merely containing the word "default" drops the DEFAULT.
    @Test func aConstraintMentioningDefaultKeepsTheDefault() throws {
        try withDatabase { t throws in
            t.context.register(ConcMode.self)
            let sql = try t.db.queryString("select sql from sqlite_master where name = 'ConcMode'") ?? ""
            #expect(sql.contains("DEFAULT 'basic'"))
            let m = ConcMode(); m.name = "n"
            #expect(m.mode == "basic")
            #expect(throws: Never.self) { try m.save() }
            #expect(try ConcMode.dao.findFirstByCondition("name = 'n'")?.mode == "basic")
        }
    }

    /// SchemaUpkeep.swift:147-148: a rebuild keeps only declared columns: undeclared data is lost.
    @Test func aRebuildKeepsUndeclaredColumns() throws {
        try withDatabase { t throws in
            try t.db.update("create table ConcLegacy (id integer primary key autoincrement, name text, old text unique, note text)")
            try t.db.update("insert into ConcLegacy (name, old, note) values ('a', 'x', 'keep me')")
            t.context.register(ConcLegacy.self)   // "old" is UNIQUE: SQLite cannot drop it in place
            let columns = try t.db.find("pragma table_info('ConcLegacy')").map { $0.name as String? ?? "" }
            #expect(!columns.contains("old"))
            #expect(columns.contains("note"))
            #expect(try ConcLegacy.dao.findAll().first?["note"] as? String == "keep me")
        }
    }

    /// A reference to a model keyed by another column than `id` is refused at declaration
    /// (it would store NULL): the model's operations say why.
    @Test func aReferenceToAModelWithATextKeyIsRefused() throws {
        try withDatabase { t throws in
            t.context.register(ConcCountry.self, ConcCity.self)
            let error = #expect(throws: DicRecordError.self) { try ConcCity.dao.count() }
            #expect(error?.kind == DicRecordError.Kind.invalidModel)
            #expect(error?.message.contains("ConcCountry") ?? false)
            #expect(try t.db.queryInt("select count(*) from sqlite_master where name = 'ConcCity'") == 0)
        }
    }

    /// Model.swift:305-314: a fetch made while a model is built takes the pending record's place.
    @Test func aModelWhoseInitFetchesAnotherModel() throws {
        try withDatabase { t throws in
            t.context.register(ConcPeer.self, ConcHost.self)
            let peer = ConcPeer(); peer.name = "p"; try peer.save()
            let host = ConcHost(); host.name = "h"; try host.save()
            #expect(host.peerName == "p")
            let found = try ConcHost.dao.findAll()
            #expect(found.map(\.name) == ["h"])
            #expect(found.first?.id == host.id)
        }
    }

    /// A generic model's key paths are new objects on every access: columns are found by where
    /// their wrappers lie in the object, the same for every access, so nothing grows per access.
    @Test func aGenericModelDoesNotGrowTheKeyTables() throws {
        let m = ConcGeneric<Int>()
        _ = m.schema
        for i in 0..<200 { m.name = "n\(i)"; _ = m.name }
        #expect(m.name == "n199")
        #expect(ModelSchema.of(ConcGeneric<Int>.self).offsetSlots.load(ordering: .acquiring).takeUnretainedValue().pairs.count == 1)
        let other = ConcGeneric<String>()
        other.name = "s"
        #expect(other.name == "s" && m.name == "n199")
    }

    /// Model+Persistence.swift:208 + SchemaUpkeep.swift:225-229: an unset non-optional column is
    /// left out of the INSERT, so the row gets the table's DEFAULT, not what the model reads.
    @Test func aSavedModelStoresTheInitialValueItReads() throws {
        try withDatabase { t throws in
            t.context.register(ConcToken.self)
            let a = ConcToken(), b = ConcToken()
            let tokens = [a.token, b.token]
            #expect(tokens[0] != tokens[1])
            try a.save(); try b.save()
            #expect(try ConcToken.dao.findById(a.id)?.token == tokens[0])
            #expect(try ConcToken.dao.findById(b.id)?.token == tokens[1])
        }
    }

    /// SchemaUpkeep.swift:23-31: the table-name clash check only covers one batch of registrations.
    @Test func twoModelsOnOneTableAreRefusedWhenRegisteredOneByOne() throws {
        try withDatabase { t throws in
            t.context.register(ConcSharedA.self)
            t.context.register(ConcSharedB.self)
            let error = #expect(throws: DicRecordError.self) { try ConcSharedB.dao.count() }
            #expect(error?.kind == .invalidModel)
            let columns = try t.db.find("pragma table_info('conc_shared')").map { $0.name as String? ?? "" }
            #expect(columns == ["id", "a"])
        }
    }

    /// SchemaUpkeep.swift:338: registering a model inside a transaction fails (BEGIN inside BEGIN).
    @Test func registeringInsideATransaction() throws {
        try withDatabase { t throws in
            try t.db.tx { _ in
                t.context.register(ConcLate.self)
                return true
            }
            #expect(throws: Never.self) { try ConcLate.dao.count() }
            // DbContext.swift:98/118: the failure is kept for good; a restart (whose upkeep
            // succeeds) does not clear it, and register() again is a no-op.
            t.context.stop()
            try t.context.start()
            t.context.register(ConcLate.self)
            #expect(try t.db.queryInt("select count(*) from sqlite_master where name = 'ConcLate'") == 1)
            #expect(throws: Never.self) { try ConcLate.dao.count() }
        }
    }

    /// A rebuild that a view on the table blocks (SQLite refuses the rename) changes nothing:
    /// the model's operations throw why, the data and the view are intact. (Known limit.)
    @Test func aRebuildBlockedByAViewChangesNothing() throws {
        try withDatabase { t throws in
            try t.db.update("create table ConcViewed (id integer primary key autoincrement, name text, old text unique)")
            try t.db.update("insert into ConcViewed (name, old) values ('a', 'x')")
            try t.db.update("create view conc_viewed_names as select name from ConcViewed")
            t.context.register(ConcViewed.self)
            #expect(throws: DatabaseError.self) { try ConcViewed.dao.count() }
            #expect(try t.db.queryString("select name from conc_viewed_names") == "a")
            #expect(try t.db.queryString("select old from ConcViewed") == "x")
        }
    }

    /// Model column types are checked against the global registry: a converter registered on a
    /// context only is refused with a message that says so. (Known limit.)
    @Test func aModelColumnWithOnlyAContextConverterIsRefused() throws {
        try withDatabase { t throws in
            t.context.register(converter: ConcCelsiusConverter())
            t.context.register(ConcThermo.self)
            let error = #expect(throws: DicRecordError.self) { try ConcThermo.dao.count() }
            #expect(error?.kind == DicRecordError.Kind.invalidModel)
            #expect(error?.message.contains("Converters.register") ?? false)
        }
    }

    /// Model+Persistence.swift:227-228: didSave() fires after an UPDATE that matched no row.
    @Test func didSaveDoesNotFireWhenTheUpdateMatchedNoRow() throws {
        try withDatabase { t throws in
            t.context.register(ConcHooked.self)
            let m = ConcHooked(); m.name = "a"
            try m.save()
            #expect(ConcHooked.saves == 1)
            try ConcHooked.dao.deleteById(m.id)
            m.name = "b"
            #expect(try m.update() == false)
            #expect(ConcHooked.saves == 1)
            #expect(m.modifiedColumns == ["name"])
        }
    }
}
