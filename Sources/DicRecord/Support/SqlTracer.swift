// Support: where a context's diagnostics go: executed SQL (showSql, onSql) and typed-read misses.
import Logging
import Synchronization

/// One statement as it ran: what `showSql` logs and what `Options.onSql` receives.
/// ```swift
/// options.onSql = { trace in print(trace) }   // [main] select * from student where id = ? [15] (0.042 ms)
/// ```
public struct SqlTrace: Sendable, CustomStringConvertible {
    /// The statement's SQL text.
    /// ```swift
    /// options.onSql = { trace in print(trace.sql) }
    /// ```
    public let sql: String
    /// The values bound to the statement, in parameter order.
    /// ```swift
    /// options.onSql = { trace in print(trace.arguments) }
    /// ```
    public let arguments: [DatabaseValue]
    /// How long the statement ran.
    /// ```swift
    /// options.onSql = { trace in if trace.duration > .milliseconds(100) { print("slow:", trace.sql) } }
    /// ```
    public let duration: Duration
    /// The config the statement ran on.
    /// ```swift
    /// options.onSql = { trace in print(trace.configName) }
    /// ```
    public let configName: String

    /// "[config] SQL [arguments] (duration ms)", as `showSql` logs it.
    /// ```swift
    /// options.onSql = { trace in print(trace.description) }
    /// ```
    public var description: String {
        let args = arguments.isEmpty ? "" : " [\(arguments.map(\.description).joined(separator: ", "))]"
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return "[\(configName)] \(sql)\(args) (\(String(format: "%.3f", ms)) ms)"
    }
}

/// Where executed SQL goes: swift-log when `showSql` is on, and the context's `onSql` observer.
package final class SqlTracer: Sendable {
    private let showSqlFlag = Atomic<Bool>(false)
    private let observer: (@Sendable (SqlTrace) -> Void)?
    private let logger: Logger
    /// Where typed reads of this context's rows report a miss (see `ReadReporter`).
    let reads: ReadReporter

    init(observer: (@Sendable (SqlTrace) -> Void)?, logger: Logger? = nil, strictReads: Bool = false) {
        self.observer = observer
        self.logger = logger ?? Logger(label: "DicRecord.SQL")
        reads = ReadReporter(logger: logger ?? Logger(label: "DicRecord"), strictReads: strictReads)
    }

    var showSql: Bool {
        get { showSqlFlag.load(ordering: .relaxed) }
        set { showSqlFlag.store(newValue, ordering: .relaxed) }
    }

    /// Whether statements need timing and describing at all.
    @inline(__always)
    package var isEnabled: Bool { observer != nil || showSqlFlag.load(ordering: .relaxed) }

    package func record(sql: String, arguments: [DatabaseValue], configName: String, duration: Duration) {
        let trace = SqlTrace(sql: sql, arguments: arguments, duration: duration, configName: configName)
        if showSql {
            // The message is passed as a value, never as a format string: '%' in SQL is safe.
            logger.info("\(trace.description)")
        }
        observer?(trace)
    }
}

/// How a context reports a typed read that misses: the logger it warns on, and whether a miss
/// stops the process instead (`Options.strictReads`). One per context, shared by its connections.
final class ReadReporter: Sendable {
    let logger: Logger
    let strictReads: Bool
    /// The relation reads and writes warned about: once per model, property and kind of error.
    private let warnedRelations = Guarded<Set<String>>([])

    init(logger: Logger, strictReads: Bool) {
        self.logger = logger
        self.strictReads = strictReads
    }

    /// Warns that reading a relation property (`@Reference`, `@Children`, which cannot throw)
    /// failed and read as `fallback`: once per model class, property and kind of error (the
    /// error's text may name the key: a loop over a failing database warns once, not per row).
    /// Never stops the process, even under `strictReads`: the failure may be a server gone for a
    /// moment, not a bug.
    func reportFailedRelation(_ kind: String, _ property: String, of model: String, readsAs fallback: String,
                              throwing: String, error: any Error) {
        let message = "reading \(kind) \"\(property)\" of \(model) failed, so it reads as \(fallback): \(error) (\(throwing) throws it)"
        let key = "\(model)\u{0}\(property)\u{0}\(String(reflecting: type(of: error)))\u{0}\((error as? DicRecordError).map { "\($0.kind)" } ?? "")"
        if warnedRelations.withLock({ $0.insert(key).inserted }) { logger.warning("\(message)") }
    }

    /// Warns, once per model class and property, that a `@Reference` was set to a model with no
    /// `id` (not saved yet, or keyed by another column): its column is set to NULL.
    func reportReferenceWithoutId(_ property: String, of model: String, target: String, column: String) {
        let message = "setting @Reference \"\(property)\" of \(model) to a \(target) with no id (not saved yet, or keyed by another column): \"\(column)\" is set to NULL and the property reads nil (save the \(target) first)"
        if warnedRelations.withLock({ $0.insert("\(model)\u{0}\(property)\u{0}no id").inserted }) { logger.warning("\(message)") }
    }

    /// Records built in code belong to no context: they warn on swift-log's `DicRecord` label.
    static let builtInCode = ReadReporter(logger: Logger(label: "DicRecord"), strictReads: false)
}
