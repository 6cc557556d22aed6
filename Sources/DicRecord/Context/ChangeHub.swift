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

/// The live queries and change listeners of one context. On SQLite it hears the writer's commits
/// from its `ChangeTracker` and, while anyone listens, polls `PRAGMA data_version` every
/// `Options.externalChangeLatency` for commits made elsewhere (other processes, the `sqlite3`
/// shell, another context on the same file). On another engine it hears every client's commits
/// from the engine's `EngineChangeFeed`, opened while anyone listens. Knows no query and no
/// record: a registration is a region and a callback (`Db/Db+Observe.swift` runs the queries).
final class ChangeHub: @unchecked Sendable {   // OperationQueue is thread-safe; the rest is immutable or under `state`
    private let state = Guarded(State())
    private let latency: Duration

    /// Opens a started engine context's change feed, reporting commits to the closure it is given.
    typealias FeedOpener = @Sendable (_ latency: Duration, _ onCommit: @escaping @Sendable (Set<String>?) -> Void) throws -> any EngineChangeFeed

    private struct State {
        var registrations: [Int: Registration] = [:]
        /// What each reservation heard since its call (`reserve`), by id, until its registration
        /// has replayed it; then commits go to the registration itself.
        var pending: [Int: Pending] = [:]
        /// Registrations by the tables they read (lower-cased), in the order they were made (a
        /// commit of one table hands this list over, with no lookup per registration);
        /// `anyTable`: those that read anything.
        var byTable: [String: [Registration]] = [:]
        var anyTable: Set<Int> = []
        var nextId = 0
        /// The change log of the writer now open (a new one each start: a writer a stopped
        /// context still lends out keeps its own).
        var tracker: ChangeTracker?
        var poller: Task<Void, Never>?
        var source: VersionSource?
        /// Another engine's context: how to open its feed (while started), and the feed open.
        var opener: FeedOpener?
        var feed: (any EngineChangeFeed)?
        /// Which feed `feed` is: only its commits are heard.
        var feedToken: FeedToken?
        var registrationsMade = 0
        /// Counts starts and stops: work begun before one of them does not install its result after.
        var generation = 0

        /// Someone listens: a registration, or a reservation not yet registered.
        var listening: Bool { !registrations.isEmpty || !pending.isEmpty }

        /// Hands `event` to the reservations (each keeps it for its registration to replay) and
        /// returns the registrations among `ids` that are live (not replaying still) and `wanted`.
        mutating func route(_ event: ChangeEvent, to ids: some Sequence<Int>,
                            where wanted: (Registration) -> Bool = { _ in true }) -> [Registration] {
            // The usual case: no reservation waits (no lookup in `pending` per registration, on the writer's commit path).
            guard !pending.isEmpty else {
                return ids.compactMap { id in registrations[id].flatMap { wanted($0) ? $0 : nil } }
            }
            let bare = ChangeEvent(region: event.region, rows: nil)
            for index in pending.values.indices { pending.values[index].keep(pending.values[index].rowids ? event : bare) }
            return ids.compactMap { id in pending[id] == nil ? registrations[id].flatMap { wanted($0) ? $0 : nil } : nil }
        }
    }

    /// A live query or change listener between its call and its registration: commits heard
    /// meanwhile, replayed to the registration in order. Nil rows unless `rowids`.
    private struct Pending {
        let rowids: Bool
        private var events: [ChangeEvent] = []
        private var rows = 0
        /// The events kept stand for more than they list: one unknown change.
        private var collapsed = false

        init(rowids: Bool) { self.rowids = rowids }

        /// Kept, up to 1,000 events and `ChangedRows.limit` rows (a registration held back long
        /// behind busy threads): past that, one unknown change stands for them all (its
        /// registration looks again; a `changes(in:)` listener hears an external event).
        mutating func keep(_ event: ChangeEvent) {
            guard !collapsed else { return }
            if let kept = event.rows { rows += kept.count }
            if events.count >= 1_000 || rows > ChangedRows.limit {
                events = [ChangeEvent(region: nil, rows: nil)]
                collapsed = true
            } else {
                events.append(event)
            }
        }

        mutating func take() -> [ChangeEvent] {
            defer {
                events = []
                rows = 0
                collapsed = false
            }
            return events
        }
    }

    /// A class, so that its closure is never copied out through the lock's generic `inout` (see
    /// `ChangeTracker.listener`).
    fileprivate final class Registration: Sendable {
        let id: Int
        let reads: ReadRegion?
        let rowids: Bool
        let onChange: @Sendable (ChangeEvent) -> Void
        /// Told when its commits can no longer be heard (an engine's feed failed to reopen at a restart).
        let onFailure: @Sendable (any Error) -> Void

        init(id: Int, reads: ReadRegion?, rowids: Bool, onChange: @escaping @Sendable (ChangeEvent) -> Void,
             onFailure: @escaping @Sendable (any Error) -> Void) {
            self.id = id
            self.reads = reads
            self.rowids = rowids
            self.onChange = onChange
            self.onFailure = onFailure
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

    /// Holds back (true) or lets go the work queued on the fetch threads, without blocking any
    /// thread (tests: a registration kept waiting).
    func holdWork(_ held: Bool) {
        workers.isSuspended = held
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

    /// Starts hearing commits for a live query or change listener at the moment of its call, on
    /// the caller's thread, before its registration (made on the hub's threads: on PostgreSQL it
    /// may install a trigger, which waits for a transaction of the caller's that wrote the table).
    /// What is committed in between is kept and replayed by `register(…, reservation:)`: a
    /// commit made right after the call is never lost. Cheap: the writer's change log is switched
    /// on, and the poller (SQLite) or the engine feed's listening connection started when none runs.
    func reserve(rowids: Bool) -> ChangeReservation {
        let (id, engine) = state.withLock { state -> (Int, Bool) in
            let id = state.nextId
            state.nextId += 1
            state.pending[id] = Pending(rowids: rowids)
            update(&state)
            return (id, state.opener != nil)
        }
        var mark: UInt64 = 0
        if engine {
            // Listening from now on (a connection of the feed's own: it never waits for the caller).
            // When it cannot, the registration tries again and reports why; commits meanwhile are unknown.
            do {
                if let feed = try openFeed() {
                    _ = try feed.watch([], since: 0)
                    mark = feed.mark
                }
            } catch {
                heardUnknown(id)
            }
        }
        startPollerIfNeeded()
        return ChangeReservation(id: id, mark: mark) { [weak self] in self?.dropReservation(id) }
    }

    /// Calls `onChange` after each commit that may touch `reads` (nil: every commit; SQLite only),
    /// on the thread that committed or on the poller's or feed's: it should only schedule work.
    /// First, on this thread, it is told of the commits `reservation` heard since its call (and
    /// of an unknown change when commits since the call may have gone unheard: an engine's
    /// trigger installed now). Until `cancel()`. On another engine, returns once that engine
    /// reports commits to `reads`' tables (throws when it cannot: the table is gone, no privilege
    /// to install what it needs).
    func register(reads: ReadRegion?, rowids: Bool = false, reservation: ChangeReservation,
                  onFailure: @escaping @Sendable (any Error) -> Void = { _ in },
                  _ onChange: @escaping @Sendable (ChangeEvent) -> Void) throws -> ChangeRegistration {
        let id = reservation.id
        try state.withLock { state in
            guard state.pending[id] != nil, state.registrations[id] == nil else {
                throw DicRecordError(.misuse, "a change reservation was used twice or after it was dropped")
            }
            let registration = Registration(id: id, reads: reads, rowids: rowids, onChange: onChange, onFailure: onFailure)
            state.registrations[id] = registration
            state.registrationsMade += 1
            if let reads {
                for table in reads.keys { state.byTable[table, default: []].append(registration) }
            } else {
                state.anyTable.insert(id)
            }
            update(&state)
        }
        let missed: Bool
        do {
            missed = try watch(reads, since: reservation.mark)
        } catch {
            unregister(id)
            throw error
        }
        if missed { heardUnknown(id) }
        // Started here too, should the context have started since the reservation.
        startPollerIfNeeded()
        replay(id, reads, onChange)
        return ChangeRegistration { [weak self] in self?.unregister(id) }
    }

    /// Commits to the watched tables before now may not have been heard: the reservation hears an
    /// unknown change (its registration looks again).
    private func heardUnknown(_ id: Int) {
        state.withLock { $0.pending[id]?.keep(ChangeEvent(region: nil, rows: nil)) }
    }

    /// Hands a new registration what its reservation heard, in order, until nothing more is left;
    /// from then on commits reach it directly.
    private func replay(_ id: Int, _ reads: ReadRegion?, _ onChange: @Sendable (ChangeEvent) -> Void) {
        while true {
            let (batch, teardown) = state.withLock { state -> ([ChangeEvent], Teardown) in
                guard let events = state.pending[id]?.take(), !events.isEmpty else {
                    guard state.pending.removeValue(forKey: id) != nil else { return ([], Teardown()) }
                    return ([], update(&state))
                }
                return (events, Teardown())
            }
            guard !batch.isEmpty else { return teardown.run() }
            for event in batch where event.touches(reads) { onChange(event) }
        }
    }

    /// A reservation given up before (or instead of) its registration.
    private func dropReservation(_ id: Int) {
        let teardown = state.withLock { state -> Teardown in
            guard state.registrations[id] == nil, state.pending.removeValue(forKey: id) != nil else { return Teardown() }
            return update(&state)
        }
        teardown.run()
    }

    private func unregister(_ id: Int) {
        let teardown = state.withLock { state -> Teardown in
            state.pending[id] = nil
            guard let removed = state.registrations.removeValue(forKey: id) else { return update(&state) }
            state.anyTable.remove(id)
            for table in removed.reads.map({ Array($0.keys) }) ?? [] {
                state.byTable[table]?.removeAll { $0.id == id }
                if state.byTable[table]?.isEmpty == true { state.byTable[table] = nil }
            }
            return update(&state)
        }
        teardown.run()
    }

    /// What to stop, outside the lock, once nobody listens (or the context stopped).
    private struct Teardown {
        var poller: Task<Void, Never>?
        var feed: (any EngineChangeFeed)?

        func run() {
            poller?.cancel()
            feed?.close()
        }
    }

    /// Brings the writer's listener and rowid hook in line with the registrations, under the
    /// lock (so that a registration and an unregistration racing never leave a registration deaf);
    /// returns the poller and feed to stop when nobody listens any more.
    @discardableResult
    private func update(_ state: inout State) -> Teardown {
        let listening = state.listening
        if let tracker = state.tracker {
            if listening {
                tracker.setListener { [weak self] region, rows in self?.committed(region, rows) }
            } else {
                tracker.setListener(nil)
            }
            tracker.wantsRows = state.registrations.values.contains { $0.rowids } || state.pending.values.contains { $0.rowids }
        }
        guard !listening else { return Teardown() }
        defer {
            state.poller = nil
            state.feed = nil
            state.feedToken = nil
        }
        return Teardown(poller: state.poller, feed: state.feed)
    }

    // MARK: Another engine's feed

    /// On another engine: has its feed report commits to `reads`' tables, opening the feed first
    /// when none is open; true when commits to them before now may have gone unheard (see
    /// `EngineChangeFeed.watch`). Nothing to do on SQLite, or while the context is stopped (its
    /// next start watches every registration's tables, and every registration looks again).
    private func watch(_ reads: ReadRegion?, since mark: UInt64) throws -> Bool {
        guard let feed = try openFeed() else { return false }
        guard let reads else {
            throw DicRecordError(.misuse, "a live query on this engine must read named tables")
        }
        return try feed.watch(Set(reads.keys), since: mark)
    }

    /// The open feed of an engine context, opened now if need be; nil on SQLite or while stopped.
    private func openFeed() throws -> (any EngineChangeFeed)? {
        let (open, opener, generation) = state.withLock { ($0.feed, $0.opener, $0.generation) }
        if let open { return open }
        guard let opener else { return nil }
        // What the feed hears counts while it is the open one: a feed closed (or never kept) may
        // still hand over a commit the next one hears too.
        let token = FeedToken()
        let opened = try opener(latency) { [weak self] tables in self?.engineCommitted(tables, from: token) }
        let kept = state.withLock { state -> (any EngineChangeFeed)? in
            if let feed = state.feed { return feed }   // opened meanwhile by another caller
            guard state.generation == generation, state.listening else { return nil }
            state.feed = opened
            state.feedToken = token
            return opened
        }
        if kept !== opened { opened.close() }
        return kept
    }

    /// The tables `sql` reads, from an engine context's feed (nil on SQLite: its authorizer tells).
    func engineReadTables(of sql: String, _ arguments: EncodedArguments) throws -> Set<String>? {
        guard state.withLock({ $0.opener != nil }) else { return nil }
        return try withFeed { try $0.readTables(of: sql, arguments) }
    }

    /// The keys of tables named as in SQL, on an engine context (nil on SQLite: names are keys).
    func engineResolve(_ names: [String]) throws -> [String]? {
        guard state.withLock({ $0.opener != nil }) else { return nil }
        return try withFeed { try $0.resolve(names) }
    }

    /// Runs `body` on the open feed, or on one opened for the call when none is.
    private func withFeed<T>(_ body: (any EngineChangeFeed) throws -> T) throws -> T {
        if let feed = state.withLock({ $0.feed }) { return try body(feed) }
        guard let opener = state.withLock({ $0.opener }) else {
            throw DicRecordError(.notStarted, "the context was stopped")
        }
        let feed = try opener(latency) { _ in }
        defer { feed.close() }
        return try body(feed)
    }

    /// The engine reported a commit to `tables` (nil: commits may have been missed).
    private func engineCommitted(_ tables: Set<String>?, from token: FeedToken) {
        guard state.withLock({ $0.feedToken === token }) else { return }
        guard let tables else { return externalCommit() }
        committed(ChangedRegion(tables: Dictionary(uniqueKeysWithValues: tables.map { ($0, nil) })), nil)
    }

    /// Starts the poller when someone listens and none runs. Its first reading is taken here, on
    /// the caller's thread, outside the lock (it runs a statement on the writer when it is free,
    /// or opens a connection); a poller started meanwhile by another caller wins.
    private func startPollerIfNeeded() {
        guard let (source, generation) = state.withLock({ state -> (VersionSource, Int)? in
            guard state.listening, state.poller == nil, let source = state.source else { return nil }
            return (source, state.generation)
        }) else { return }
        var own: Connection?
        if case .connection(let open) = source { own = try? open() }
        let baseline = Self.version(source, own)
        let started = state.withLock { state -> Bool in
            // Not if the context stopped (or stopped and started) meanwhile: that source is gone.
            guard state.listening, state.poller == nil, state.generation == generation else { return false }
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

    /// Whether the writer's change log reports to this hub, or an engine's feed is open (tests).
    var isListening: Bool { state.withLock { $0.tracker?.isActive ?? false || $0.feed != nil } }

    /// The number of registrations (tests: an ended observation leaves none).
    var count: Int { state.withLock { $0.registrations.count } }

    /// The reservations not yet registered (tests: one given up leaves none).
    var reservations: Int { state.withLock { $0.pending.count } }

    /// How many registrations were ever made (tests: one given up before its turn makes none).
    var registrationsMade: Int { state.withLock { $0.registrationsMade } }

    /// The writer (or, on another engine, any client) committed `region` (called once the commit is durable).
    private func committed(_ region: ChangedRegion, _ rows: ChangedRows?) {
        let event = ChangeEvent(region: region, rows: rows)
        // Only the registrations that read a table the commit wrote (or anything) are asked.
        let targets = state.withLock { state -> [Registration] in
            if state.pending.isEmpty, state.anyTable.isEmpty, !region.schemaChanged {
                // The usual case while writing: a commit of one table (no registration, or its
                // readers, as they were made; an INSERT or DELETE touches every one of them).
                if region.tables.count == 1, let (table, columns) = region.tables.first {
                    guard let readers = state.byTable[table] else { return [] }
                    return columns == nil ? readers : readers.filter { event.touches($0.reads) }
                }
                // No registration reads what the commit wrote.
                if !region.tables.keys.contains(where: { state.byTable[$0] != nil }) { return [] }
            }
            var candidates = state.anyTable
            if region.schemaChanged {
                candidates.formUnion(state.registrations.keys)
            } else {
                for table in region.tables.keys { for reader in state.byTable[table] ?? [] { candidates.insert(reader.id) } }
            }
            return state.route(event, to: candidates) { event.touches($0.reads) }
        }
        for target in targets { target.onChange(event) }
    }

    /// Another connection or process committed: every registration looks again.
    private func externalCommit() {
        let event = ChangeEvent(region: nil, rows: nil)
        let targets = state.withLock { $0.route(event, to: $0.registrations.keys) }
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

    /// The context stopped: no writer, no polling, no feed; registrations stay and resume on the next start.
    func stopped() {
        let teardown = state.withLock { state -> Teardown in
            state.generation += 1
            state.tracker?.setListener(nil)
            state.tracker = nil
            state.source = nil
            state.opener = nil
            defer {
                state.poller = nil
                state.feed = nil
                state.feedToken = nil
            }
            return Teardown(poller: state.poller, feed: state.feed)
        }
        teardown.run()
    }

    /// Where to read `PRAGMA data_version` from: the context's writer (nil when it is busy), or a
    /// connection of the poller's own (a readonly context, which has no writer).
    enum VersionSource: Sendable {
        case writer(@Sendable () -> Int64?)
        case connection(@Sendable () throws -> Connection)
    }

    /// A new change log for the writer about to open (nil for a readonly context).
    func makeTracker() -> ChangeTracker { ChangeTracker() }

    /// The SQLite context started with `tracker` on its writer: poll `source` (nil: nothing else
    /// can write) while anyone listens. `resume()` follows once the start's own work is done.
    func started(tracker: ChangeTracker?, polling source: VersionSource?) {
        state.withLock { state in
            state.generation += 1
            state.tracker = tracker
            state.source = source
            update(&state)
        }
        startPollerIfNeeded()
    }

    /// Another engine's context started: its feed opens (through `opener`) while anyone listens.
    func started(feed opener: @escaping FeedOpener) {
        state.withLock { state in
            state.generation += 1
            state.opener = opener
        }
    }

    /// The context finished starting (its migrations and schema work done): registrations that
    /// outlived a stop look again, as what was committed while it was stopped is not known. On
    /// another engine, the feed opens again first and watches their tables; a registration whose
    /// tables cannot be watched any more is told why.
    func resume() {
        let event = ChangeEvent(region: nil, rows: nil)
        // Every registration is watched again, those still replaying too; those hear the event
        // through their reservation (as reservations not yet registered do), the others directly.
        let (all, live) = state.withLock { state -> ([Registration], [Registration]) in
            (Array(state.registrations.values), state.route(event, to: state.registrations.keys))
        }
        guard !all.isEmpty else { return }
        let told = Set(live.map(ObjectIdentifier.init))
        run { [self] in
            // Each registration's tables on their own: a table dropped meanwhile ends only the
            // registrations that read it.
            for target in all {
                do {
                    _ = try watch(target.reads, since: 0)   // looks again anyway
                    if told.contains(ObjectIdentifier(target)) { target.onChange(event) }
                } catch {
                    target.onFailure(error)
                }
            }
        }
    }
}

/// Names one opened feed (`ChangeHub.openFeed`).
final class FeedToken: Sendable {}

/// What `ChangeHub.reserve` hands out: commits are heard for the caller from then on, until its
/// registration takes them over. Dropped (once) when it is given up or deallocated unregistered.
final class ChangeReservation: Sendable {
    let id: Int
    /// The engine feed's mark at the call (0 on SQLite, or when no feed was open).
    let mark: UInt64
    private let registration: ChangeRegistration

    init(id: Int, mark: UInt64, _ drop: @escaping @Sendable () -> Void) {
        self.id = id
        self.mark = mark
        registration = ChangeRegistration(drop)
    }

    /// Gives the reservation up (nothing once its registration is made).
    func cancel() { registration.cancel() }
}

/// Ends a registration with a `ChangeHub` (once; later calls do nothing).
final class ChangeRegistration: Sendable {
    private let end: Guarded<(@Sendable () -> Void)?>

    init(_ end: @escaping @Sendable () -> Void) {
        self.end = Guarded(end)
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
