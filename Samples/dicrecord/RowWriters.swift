import DicRecord
import Foundation

/// Receives a result set row by row and writes it in one output format.
protocol RowWriter: AnyObject {
    func write(columns: [String], row: [DatabaseValue])
    func finish()
}

/// The `json` format: an array of objects, one per row, keys in column order, like `sqlite3 -json`
/// (same layout, one row per line). Numbers are numbers, NULL is `null`, and a blob is
/// `{"base64": "…"}` (sqlite3 writes a blob's raw bytes into a string, which is not valid UTF-8).
final class JSONRowWriter: RowWriter {
    private let out: TextOutput
    private var rows = 0

    init(_ out: TextOutput) { self.out = out }

    func write(columns: [String], row: [DatabaseValue]) {
        out.write(rows == 0 ? "[{" : ",\n{")
        for (i, value) in row.enumerated() {
            if i > 0 { out.write(",") }
            out.write(JSONOutput.string(columns[i]))
            out.write(":")
            out.write(JSONOutput.value(value))
        }
        out.write("}")
        rows += 1
    }

    func finish() {
        out.write(rows == 0 ? "[]\n" : "]\n")
        out.flush()
    }
}

/// The JSON form of stored values for `JSONRowWriter` (`JSONRow.rows(json:)` in the library reads
/// it back). Not the library's internal `JSONText`, which writes a record's converted values.
enum JSONOutput {
    /// A JSON value for one SQLite value.
    static func value(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "null"
        case .integer(let v): String(v)
        case .real(let v): real(v)
        case .text(let v): string(v)
        case .blob(let v): "{\"base64\":\"\(v.base64EncodedString())\"}"
        }
    }

    /// A REAL as a JSON number that reads back as the same double; infinities as `1e999` and
    /// `-1e999`, as sqlite3 writes them (JSON has no infinity).
    static func real(_ value: Double) -> String {
        if value == .infinity { return "1e999" }
        if value == -.infinity { return "-1e999" }
        return "\(value)"
    }

    /// A JSON string: quotes, backslashes and control characters escaped, the rest as UTF-8.
    static func string(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\u{08}": result += "\\b"
            case "\u{0C}": result += "\\f"
            case let c where c.value < 0x20:
                result += "\\u" + String(repeating: "0", count: 4 - String(c.value, radix: 16).count) + String(c.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// The `csv` format (RFC 4180): a header row, then one record per row, CRLF line ends. Text is
/// always quoted (quotes doubled), so that the file tells types apart: an empty unquoted field is
/// NULL and `""` an empty string, numbers are unquoted, blobs unquoted as `<blob N bytes>` in
/// query output and as SQL hex literals `X'0A1B'` in exports (which import reads back).
final class CSVRowWriter: RowWriter {
    enum Blobs { case summarized, hex }

    private let out: TextOutput
    private let blobs: Blobs
    private var wroteHeader = false

    init(_ out: TextOutput, blobs: Blobs) {
        self.out = out
        self.blobs = blobs
    }

    /// Writes the header row; called by the first row, or directly when the column names are
    /// known for an empty result (exports).
    func writeHeader(_ columns: [String]) {
        guard !wroteHeader else { return }
        wroteHeader = true
        out.write(columns.map(CSVText.headerField).joined(separator: ",") + "\r\n")
    }

    func write(columns: [String], row: [DatabaseValue]) {
        writeHeader(columns)
        out.write(row.map(field).joined(separator: ",") + "\r\n")
    }

    private func field(_ value: DatabaseValue) -> String {
        switch value {
        case .null: ""
        case .integer(let v): String(v)
        case .real(let v): TextCell.real(v)
        case .text(let v): CSVText.quoted(v)
        case .blob(let v):
            switch blobs {
            case .summarized: TextCell.blobSummary(v)
            case .hex: "X'" + v.map { String(format: "%02X", $0) }.joined() + "'"
            }
        }
    }

    func finish() { out.flush() }
}

enum CSVText {
    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A column name: quoted only when it has to be.
    static func headerField(_ name: String) -> String {
        let special = name.isEmpty || name.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" })
            || name.first == " " || name.last == " "
        return special ? quoted(name) : name
    }
}

/// The `table` format: a box around aligned columns, each as wide as its widest cell in
/// terminal columns (Chinese characters count 2, combining marks 0). Numbers are right-aligned;
/// NULL shows as `∅` and a blob as `<blob N bytes>` (both dimmed on a terminal); control
/// characters in text show as Unicode control pictures (␊ for a newline) so a row stays on one line.
final class TableRowWriter: RowWriter {
    private let out: TextOutput
    private let dim: Bool
    private var columns: [String] = []
    private var rows: [[Cell]] = []

    private struct Cell {
        let text: String
        let width: Int
        let rightAligned: Bool
        let dimmed: Bool
    }

    init(_ out: TextOutput, dim: Bool) {
        self.out = out
        self.dim = dim
    }

    func write(columns: [String], row: [DatabaseValue]) {
        if rows.isEmpty { self.columns = columns }
        rows.append(row.map(cell))
    }

    private func cell(_ value: DatabaseValue) -> Cell {
        switch value {
        case .null: Cell(text: TextCell.nullMark, width: DisplayWidth.of(TextCell.nullMark), rightAligned: false, dimmed: true)
        case .integer(let v): Self.plain(String(v), rightAligned: true)
        case .real(let v): Self.plain(TextCell.real(v), rightAligned: true)
        case .text(let v): Self.plain(TextCell.printable(v), rightAligned: false)
        case .blob(let v): Cell(text: TextCell.blobSummary(v), width: TextCell.blobSummary(v).count, rightAligned: false, dimmed: true)
        }
    }

    private static func plain(_ text: String, rightAligned: Bool) -> Cell {
        Cell(text: text, width: DisplayWidth.of(text), rightAligned: rightAligned, dimmed: false)
    }

    func finish() {
        defer { out.flush() }
        guard !rows.isEmpty else { return }
        let header = columns.map { Self.plain(TextCell.printable($0), rightAligned: false) }
        var widths = header.map(\.width)
        for row in rows {
            for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.width) }
        }
        let rule = { (left: String, middle: String, right: String) in
            left + widths.map { String(repeating: "─", count: $0 + 2) }.joined(separator: middle) + right + "\n"
        }
        out.write(rule("┌", "┬", "┐"))
        line(header, widths)
        out.write(rule("├", "┼", "┤"))
        for row in rows { line(row, widths) }
        out.write(rule("└", "┴", "┘"))
    }

    private func line(_ cells: [Cell], _ widths: [Int]) {
        var text = "│"
        for (i, cell) in cells.enumerated() {
            let padding = String(repeating: " ", count: widths[i] - cell.width)
            let shown = cell.dimmed && dim ? "\u{1B}[2m\(cell.text)\u{1B}[0m" : cell.text
            text += " " + (cell.rightAligned ? padding + shown : shown + padding) + " │"
        }
        out.write(text + "\n")
    }
}
