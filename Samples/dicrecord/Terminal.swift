import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A buffered writer to a file descriptor (stdout, stderr) or a file.
final class TextOutput {
    private let handle: FileHandle
    private var buffer = Data()
    /// Flushed at this size: output streams in constant memory whatever the row count.
    private let flushSize = 1 << 16
    /// The first write that failed (a full disk): reported by `close()`.
    private var failure: (any Error)?

    init(handle: FileHandle) { self.handle = handle }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= flushSize { flush() }
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        // A closed pipe (`dicrecord query … | head`) ends the process with SIGPIPE, as for any Unix tool.
        do {
            if failure == nil { try handle.write(contentsOf: buffer) }
        } catch {
            failure = error
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and throws if any write failed.
    func close() throws {
        flush()
        if let failure { throw ToolError("cannot write the output: \(failure)") }
    }
}

/// The process's terminal streams.
enum Terminal {
    /// Unbuffered: messages and progress appear at once.
    static let standardError = ErrorStream()

    static var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) != 0 }
    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) != 0 }

    final class ErrorStream: Sendable {
        func write(_ text: String) {
            try? FileHandle.standardError.write(contentsOf: Data(text.utf8))
        }
    }
}

/// A progress bar on stderr, shown only when stderr is a terminal and the work is large.
final class ProgressBar {
    /// Below this many rows a bar would only flicker.
    static let threshold = 10_000

    private let total: Int
    private let label: String
    private let enabled: Bool
    private var shownPercent = -1

    init(total: Int, label: String) {
        self.total = total
        self.label = label
        enabled = total > Self.threshold && Terminal.standardErrorIsTerminal
    }

    /// Whether a bar could be shown at all (callers count rows only then).
    static var canShow: Bool { Terminal.standardErrorIsTerminal }

    func update(_ done: Int) {
        guard enabled else { return }
        let percent = min(100, done * 100 / max(total, 1))
        guard percent != shownPercent else { return }
        shownPercent = percent
        let width = 30
        let filled = width * percent / 100
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        Terminal.standardError.write("\r\(label) \(bar) \(percent)% \(done)/\(total)")
    }

    func finish() {
        guard enabled, shownPercent >= 0 else { return }
        update(total)
        Terminal.standardError.write("\n")
    }
}
