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
final class ChangeHub: Sendable {
    /// The writer's change log (set on the writer each time the context opens it).
    let tracker = ChangeTracker()
    private let state = Mutex(State())
    private let latency: Duration

    private struct State {
        var registrations: [Int: Registration] = [:]
        var nextId = 0
        var poller: Task<Void, Never>?
        var source: VersionSource?
    }

    fileprivate struct Registration {
        let reads: ReadRegion?
        let rowids: Bool
        let onChange: @Sendable (ChangeEvent) -> Void
    }

    init(latency: Double) {
        self.latency = .milliseconds(Int64(max(1, (latency * 1000).rounded())))
    }

    /// Calls `onChange` after each commit that may touch `reads` (nil: every commit), on the
    /// thread that committed or on the poller's: it should only schedule work. Until `cancel()`.
    func register(reads: ReadRegion?, rowids: Bool = false, _ onChange: @escaping @Sendable (ChangeEvent) -> Void) -> ChangeRegistration {
        let (id, first, wantsRows) = state.withLock { state in
            let id = state.nextId
            state.nextId += 1
            state.registrations[id] = Registration(reads: reads, rowids: rowids, onChange: onChange)
            return (id, state.registrations.count == 1, state.registrations.values.contains { $0.rowids })
        }
        if first {
            tracker.setListener { [weak self] region, rows in self?.committed(region, rows) }
            startPolling()
        }
        tracker.wantsRows = wantsRows
        return ChangeRegistration { [weak self] in self?.unregister(id) }
    }

    private func unregister(_ id: Int) {
        let (last, wantsRows, poller) = state.withLock { state -> (Bool, Bool, Task<Void, Never>?) in
            guard state.registrations.removeValue(forKey: id) != nil else { return (false, true, nil) }
            let last = state.registrations.isEmpty
            let poller = last ? state.poller : nil
            if last { state.poller = nil }
            return (last, state.registrations.values.contains { $0.rowids }, poller)
        }
        if last {
            tracker.setListener(nil)
            poller?.cancel()
        }
        tracker.wantsRows = wantsRows
    }

    /// The number of registrations (tests: an ended observation leaves none).
    var count: Int { state.withLock { $0.registrations.count } }

    /// The writer committed `region` (called once the commit is durable).
    private func committed(_ region: ChangedRegion, _ rows: ChangedRows) {
        let event = ChangeEvent(region: region, rows: rows)
        let targets = state.withLock { $0.registrations.values.filter { event.touches($0.reads) }.map(\.onChange) }
        for onChange in targets { onChange(event) }
    }

    /// Another connection or process committed: every registration looks again.
    private func externalCommit() {
        let targets = state.withLock { $0.registrations.values.map(\.onChange) }
        let event = ChangeEvent(region: nil, rows: nil)
        for onChange in targets { onChange(event) }
    }

    private func startPolling() {
        guard let source = state.withLock({ $0.source }) else { return }
        let latency = latency
        let task = Task.detached { [weak self] in
            var own: Connection?
            defer { own?.close() }
            // `PRAGMA data_version` changes on a connection when another one commits: read on the
            // writer (when free; a transaction of its own holds the file's write lock, so nothing
            // else commits meanwhile), it shows other processes' and connections' commits only.
            func version() -> Int64? {
                switch source {
                case .writer(let read):
                    return read()
                case .connection(let open):
                    if own == nil { own = try? open() }
                    return try? own?.dataVersion()
                }
            }
            var last = version()
            while !Task.isCancelled {
                try? await Task.sleep(for: latency)
                guard let self, !Task.isCancelled else { return }
                guard let now = version() else { continue }
                defer { last = now }
                if let last, now != last { externalCommit() }
            }
        }
        state.withLock { $0.poller = task }
    }

    /// Stops polling (the context stops); registrations stay and resume on the next start.
    func stopPolling() {
        let poller = state.withLock { state -> Task<Void, Never>? in
            defer {
                state.poller = nil
                state.source = nil
            }
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

    /// The context started: poll `source` (nil: nothing else can write) while anyone listens.
    func started(polling source: VersionSource?) {
        let listening = state.withLock { state -> Bool in
            state.source = source
            return !state.registrations.isEmpty && state.poller == nil
        }
        if listening { startPolling() }
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
