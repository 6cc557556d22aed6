import Logging
import Synchronization

/// One statement as it ran: what `showSql` logs and what `Options.onSql` receives.
public struct SqlTrace: Sendable, CustomStringConvertible {
    public let sql: String
    public let arguments: [DatabaseValue]
    public let duration: Duration
    public let configName: String

    public var description: String {
        let args = arguments.isEmpty ? "" : " [\(arguments.map(\.description).joined(separator: ", "))]"
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return "[\(configName)] \(sql)\(args) (\(String(format: "%.3f", ms)) ms)"
    }
}

/// Where executed SQL goes: swift-log when `showSql` is on, and the context's `onSql` observer.
final class SqlTracer: Sendable {
    private let showSqlFlag = Atomic<Bool>(false)
    private let observer: (@Sendable (SqlTrace) -> Void)?
    private let logger = Logger(label: "DicRecord.SQL")

    init(observer: (@Sendable (SqlTrace) -> Void)?) {
        self.observer = observer
    }

    var showSql: Bool {
        get { showSqlFlag.load(ordering: .relaxed) }
        set { showSqlFlag.store(newValue, ordering: .relaxed) }
    }

    /// Whether statements need timing and describing at all.
    @inline(__always)
    var isEnabled: Bool { observer != nil || showSqlFlag.load(ordering: .relaxed) }

    func record(sql: String, arguments: [DatabaseValue], configName: String, duration: Duration) {
        let trace = SqlTrace(sql: sql, arguments: arguments, duration: duration, configName: configName)
        if showSql {
            // The message is passed as a value, never as a format string: '%' in SQL is safe.
            logger.info("\(trace.description)")
        }
        observer?(trace)
    }
}
