import Logging
import Synchronization

/// Where the rows of one layout came from, for the warning of a typed read that misses: the
/// statement's SQL and config (nil for a record built in code), and the columns already warned
/// about, so that a loop over a result warns once per column, not once per row. A statement's
/// layout is rebuilt when SQLite re-prepares it, and then warns afresh. Used on the miss path only.
final class ReadOrigin: Sendable {
    let sql: String?
    let configName: String?
    let reporter: ReadReporter
    private let warned = Guarded<Set<String>>([])

    init(sql: String?, configName: String?, reporter: ReadReporter) {
        self.sql = sql
        self.configName = configName
        self.reporter = reporter
    }

    /// Records built in code (and models not fetched) share this origin: they warn once per column name.
    static let builtInCode = ReadOrigin(sql: nil, configName: nil, reporter: .builtInCode)

    /// Where the row came from, in words.
    var place: String {
        guard let sql else { return "a record built in code" }
        return "[\(configName ?? "?")] \(sql)"
    }

    /// Warns once per column (or stops the process under `strictReads`) that a typed read of
    /// `column` as `target` gave nil for a reason other than NULL.
    func reportMiss(column: String, target: Any.Type, problem: String) {
        let message = "typed read of \"\(column)\" as \(String(reflecting: target)) gave nil: \(problem); row from \(place)"
        if reporter.strictReads { preconditionFailure(message) }
        let first = warned.withLock { $0.insert(column.lowercased()).inserted }
        if first { reporter.logger.warning("\(message)") }
    }
}

extension ReadOrigin {
    /// Warns once per pair of names (or stops the process under `strictReads`) that two columns,
    /// distinct for SQLite, are one key of a Swift dictionary (`toDictionary`).
    func reportMergedKeys(_ kept: String, _ dropped: String) {
        let message = "toDictionary: columns \"\(kept)\" and \"\(dropped)\" are one key of a Swift dictionary (their names are canonically equivalent); it holds \"\(kept)\". Read both with columnNames and record[index]. Row from \(place)"
        if reporter.strictReads { preconditionFailure(message) }
        let first = warned.withLock { $0.insert("toDictionary\u{0}\(kept)\u{0}\(dropped)").inserted }
        if first { reporter.logger.warning("\(message)") }
    }
}

extension Record {
    /// The general typed read by name: `get`, with a miss (no such column, a value that does not
    /// convert) reported by the row's origin. NULL gives nil quietly.
    @usableFromInline
    func readReportingMiss<T>(_ column: String, as type: T.Type) -> T? {
        do {
            return try get(column, as: T.self)
        } catch {
            reportMiss(storedValue(column), column: column, target: T.self, error: error)
            return nil
        }
    }

    /// The general typed read by position (see `readReportingMiss(_:as:)` by name).
    @usableFromInline
    func readReportingMiss<T>(_ index: Int, as type: T.Type) -> T? {
        do {
            return try get(index, as: T.self)
        } catch {
            let found = lock.withLock { _ in
                values.indices.contains(index) ? (name: layout.names[index], value: values[index]) : nil
            }
            reportMiss(found?.value, column: found?.name ?? "#\(index)", target: T.self, error: error)
            return nil
        }
    }

    /// Where this record's row came from.
    var layoutOrigin: ReadOrigin { lock.withLock { _ in layout.origin } }

    /// Reports that `stored`, the value of `column`, did not convert to `target` (NULL: nothing to say).
    func reportMiss(_ stored: DatabaseValue?, column: String, target: Any.Type, error: any Error) {
        if stored == .null { return }
        let origin = layoutOrigin
        let problem: String
        if let stored {
            let reason = (error as? ConversionError)?.reason ?? "\(error)"
            problem = "it holds \(stored.storageName) \(stored), which does not convert (\(reason))"
        } else {
            problem = "the row has no such column (it has \(columnNames.joined(separator: ", ")))"
        }
        origin.reportMiss(column: column, target: target, problem: problem)
    }
}
