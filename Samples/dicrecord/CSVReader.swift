import DicRecord
import Foundation

/// Reads RFC 4180 CSV: fields separated by commas, records by CRLF or LF, fields with commas,
/// quotes or line breaks in double quotes (a quote doubled inside). Whether a field was quoted
/// is kept, since it decides the field's type on import (see `CSVReader.value`).
struct CSVReader {
    struct Field {
        let text: String
        let quoted: Bool
    }

    struct Record {
        let fields: [Field]
        /// The 1-based line the record starts on, for error messages.
        let line: Int
    }

    /// Every record of `data`; a malformed file throws with the line of the problem.
    static func records(_ data: Data, name: String) throws -> [Record] {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }   // a UTF-8 byte order mark
        let quote = UInt8(ascii: "\""), comma = UInt8(ascii: ","), cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")

        var records: [Record] = []
        var fields: [Field] = []
        var line = 1
        var recordLine = 1
        var i = 0
        let n = bytes.count
        func text(_ range: Range<Int>) -> String { String(decoding: bytes[range], as: UTF8.self) }
        func endOfRecord(at index: Int) -> Int? {
            // The index after a record's line end at `index`, or nil when there is none there.
            guard index < n else { return nil }
            if bytes[index] == lf { return index + 1 }
            if bytes[index] == cr { return index + 1 < n && bytes[index + 1] == lf ? index + 2 : index + 1 }
            return nil
        }

        while i < n {
            if bytes[i] == quote {
                var value: [UInt8] = []
                let startLine = line
                i += 1
                while true {
                    guard i < n else { throw ToolError("\(name) line \(startLine): a quoted field is not closed") }
                    if bytes[i] == quote {
                        if i + 1 < n && bytes[i + 1] == quote {
                            value.append(quote)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    if bytes[i] == lf { line += 1 }
                    value.append(bytes[i])
                    i += 1
                }
                fields.append(Field(text: String(decoding: value, as: UTF8.self), quoted: true))
                if i < n && bytes[i] != comma && endOfRecord(at: i) == nil {
                    throw ToolError("\(name) line \(line): text after the closing quote of a field")
                }
            } else {
                let start = i
                while i < n && bytes[i] != comma && bytes[i] != cr && bytes[i] != lf {
                    if bytes[i] == quote { throw ToolError("\(name) line \(line): a quote inside an unquoted field") }
                    i += 1
                }
                fields.append(Field(text: text(start..<i), quoted: false))
            }
            if i < n && bytes[i] == comma {
                i += 1
                if i == n { fields.append(Field(text: "", quoted: false)) }
                continue
            }
            if let next = endOfRecord(at: i) { i = next }
            records.append(Record(fields: fields, line: recordLine))
            fields = []
            line += 1
            recordLine = line
        }
        return records
    }

    /// The value an imported field stands for (the inverse of the CSV export): a quoted field is
    /// TEXT; unquoted, an empty field is NULL, an integer INTEGER, a decimal number (or `Inf`,
    /// `-Inf`) REAL, `X'hex'` a BLOB, anything else TEXT.
    static func value(_ field: Field) throws -> DatabaseValue {
        if field.quoted { return .text(field.text) }
        let text = field.text
        if text.isEmpty { return .null }
        if let integer = Int64(text), String(integer) == text { return .integer(integer) }
        if ArgumentTyping.isDecimal(text), let real = Double(text) { return .real(real) }
        if text == "Inf" { return .real(.infinity) }
        if text == "-Inf" { return .real(-.infinity) }
        if text.count >= 3, text.hasPrefix("X'") || text.hasPrefix("x'"), text.hasSuffix("'") {
            let hex = Array(text.utf8.dropFirst(2).dropLast())
            guard let data = blob(hex) else { throw ToolError("\(text.prefix(40)) is not a valid hex blob literal") }
            return .blob(data)
        }
        return .text(text)
    }

    private static func blob(_ hex: [UInt8]) -> Data? {
        guard hex.count % 2 == 0 else { return nil }
        var data = Data(capacity: hex.count / 2)
        var i = 0
        while i < hex.count {
            guard let high = nibble(hex[i]), let low = nibble(hex[i + 1]) else { return nil }
            data.append(high << 4 | low)
            i += 2
        }
        return data
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
