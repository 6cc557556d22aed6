import CMallocTrim
import Foundation

/// One timed row of the report.
public struct Measurement: Sendable {
    public let workload: String
    public let implementation: String
    /// Wall time of each timed run (warm-up excluded).
    public let times: [Duration]
    /// Peak resident memory of the process during this implementation's timed runs (the largest
    /// of them), nil when unknown.
    public let peakBytes: Int?

    public var median: Duration {
        let sorted = times.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    public var min: Duration { times.min()! }
}

/// Thrown when two implementations of a workload disagree on the values they read.
public struct ChecksumMismatch: Error, CustomStringConvertible {
    let workload: String
    let reference: (implementation: String, checksum: Int)
    let implementation: String
    let checksum: Int

    public init(workload: String, reference: (implementation: String, checksum: Int), implementation: String, checksum: Int) {
        self.workload = workload
        self.reference = reference
        self.implementation = implementation
        self.checksum = checksum
    }

    public var description: String {
        "checksum mismatch in \(workload): \(reference.implementation) = \(reference.checksum), \(implementation) = \(checksum)"
    }
}

/// Runs the measurements and keeps their results.
///
/// A workload registers its implementations, then they run in rounds: one untimed warm-up round
/// (skipped by `--quick`), then `runs` timed rounds (5, or 1 with `--quick`), each round running
/// every implementation once in registration order. Interleaving spreads a burst of load from
/// elsewhere on the machine over all implementations instead of one. The report shows the median
/// and minimum of the timed runs. Each run may have an untimed `setUp` (a fresh file for inserts,
/// say) and returns a value whose checksum is computed after the clock stops and must equal the
/// first implementation's (raw C, registered first).
public final class Bench {
    public let quick: Bool
    /// When set, only implementations whose name contains one of these run (for profiling one of
    /// them, or timing it next to raw: `--only raw,"dicrecord each"`).
    public let only: [String]?
    public private(set) var measurements: [Measurement] = []

    public init(quick: Bool, only: [String]?) {
        self.quick = quick
        self.only = only
    }

    public var runs: Int { quick ? 1 : 5 }
    public var warmUp: Bool { !quick }

    /// Measures the implementations of one workload; `body` registers them with `measure`.
    public func workload(_ name: String, _ body: (Workload) throws -> Void) throws {
        log("\(name)")
        let workload = Workload(name: name)
        try body(workload)
        let cases = workload.cases.filter { item in only?.contains { item.implementation.contains($0) } ?? true }
        var times = Array(repeating: [Duration](), count: cases.count)
        var peaks = Array(repeating: Int?(0), count: cases.count)
        for round in 0..<(warmUp ? runs + 1 : runs) {
            for (i, item) in cases.enumerated() {
                let (elapsed, peak) = try item.run()
                if warmUp && round == 0 { continue }
                times[i].append(elapsed)
                peaks[i] = peak.flatMap { peak in peaks[i].map { Swift.max($0, peak) } }
            }
        }
        for (i, item) in cases.enumerated() {
            let measurement = Measurement(workload: name, implementation: item.implementation, times: times[i], peakBytes: peaks[i])
            measurements.append(measurement)
            log("  \(item.implementation): median \(String(format: "%.4f", measurement.median.seconds)) s")
        }
    }

    public func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// The implementations of one workload, measured against the same checksum.
public final class Workload {
    public let name: String
    fileprivate var cases: [Case] = []
    private var reference: (implementation: String, checksum: Int)?

    fileprivate struct Case {
        let implementation: String
        /// One run: set up, time the body, check its checksum; the time and the peak memory.
        let run: () throws -> (Duration, Int?)
    }

    fileprivate init(name: String) {
        self.name = name
    }

    /// Registers an implementation whose body returns an already computed checksum (the usual
    /// case: the body sums what it reads while it reads).
    public func measure(_ implementation: String, setUp: @escaping () throws -> Void = {}, tearDown: @escaping () -> Void = {},
                 _ body: @escaping () throws -> Int) {
        measure(implementation, setUp: setUp, tearDown: tearDown, checksum: { $0 }, body)
    }

    /// Registers an implementation. Each run calls `setUp`, times `body`, computes `checksum` on
    /// its result and calls `tearDown`; only `body` is timed.
    public func measure<R>(_ implementation: String, setUp: @escaping () throws -> Void = {}, tearDown: @escaping () -> Void = {},
                    checksum: @escaping (R) throws -> Int, _ body: @escaping () throws -> R) {
        // Peak memory: before each timed run the kernel's high-water mark (VmHWM) is reset to the
        // current RSS (after handing freed heap memory back to the system) by writing "5" to
        // /proc/self/clear_refs, and read again as soon as the clock stops, so that it covers the
        // timed block only; the report shows the largest of the runs. Every implementation runs in
        // this one process, so the figure includes the process's baseline (~25 MiB) and whatever
        // `setUp` built for the run; `tearDown` should drop it.
        cases.append(Case(implementation: implementation) { [unowned self] in
            try setUp()
            defer { tearDown() }
            let canMeasurePeak = MemoryMeter.resetPeak()
            let clock = ContinuousClock()
            let start = clock.now
            let result = try body()
            let elapsed = clock.now - start
            let peak = canMeasurePeak ? MemoryMeter.peakBytes() : nil
            try verify(implementation, try checksum(result))
            return (elapsed, peak)
        })
    }

    private func verify(_ implementation: String, _ checksum: Int) throws {
        guard let reference else {
            reference = (implementation, checksum)
            return
        }
        guard reference.checksum == checksum else {
            throw ChecksumMismatch(workload: name, reference: reference, implementation: implementation, checksum: checksum)
        }
    }
}

/// Peak resident memory from /proc (Linux).
public enum MemoryMeter {
    /// Gives freed heap memory back to the system, then resets VmHWM to the current RSS by writing
    /// "5" to /proc/self/clear_refs. False when that is not possible (not Linux, old kernel).
    public static func resetPeak() -> Bool {
        #if os(Linux)
        malloc_trim(0)
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
        #else
        return false
        #endif
    }

    /// VmHWM from /proc/self/status, in bytes.
    public static func peakBytes() -> Int? {
        guard let status = readProcFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}

/// The text of a /proc file (they report a size of 0, so read until EOF).
public func readProcFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

extension Duration {
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

/// A failure of the benchmark itself (a server it cannot reach, a replica that never catches up).
public struct BenchError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
