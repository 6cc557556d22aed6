import CSQLiteBench
import Foundation

/// One timed row of the report.
struct Measurement {
    let workload: String
    let implementation: String
    /// Wall time of each timed run (warm-up excluded).
    let times: [Duration]
    /// Peak resident memory of the process while this implementation ran, nil when unknown.
    let peakBytes: Int?

    var median: Duration {
        let sorted = times.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    var min: Duration { times.min()! }
}

/// Thrown when two implementations of a workload disagree on the values they read.
struct ChecksumMismatch: Error, CustomStringConvertible {
    let workload: String
    let reference: (implementation: String, checksum: Int)
    let implementation: String
    let checksum: Int

    var description: String {
        "checksum mismatch in \(workload): \(reference.implementation) = \(reference.checksum), \(implementation) = \(checksum)"
    }
}

/// Runs the measurements and keeps their results.
///
/// Every implementation gets one untimed warm-up run (skipped by `--quick`), then `runs` timed runs
/// (5, or 1 with `--quick`); the report shows their median and minimum. Each run may have an
/// untimed `setUp` (a fresh file for inserts, say) and returns a value whose checksum is computed
/// after the clock stops and must equal the first implementation's (raw C, which runs first).
final class Bench {
    let quick: Bool
    /// When set, only implementations whose name contains it run (for profiling one of them).
    let only: String?
    private(set) var measurements: [Measurement] = []

    init(quick: Bool, only: String?) {
        self.quick = quick
        self.only = only
    }

    var runs: Int { quick ? 1 : 5 }
    var warmUp: Bool { !quick }

    /// Measures the implementations of one workload; `body` calls `measure` once per implementation.
    func workload(_ name: String, _ body: (Workload) throws -> Void) throws {
        log("\(name)")
        try body(Workload(name: name, bench: self))
    }

    fileprivate func add(_ measurement: Measurement) {
        measurements.append(measurement)
        let median = String(format: "%.4f", measurement.median.seconds)
        log("  \(measurement.implementation): median \(median) s")
    }

    func log(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

/// The implementations of one workload, measured in turn against the same checksum.
final class Workload {
    let name: String
    private let bench: Bench
    private var reference: (implementation: String, checksum: Int)?

    fileprivate init(name: String, bench: Bench) {
        self.name = name
        self.bench = bench
    }

    /// Times `body`, whose result is an already computed checksum (the usual case: the body sums
    /// what it reads while it reads).
    func measure(_ implementation: String, setUp: () throws -> Void = {}, _ body: () throws -> Int) throws {
        try measure(implementation, setUp: setUp, checksum: { $0 }, body)
    }

    /// Times `body`; `checksum` runs after the clock stops, on the body's result.
    func measure<R>(_ implementation: String, setUp: () throws -> Void = {}, checksum: (R) throws -> Int,
                    _ body: () throws -> R) throws {
        if let only = bench.only, !implementation.contains(only) { return }
        // Peak memory: before each timed run the kernel's high-water mark (VmHWM) is reset to the
        // current RSS (after handing freed heap memory back to the system) by writing "5" to
        // /proc/self/clear_refs, and read again as soon as the clock stops, so that it covers the
        // timed block only; the report shows the largest of the runs. Every implementation runs in
        // this one process, so the figure includes the process's baseline (~25 MiB).
        var times: [Duration] = []
        var peak: Int? = 0
        for run in 0..<(bench.warmUp ? bench.runs + 1 : bench.runs) {
            try setUp()
            let canMeasurePeak = MemoryMeter.resetPeak()
            let clock = ContinuousClock()
            let start = clock.now
            let result = try body()
            let elapsed = clock.now - start
            let runPeak = canMeasurePeak ? MemoryMeter.peakBytes() : nil
            try verify(implementation, try checksum(result))
            if bench.warmUp && run == 0 { continue }
            times.append(elapsed)
            peak = runPeak.flatMap { runPeak in peak.map { Swift.max($0, runPeak) } }
        }
        bench.add(Measurement(workload: name, implementation: implementation, times: times, peakBytes: peak))
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
enum MemoryMeter {
    /// Gives freed heap memory back to the system, then resets VmHWM to the current RSS by writing
    /// "5" to /proc/self/clear_refs. False when that is not possible (not Linux, old kernel).
    static func resetPeak() -> Bool {
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
    static func peakBytes() -> Int? {
        guard let status = readProcFile("/proc/self/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.dropFirst("VmHWM:".count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}

/// The text of a /proc file (they report a size of 0, so read until EOF).
func readProcFile(_ path: String) -> String? {
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
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}
