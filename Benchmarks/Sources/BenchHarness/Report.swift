import Foundation

/// Prints one Markdown table for the run: every workload, every implementation, times in
/// seconds, the ratio of the median to raw C's median in this same run, and peak memory.
public enum Report {
    /// `title` names the suite; `details` are the suite's own lines (engine version, settings, rows)
    /// printed after the date and the machine.
    public static func print(_ measurements: [Measurement], title: String, quick: Bool, details: [String], footer: [String] = [], wallTime: Duration) {
        let out = { (line: String) in Swift.print(line) }
        out("\(title) — \(quick ? "--quick (1 run, no warm-up)" : "median and min of 5 runs after 1 warm-up, implementations interleaved round by round")")
        out("")
        out("- date: \(ISO8601DateFormatter().string(from: Date()))")
        out("- machine: \(machineDescription())")
        for line in details { out("- \(line)") }
        out("")
        out("| workload | implementation | median s | min s | × raw | peak MiB |")
        out("|---|---|---:|---:|---:|---:|")
        for m in measurements {
            let raw = measurements.first { $0.workload == m.workload && $0.implementation == "raw" }
            let ratio = raw.map { format(ratio: m.median.seconds / $0.median.seconds) } ?? "—"
            let peak = m.peakBytes.map { String(format: "%.1f", Double($0) / 1_048_576) } ?? "n/a"
            out("| \(m.workload) | \(m.implementation) | \(format(m.median)) | \(format(m.min)) | \(ratio) | \(peak) |")
        }
        out("")
        for line in footer { out("- \(line)") }
        if !footer.isEmpty { out("") }
        out("Wall time \(String(format: "%.1f", wallTime.seconds)) s (fixtures included).")
    }

    /// Seconds with four decimals, six below a millisecond.
    private static func format(_ duration: Duration) -> String {
        String(format: duration.seconds < 0.001 ? "%.6f" : "%.4f", duration.seconds)
    }

    private static func format(ratio: Double) -> String {
        String(format: ratio < 0.1 ? "%.3f×" : "%.2f×", ratio)
    }

    private static func machineDescription() -> String {
        var parts: [String] = []
        if let cpu = readProcFile("/proc/cpuinfo"),
           let model = cpu.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let name = model.split(separator: ":", maxSplits: 1).last {
            parts.append(name.trimmingCharacters(in: .whitespaces))
        }
        parts.append("\(ProcessInfo.processInfo.activeProcessorCount) cores")
        parts.append("\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB")
        parts.append(ProcessInfo.processInfo.operatingSystemVersionString)
        return parts.joined(separator: ", ")
    }
}
