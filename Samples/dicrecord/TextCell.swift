import DicRecord
import Foundation

/// How one value is shown in the `table` and `csv` formats and written to JSON.
enum TextCell {
    /// NULL in the table format (the empty set sign: never confused with an empty string or the text "NULL").
    static let nullMark = "∅"

    /// A blob where the bytes themselves would not help: its size.
    static func blobSummary(_ data: Data) -> String {
        "<blob \(data.count) byte\(data.count == 1 ? "" : "s")>"
    }

    /// A REAL as text: the shortest decimal that reads back as the same double; infinities as
    /// sqlite3 shows them (`Inf`, `-Inf`).
    static func real(_ value: Double) -> String {
        if value == .infinity { return "Inf" }
        if value == -.infinity { return "-Inf" }
        return "\(value)"
    }

    /// Text made safe for one line of a table: control characters become their Unicode control
    /// pictures (a newline shows as ␊, a tab as ␉), so a row stays on one line and lines up;
    /// C1 controls and line/paragraph separators as `\u{2028}`.
    static func printable(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x00...0x1F: result.append(Unicode.Scalar(0x2400 + scalar.value) ?? "?")
            case 0x7F: result.append("\u{2421}")
            case 0x80...0x9F, 0x2028, 0x2029: result.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            default: result.append(scalar)
            }
        }
        return String(result)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
