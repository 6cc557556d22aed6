import Foundation
import Synchronization

// Live queries: a query's result, again after each commit that may change it. The context's
// ChangeHub (Context/ChangeHub.swift) says when; this file fetches (on a reader, through the
// async API), drops results equal to the last one and delivers the latest to the consumer.

/// One commit seen by `Db.changes(in:)`.
/// ```swift
/// for try await change in Db.main.changes(in: ["student"]) { print(change.tables, change.inserted["student"] ?? []) }
/// ```
public struct DatabaseChange: Sendable, Equatable {
    /// The observed tables the commit touched (lower-cased); every observed table when another
    /// process or connection committed (`isExternal`: SQLite does not say what it touched).
    public let tables: Set<String>
    /// Rowids inserted, updated and deleted, per table (lower-cased), from SQLite's update hook:
    /// not for WITHOUT ROWID tables, rows a REPLACE removed, rows a DELETE without WHERE removed
    /// (the table is still listed), nor commits made elsewhere.
    public let inserted: [String: [Int64]]
    public let updated: [String: [Int64]]
    public let deleted: [String: [Int64]]
    /// True when the commit came from another process or connection (rows unknown).
    public let isExternal: Bool
    /// True when the transaction changed more rows than DicRecord lists (100,000).
    public let rowsTruncated: Bool
}

extension Db {
    /// The rows of `sql` now, then again after each commit that may change them: a live query.
    ///
    /// - The first value is the current result. `initial: false` skips it: the first value then
    ///   comes after the first commit since the call that touched what the query reads (delivered
    ///   even when equal to the result skipped, which the consumer never saw).
    /// - Commits are heard from the call on: one made right after it returns, before the
    ///   observation is registered (on DicRecord's threads), is delivered. (On PostgreSQL the
    ///   first observation of a context opens its listening connection before returning.)
    /// - After each committed transaction that touched a table (for UPDATE: a column) the query
    ///   reads, the query runs again on a reader, never blocking the writer, and sees at least
    ///   that commit. Rolled-back transactions and savepoints deliver nothing.
    /// - A result equal to the last one delivered is not delivered (`removeDuplicates: false`
    ///   delivers it).
    /// - A slow consumer gets the latest result, not a queue of stale ones.
    /// - Commits made by other processes and connections to the file arrive within
    ///   `Options.externalChangeLatency`.
    /// - Iteration ends when the consuming task is cancelled, or with the query's error.
    /// ```swift
    /// for try await adults in Db.main.observe("select * from student where age > ?", 18) {
    ///     print(adults.count)
    /// }
    /// ```
    public func observe(_ sql: String, _ args: DatabaseArgument..., initial: Bool = true,
                        removeDuplicates: Bool = true) -> AsyncThrowingStream<[Record], any Error> {
        observe(sql, arguments: StatementArguments(args), initial: initial, removeDuplicates: removeDuplicates)
    }

    /// `observe` with the arguments as a list or by name.
    /// ```swift
    /// let live = Db.main.observe("select * from student where age > :age", arguments: ["age": 18])
    /// ```
    public func observe(_ sql: String, arguments: StatementArguments, initial: Bool = true,
                        removeDuplicates: Bool = true) -> AsyncThrowingStream<[Record], any Error> {
        let same: @Sendable ([Record], [Record]) -> Bool = Self.sameRecords
        return liveQuery(sql, arguments, initial: initial, equal: removeDuplicates ? same : nil) { db in
            try db.find(sql, arguments: arguments)
        }
    }

    /// The first row of `sql`, live (see ``observe(_:_:initial:removeDuplicates:)``).
    /// ```swift
    /// for try await newest in Db.main.observeFirst("select * from student order by id desc limit 1") { print(newest?.name ?? "none") }
    /// ```
    public func observeFirst(_ sql: String, _ args: DatabaseArgument..., initial: Bool = true,
                             removeDuplicates: Bool = true) -> AsyncThrowingStream<Record?, any Error> {
        let arguments = StatementArguments(args)
        let same: @Sendable (Record?, Record?) -> Bool = { a, b in
            switch (a, b) {
            case (nil, nil): true
            case let (a?, b?): a.storedRow == b.storedRow
            default: false
            }
        }
        return liveQuery(sql, arguments, initial: initial, equal: removeDuplicates ? same : nil) { db in
            try db.findFirst(sql, arguments: arguments)
        }
    }

    /// One value of `sql` (its first column of its first row), live; nil for no row or NULL.
    /// ```swift
    /// for try await count in Db.main.observeValue("select count(*) from student", as: Int.self) { print(count ?? 0) }
    /// ```
    public func observeValue<T: Sendable & Equatable>(_ sql: String, _ args: DatabaseArgument..., as type: T.Type, initial: Bool = true,
                                                      removeDuplicates: Bool = true) -> AsyncThrowingStream<T?, any Error> {
        let arguments = StatementArguments(args)
        let same: @Sendable (T?, T?) -> Bool = { $0 == $1 }
        return liveQuery(sql, arguments, initial: initial, equal: removeDuplicates ? same : nil) { db in
            try db.queryFirst(sql, arguments: arguments, as: T.self)
        }
    }

    /// An event after each commit that touched one of `tables` (case-insensitive), with the
    /// rowids SQLite's update hook reported, for every commit from the call on. Ends when the
    /// consuming task is cancelled. (On PostgreSQL an event names tables only, and commits whose
    /// notifications arrive together are one event; the first observation ever of a table, which
    /// installs its trigger, reports an external event, as commits before that are unknown.)
    /// ```swift
    /// for try await change in Db.main.changes(in: ["student", "teacher"]) { print(change.tables) }
    /// ```
    public func changes(in tables: [String]) -> AsyncThrowingStream<DatabaseChange, any Error> {
        let (stream, continuation) = AsyncThrowingStream<DatabaseChange, any Error>.makeStream()
        let hub: ChangeHub
        do {
            hub = try context().changeHub
        } catch {
            continuation.finish(throwing: error)
            return stream
        }
        // Heard from now on; registered on the hub's threads, as live queries are: on PostgreSQL the
        // first observation of a table installs its trigger, which waits for a transaction of the
        // caller's that wrote it. The consumer may leave before the registration is made: then it
        // is ended as soon as it is.
        let reservation = hub.reserve(rowids: true)
        let held = Guarded<(registration: ChangeRegistration?, ended: Bool)>((nil, false))
        continuation.onTermination = { _ in
            held.withLock { state -> ChangeRegistration? in
                state.ended = true
                return state.registration
            }?.cancel()
        }
        hub.run {
            // Given up before its turn: nothing to register (the reservation is dropped).
            guard !held.withLock({ $0.ended }) else { return reservation.cancel() }
            guard let registration = Self.register(tables, on: hub, reservation, continuation) else { return reservation.cancel() }
            let ended = held.withLock { state -> Bool in
                state.registration = registration
                return state.ended
            }
            if ended { registration.cancel() }
        }
        return stream
    }

    private static func register(_ tables: [String], on hub: ChangeHub, _ reservation: ChangeReservation,
                                 _ continuation: AsyncThrowingStream<DatabaseChange, any Error>.Continuation) -> ChangeRegistration? {
        do {
            // Each table as the engine reports it (PostgreSQL: schema-qualified), and as the caller named it.
            let keys = try hub.engineResolve(tables) ?? tables.map { $0.lowercased() }
            let named = Dictionary(zip(keys, tables.map { $0.lowercased() }), uniquingKeysWith: { first, _ in first })
            let observed = Set(named.values)
            let reads = Dictionary(uniqueKeysWithValues: named.keys.map { ($0, Set([""])) })
            let registration = try hub.register(reads: reads, rowids: true, reservation: reservation,
                                                onFailure: { continuation.finish(throwing: $0) }) { event in
                func only(_ rows: [String: [Int64]]?) -> [String: [Int64]] { rows?.filter { observed.contains($0.key) } ?? [:] }
                let touched = event.region.map { Set($0.tables.keys.compactMap { named[$0] }) } ?? observed
                continuation.yield(DatabaseChange(tables: event.region?.schemaChanged == true ? observed : touched,
                                                  inserted: only(event.rows?.inserted), updated: only(event.rows?.updated),
                                                  deleted: only(event.rows?.deleted), isExternal: event.isExternal,
                                                  rowsTruncated: event.rows?.truncated ?? false))
            }
            return registration
        } catch {
            continuation.finish(throwing: error)
            return nil
        }
    }

    /// The region `sql` reads: on SQLite as its authorizer tells while preparing it on a reader;
    /// on another engine, the tables its engine's feed finds (every column of each).
    func readRegion(of sql: String, _ arguments: Arguments) throws -> ReadRegion {
        let context = try context()
        if try context.externalPool() != nil {
            let encoded = try arguments.encoded(context.converters, sql: sql, configName: context.configName)
            let tables = try context.changeHub.engineReadTables(of: sql, encoded) ?? []
            return Dictionary(uniqueKeysWithValues: tables.map { ($0, Set([""])) })
        }
        return try context.pool().read { try $0.readRegion(of: sql) }
    }

    private func liveQuery<Value: Sendable>(_ sql: String, _ arguments: StatementArguments, initial: Bool, equal: (@Sendable (Value, Value) -> Bool)?,
                                            fetch: @escaping @Sendable (Db) throws -> Value) -> AsyncThrowingStream<Value, any Error> {
        // Only the newest value waits for a slow consumer.
        let (stream, continuation) = AsyncThrowingStream<Value, any Error>.makeStream(bufferingPolicy: .bufferingNewest(1))
        // Read on the primary: a replica may not have replayed the commit that triggered a fetch.
        let observer = LiveQuery(db: routed(.primary), fetch: fetch, equal: equal, continuation: continuation)
        continuation.onTermination = { _ in observer.end() }
        observer.start(sql: sql, arguments: arguments.storage, initial: initial)
        return stream
    }

    /// Whether two results hold the same columns and stored values, row for row.
    @Sendable static func sameRecords(_ a: [Record], _ b: [Record]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { $0.storedRow == $1.storedRow }
    }
}

/// A live query's state (see `LiveQuery`).
private struct LiveQueryState {
    var registration: ChangeRegistration?
    var ended = false
    /// A fetch is running; `dirty`: another change came since it began.
    var fetching = false
    var dirty = false
    /// The first fetch has been made (delivered when `initial`, or when a commit was heard
    /// since the call: before the registration, or while the first fetch was made or retried).
    var primed = false
    var initial = true
    var heardCommit = false
}

/// One live query: heard from its call (a reservation), registered with the hub before its first
/// fetch (so no commit falls between), it runs the query again when told, one fetch at a time;
/// changes that come during a fetch make one more fetch after it (bursts coalesce). A commit
/// after the call and before the first fetch makes that fetch's result a change, delivered even
/// with `initial: false`.
private final class LiveQuery<Value: Sendable>: Sendable {
    private let db: Db
    private let fetch: @Sendable (Db) throws -> Value
    private let equal: (@Sendable (Value, Value) -> Bool)?
    private let continuation: AsyncThrowingStream<Value, any Error>.Continuation
    /// Not generic (declared outside this class): the writer's thread takes it once per commit
    /// and live query, and a generic state's metadata, looked up at run time on every lock, cost
    /// more than the rest of that step.
    private let state = Guarded(LiveQueryState())
    /// The last value delivered (nil: none yet): what `equal` compares a new one with. Taken by
    /// the one fetch running (`state.fetching`).
    private let delivered = Guarded<Value?>(nil)

    init(db: Db, fetch: @escaping @Sendable (Db) throws -> Value, equal: (@Sendable (Value, Value) -> Bool)?,
         continuation: AsyncThrowingStream<Value, any Error>.Continuation) {
        self.db = db
        self.fetch = fetch
        self.equal = equal
        self.continuation = continuation
    }

    /// The hub's fetch threads, once started.
    private let hub = Guarded<ChangeHub?>(nil)

    /// Runs on the context's live-query threads (`ChangeHub.run`), not Swift's cooperative pool:
    /// a fetch may wait for a connection, and a busy cooperative pool must not hold live queries
    /// back. (Nor does it run in the caller's async transaction: it reads only what is committed.)
    func start(sql: String, arguments: Arguments, initial: Bool) {
        let hub: ChangeHub
        do {
            hub = try db.context().changeHub
        } catch {
            return fail(error)
        }
        self.hub.withLock { $0 = hub }
        let reservation = hub.reserve(rowids: false)
        hub.run { [self] in
            // Given up before its turn: nothing to register (the reservation is dropped).
            guard !state.withLock({ $0.ended }) else { return reservation.cancel() }
            do {
                let reads = try db.readRegion(of: sql, arguments)
                // Fetching from now on: a commit before the first fetch ends makes one more, not a
                // second loop; one the reservation heard since the call is replayed here.
                state.withLock { $0.fetching = true }
                let registration = try hub.register(reads: reads, reservation: reservation,
                                                    onFailure: { [weak self] in self?.fail($0) }) { [weak self] _ in
                    self?.changed()
                }
                let ended = state.withLock { state in
                    state.registration = registration
                    state.initial = initial
                    state.dirty = true   // the first fetch, made (and retried) as any other
                    return state.ended
                }
                guard !ended else { return registration.cancel() }
                pumpWhileDirty()
            } catch {
                reservation.cancel()
                fail(error)
            }
        }
    }

    /// A commit that may change the result: fetch again (now, or after the fetch running).
    private func changed() {
        fetchAgain(afterCommit: true)
    }

    /// Fetches again, now or after the fetch running; `afterCommit`: because of a commit (a retry
    /// after a busy database is not one: it does not make the first result one to deliver).
    private func fetchAgain(afterCommit: Bool) {
        let start = state.withLock { state -> Bool in
            guard !state.ended else { return false }
            if afterCommit { state.heardCommit = true }
            state.dirty = true
            guard !state.fetching else { return false }
            state.fetching = true
            return true
        }
        guard start, let hub = hub.withLock({ $0 }) else { return }
        hub.run { [self] in pumpWhileDirty() }
    }

    /// Fetches while changes keep coming, delivering each new result; then stops fetching.
    private func pumpWhileDirty() {
        while true {
            let go = state.withLock { state -> Bool in
                guard state.dirty, !state.ended else {
                    state.fetching = false
                    return false
                }
                state.dirty = false
                return true
            }
            guard go else { return }
            do {
                let value = try fetch(db)
                // The first result: delivered when `initial`, or when a commit was heard since the
                // call (before this result was taken or while it was: it may hold that commit).
                let first = state.withLock { state -> Bool? in
                    guard !state.primed else { return nil }
                    state.primed = true
                    return state.initial || state.heardCommit
                }
                let deliver = delivered.withLock { last -> Bool in
                    let deliver: Bool
                    if let first {
                        deliver = first
                    } else if let equal, let previous = last {
                        deliver = !equal(previous, value)
                    } else {
                        // Nothing delivered yet (`initial: false`): a result after a commit is
                        // delivered, even one equal to the first fetch's, which the consumer never
                        // saw (that fetch may already have seen a commit whose notice came late).
                        deliver = true
                    }
                    if deliver { last = value }
                    return deliver
                }
                if deliver { continuation.yield(value) }
            } catch let error as DicRecordError where error.kind == .notStarted || error.kind == .busy {
                // Not the query's fault: the context is stopped (its restart makes every live query
                // look again) or the database stayed locked (look again shortly). A change that came
                // during this fetch is looked at now.
                let again = state.withLock { state -> Bool in
                    if state.dirty { return true }
                    state.fetching = false
                    return false
                }
                if again { continue }
                if error.kind == .busy {
                    DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { [weak self] in self?.fetchAgain(afterCommit: false) }
                }
                return
            } catch {
                fail(error)
                return
            }
        }
    }

    private func fail(_ error: any Error) {
        continuation.finish(throwing: error)
        end()
    }

    /// The consumer went away (or the query failed): unregister, stop fetching.
    func end() {
        let registration = state.withLock { state -> ChangeRegistration? in
            state.ended = true
            defer { state.registration = nil }
            return state.registration
        }
        registration?.cancel()
    }
}
