import Foundation
import Synchronization

/// What a registration hears about: a commit of this context's writer (its tables, columns and
/// rows), or a commit another connection or process made to the file (`external`: what it
/// touched is unknown).
package struct ChangeEvent: Sendable {
    /// The region committed; nil when another connection or process committed.
    package let region: ChangedRegion?
    /// The rows the writer's commit touched, when rowids were asked for.
    package let rows: ChangedRows?

    package var isExternal: Bool { region == nil }
}

/// The tables (lower-cased) a query reads, each with the columns it reads; a column "" stands
/// for the table read as a whole (count(*)): any change to it counts.
package typealias ReadRegion = [String: Set<String>]

extension ChangeEvent {
    /// Whether this change may alter what a query reading `reads` returns (nil: it reads anything).
    func touches(_ reads: ReadRegion?) -> Bool {
        guard let region, !region.schemaChanged, let reads else { return true }
        for (table, columns) in region.tables {
            guard let read = reads[table] else { continue }
            guard let columns else { return true }             // INSERT, DELETE: the rows themselves
            if read.contains("") || !read.isDisjoint(with: columns) { return true }
        }
        return false
    }
}

/// The live queries and change listeners of one SQLite context: it hears the writer's commits
/// from its `ChangeTracker` and, while anyone listens, polls `PRAGMA data_version` every
/// `Options.externalChangeLatency` for commits made elsewhere (other processes, the `sqlite3`
/// shell, another context on the same file). Knows no query and no
/// record: a registration is a region and a callback (`Db/Db+Observe.swift` runs the queries).
final class ChangeHub: @unchecked Sendable {   // OperationQueue is thread-safe; the rest is immutable or under `state`
    /// The writer's change log (set on the writer each time the context opens it).
    private let state = Mutex(State())
    private let latency: Duration

    private struct State {
        var registrations: [Int: Registration] = [:]
        /// Registrations by the tables they read (lower-cased); `anyTable`: those that read anything.
        var byTable: [String: Set<Int>] = [:]
        var anyTable: Set<Int> = []
        var nextId = 0
        /// The change log of the writer now open (a new one each start: a writer a stopped
        /// context still lends out keeps its own).
        var tracker: ChangeTracker?
        var poller: Task<Void, Never>?
        var source: VersionSource?
    }

    /// A class, so that its closure is never copied out through the lock's generic `inout` (see
    /// `ChangeTracker.listener`).
    fileprivate final class Registration: Sendable {
        let reads: ReadRegion?
        let rowids: Bool
        let onChange: @Sendable (ChangeEvent) -> Void

        init(reads: ReadRegion?, rowids: Bool, onChange: @escaping @Sendable (ChangeEvent) -> Void) {
            self.reads = reads
            self.rowids = rowids
            self.onChange = onChange
        }
    }

    /// Where live queries fetch: a few of DicRecord's own threads (as many as the context has
    /// readers), so that a hundred observers of one table take turns instead of a hundred threads
    /// fighting over two cores, and a busy cooperative pool never holds them back.
    private let workers: OperationQueue

    /// Runs `work` on the hub's fetch threads.
    func run(_ work: @escaping @Sendable () -> Void) {
        workers.addOperation(work)
    }

    init(latency: Double, workers: Int = 4) {
        let queue = OperationQueue()
        queue.name = "DicRecord.liveQueries"
        queue.maxConcurrentOperationCount = max(1, workers)
        self.workers = queue
        // At least 1 ms, at most a day (a huge or infinite value would not fit a Duration).
        let milliseconds = latency.isFinite ? min(max(1, (latency * 1000).rounded()), 86_400_000) : 86_400_000
        self.latency = .milliseconds(Int64(milliseconds))
    }

    /// Calls `onChange` after each commit that may touch `reads` (nil: every commit), on the
    /// thread that committed or on the poller's: it should only schedule work. Until `cancel()`.
    func register(reads: ReadRegion?, rowids: Bool = false, _ onChange: @escaping @Sendable (ChangeEvent) -> Void) -> ChangeRegistration {
        let id = state.withLock { state in
            let id = state.nextId
            state.nextId += 1
            state.registrations[id] = Registration(reads: reads, rowids: rowids, onChange: onChange)
            if let reads {
                for table in reads.keys { state.byTable[table, default: []].insert(id) }
            } else {
                state.anyTable.insert(id)
            }
            update(&state)
            return id
        }
        // Started here, so that its first reading is taken before the caller's first fetch.
        startPollerIfNeeded()
        return ChangeRegistration { [weak self] in self?.unregister(id) }
    }

    private func unregister(_ id: Int) {
        let poller = state.withLock { state -> Task<Void, Never>? in
            guard let removed = state.registrations.removeValue(forKey: id) else { return nil }
            state.anyTable.remove(id)
            for table in removed.reads.map({ Array($0.keys) }) ?? [] {
                state.byTable[table]?.remove(id)
                if state.byTable[table]?.isEmpty == true { state.byTable[table] = nil }
            }
            return update(&state)
        }
        poller?.cancel()
    }

    /// Brings the writer's listener and rowid hook in line with the registrations, under the
    /// lock (so that a registration and an unregistration racing never leave a registration deaf);
    /// returns the poller to cancel when nobody listens any more.
    @discardableResult
    private func update(_ state: inout State) -> Task<Void, Never>? {
        let listening = !state.registrations.isEmpty
        if let tracker = state.tracker {
            if listening {
                tracker.setListener { [weak self] region, rows in self?.committed(region, rows) }
            } else {
                tracker.setListener(nil)
            }
            tracker.wantsRows = state.registrations.values.contains { $0.rowids }
        }
        guard !listening, let poller = state.poller else { return nil }
        state.poller = nil
        return poller
    }

    /// Starts the poller when someone listens and none runs. Its first reading is taken here, on
    /// the caller's thread, outside the lock (it runs a statement on the writer when it is free,
    /// or opens a connection); a poller started meanwhile by another caller wins.
    private func startPollerIfNeeded() {
        guard let source = state.withLock({ $0.registrations.isEmpty || $0.poller != nil ? nil : $0.source }) else { return }
        var own: Connection?
        if case .connection(let open) = source { own = try? open() }
        let baseline = Self.version(source, own)
        let started = state.withLock { state -> Bool in
            guard !state.registrations.isEmpty, state.poller == nil, state.source != nil else { return false }
            state.poller = poll(source, own: own, baseline: baseline)
            return true
        }
        if !started { own?.close() }
    }

    /// `PRAGMA data_version` changes on a connection when another one commits: read on the
    /// writer (when free; a transaction of its own holds the file's write lock, so nothing else
    /// commits meanwhile), it shows other processes' and connections' commits only. Nil when it
    /// cannot be read now.
    private static func version(_ source: VersionSource, _ own: Connection?) -> Int64? {
        switch source {
        case .writer(let read): read()
        case .connection: try? own?.dataVersion()
        }
    }

    /// Whether the writer's change log reports to this hub (tests).
    var isListening: Bool { state.withLock { $0.tracker?.isActive ?? false } }

    /// The number of registrations (tests: an ended observation leaves none).
    var count: Int { state.withLock { $0.registrations.count } }

    /// The writer committed `region` (called once the commit is durable).
    private func committed(_ region: ChangedRegion, _ rows: ChangedRows) {
        // Only the registrations that read a table the commit wrote (or anything) are asked.
        let targets = state.withLock { state -> [Registration] in
            // The usual case while writing: no registration reads what the commit wrote.
            if state.anyTable.isEmpty, !region.schemaChanged, !region.tables.keys.contains(where: { state.byTable[$0] != nil }) {
                return []
            }
            var candidates = state.anyTable
            if region.schemaChanged {
                candidates.formUnion(state.registrations.keys)
            } else {
                for table in region.tables.keys { if let ids = state.byTable[table] { candidates.formUnion(ids) } }
            }
            let event = ChangeEvent(region: region, rows: rows)
            return candidates.compactMap { id in
                state.registrations[id].flatMap { event.touches($0.reads) ? $0 : nil }
            }
        }
        guard !targets.isEmpty else { return }
        let event = ChangeEvent(region: region, rows: rows)
        for target in targets { target.onChange(event) }
    }

    /// Another connection or process committed: every registration looks again.
    private func externalCommit() {
        let targets = state.withLock { Array($0.registrations.values) }
        let event = ChangeEvent(region: nil, rows: nil)
        for target in targets { target.onChange(event) }
    }

    /// Polls until cancelled, every `latency`; a reading that differs from the one before (or
    /// the first one after an unknown `baseline`) makes every registration look again.
    private func poll(_ source: VersionSource, own: Connection?, baseline: Int64?) -> Task<Void, Never> {
        let latency = latency
        return Task.detached { [weak self] in
            defer { own?.close() }
            var last = baseline
            while !Task.isCancelled {
                try? await Task.sleep(for: latency)
                guard let self, !Task.isCancelled else { return }
                guard let now = Self.version(source, own) else { continue }
                defer { last = now }
                if now != last { externalCommit() }
            }
        }
    }

    /// The context stopped: no writer, no polling; registrations stay and resume on the next start.
    func stopped() {
        let poller = state.withLock { state -> Task<Void, Never>? in
            state.tracker?.setListener(nil)
            state.tracker = nil
            state.source = nil
            defer { state.poller = nil }
            return state.poller
        }
        poller?.cancel()
    }

    /// Where to read `PRAGMA data_version` from: the context's writer (nil when it is busy), or a
    /// connection of the poller's own (a readonly context, which has no writer).
    enum VersionSource: Sendable {
        case writer(@Sendable () -> Int64?)
        case connection(@Sendable () throws -> Connection)
    }

    /// A new change log for the writer about to open (nil for a readonly context).
    func makeTracker() -> ChangeTracker { ChangeTracker() }

    /// The context started with `tracker` on its writer: poll `source` (nil: nothing else can
    /// write) while anyone listens. Observers that outlived a stop look again (what was committed
    /// while it was stopped is not known).
    func started(tracker: ChangeTracker?, polling source: VersionSource?) {
        let targets = state.withLock { state -> [Registration] in
            state.tracker = tracker
            state.source = source
            update(&state)
            return Array(state.registrations.values)
        }
        startPollerIfNeeded()
        let event = ChangeEvent(region: nil, rows: nil)
        for target in targets { target.onChange(event) }
    }
}

/// Ends a registration with a `ChangeHub` (once; later calls do nothing).
final class ChangeRegistration: Sendable {
    private let end: Mutex<(@Sendable () -> Void)?>

    init(_ end: @escaping @Sendable () -> Void) {
        self.end = Mutex(end)
    }

    func cancel() {
        let end = self.end.withLock { end -> (@Sendable () -> Void)? in
            defer { end = nil }
            return end
        }
        end?()
    }

    deinit { cancel() }
}
