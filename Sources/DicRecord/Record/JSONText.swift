import Foundation

/// A small JSON reader and writer that keeps the order of object keys (Foundation's does not).
/// The package's one JSON parser: `Record(json:)` reads one object with it, `JSONRow.rows(json:)`
/// an array of objects as stored values (and the `dicrecord` tool's `import` reads through that).
package enum JSONText {
    package static func appendString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }

    static func appendValue(_ value: Any?, stored: DatabaseValue, column: String, to out: inout String) throws {
        switch value {
        case let date as Date:
            appendString(isoFormatter.string(from: date), to: &out)
            return
        case let data as Data:
            appendString(data.base64EncodedString(), to: &out)
            return
        default:
            break
        }
        switch stored {
        case .null: out += "null"
        case .integer(let v): out += String(v)
        case .real(let v):
            guard v.isFinite else {
                throw DicRecordError(.invalidJSON, "column \"\(column)\" holds \(v), which JSON cannot represent")
            }
            out += String(v)
        case .text(let s): appendString(s, to: &out)
        case .blob(let d): appendString(d.base64EncodedString(), to: &out)
        }
    }

    nonisolated(unsafe) static let isoFormatter: ISO8601DateFormatter = {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f
    }()

    /// The members of a top-level JSON object, in order, as Swift values
    /// (`Int64`, `Double`, `String`, `Bool`, nil; nested containers as JSON text).
    static func parseObject(_ text: String) throws -> [(String, (any Sendable)?)] {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipSpace()
        guard parser.peek() == UInt8(ascii: "{") else { throw parser.error("expected a JSON object") }
        parser.index += 1
        var members: [(String, (any Sendable)?)] = []
        parser.skipSpace()
        if parser.peek() == UInt8(ascii: "}") {
            parser.index += 1
        } else {
            while true {
                parser.skipSpace()
                let key = try parser.string()
                parser.skipSpace()
                try parser.expect(":")
                parser.skipSpace()
                members.append((key, try parser.value()))
                parser.skipSpace()
                if parser.peek() == UInt8(ascii: ",") { parser.index += 1; continue }
                try parser.expect("}")
                break
            }
        }
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the object") }
        return members
    }

    /// The objects of a top-level JSON array as rows of stored values (see `JSONRow.rows(json:)`).
    /// A leading UTF-8 byte order mark is skipped; byte positions in errors count it.
    static func parseRows(_ bytes: [UInt8]) throws -> [JSONRow] {
        var parser = Parser(bytes: bytes, allowsInfinity: true)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        parser.skipSpace()
        guard parser.peek() == UInt8(ascii: "[") else { throw parser.error("expected an array of objects") }
        parser.index += 1
        var rows: [JSONRow] = []
        // Lines are counted as the rows go, so that numbering every row stays linear.
        var line = 1, countedTo = 0
        parser.skipSpace()
        if parser.peek() == UInt8(ascii: "]") {
            parser.index += 1
        } else {
            while true {
                parser.skipSpace()
                guard parser.peek() == UInt8(ascii: "{") else { throw parser.error("each element of the array must be an object") }
                line += bytes[countedTo..<parser.index].count { $0 == 0x0A }
                countedTo = parser.index
                rows.append(try parser.row(line: line))
                parser.skipSpace()
                if parser.peek() == UInt8(ascii: ",") { parser.index += 1; continue }
                guard parser.peek() == UInt8(ascii: "]") else { throw parser.error("expected ',' or ']' after an object") }
                parser.index += 1
                break
            }
        }
        parser.skipSpace()
        guard parser.index == parser.bytes.count else { throw parser.error("unexpected text after the array") }
        return rows
    }

    struct Parser {
        let bytes: [UInt8]
        var index = 0
        /// Whether a number too large for a double reads as an infinity (as `sqlite3 -json` writes
        /// one: `1e999`) rather than throwing; a record's JSON could not write it back.
        var allowsInfinity = false

        init(bytes: [UInt8], allowsInfinity: Bool = false) {
            self.bytes = bytes
            self.allowsInfinity = allowsInfinity
        }

        func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

        /// The position as a byte offset, and its line too past the first (a raw newline can only
        /// be white space: inside a string it must be escaped).
        func error(_ what: String) -> DicRecordError {
            let line = 1 + bytes[..<min(index, bytes.count)].count { $0 == 0x0A }
            let position = line > 1 ? "line \(line) (byte \(index))" : "byte \(index)"
            return DicRecordError(.invalidJSON, "invalid JSON at \(position): \(what)")
        }

        mutating func skipSpace() {
            while let b = peek(), b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 { index += 1 }
        }

        mutating func expect(_ c: Unicode.Scalar) throws {
            guard peek() == UInt8(ascii: c) else { throw error("expected '\(c)'") }
            index += 1
        }

        mutating func literal(_ word: String) -> Bool {
            let w = Array(word.utf8)
            guard index + w.count <= bytes.count, Array(bytes[index..<index + w.count]) == w else { return false }
            index += w.count
            return true
        }

        mutating func value() throws -> (any Sendable)? {
            guard let b = peek() else { throw error("expected a value") }
            switch b {
            case UInt8(ascii: "\""): return try string()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let start = index
                try skipValue()
                return String(decoding: bytes[start..<index], as: UTF8.self)
            case UInt8(ascii: "t"): if literal("true") { return true }
            case UInt8(ascii: "f"): if literal("false") { return false }
            case UInt8(ascii: "n"): if literal("null") { return nil }
            default:
                switch try number() {
                case .integer(let integer): return integer
                case .real(let real): return real
                default: preconditionFailure("number() returns an integer or a real")
                }
            }
            throw error("unknown literal")
        }

        /// One object at `index` as a row: its members in order, each as the value SQLite stores.
        mutating func row(line: Int) throws -> JSONRow {
            try expect("{")
            var row = JSONRow(columns: [], values: [], line: line)
            skipSpace()
            if peek() == UInt8(ascii: "}") { index += 1; return row }
            while true {
                skipSpace()
                guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
                row.columns.append(try string())
                skipSpace()
                try expect(":")
                skipSpace()
                row.values.append(try storedValue())
                skipSpace()
                if peek() == UInt8(ascii: ",") { index += 1; continue }
                guard peek() == UInt8(ascii: "}") else { throw error("expected ',' or '}' in an object") }
                index += 1
                return row
            }
        }

        /// A member value as the value to store: `true`/`false` as 1/0, `{"base64": "…"}` as a
        /// BLOB, any other object or array as its JSON text.
        mutating func storedValue() throws -> DatabaseValue {
            switch peek() {
            case UInt8(ascii: "\""): return .text(try string())
            case UInt8(ascii: "{"):
                let start = index
                if let blob = try blobObject() { return .blob(blob) }
                index = start
                try skipValue()
                return .text(String(decoding: bytes[start..<index], as: UTF8.self))
            case UInt8(ascii: "["):
                let start = index
                try skipValue()
                return .text(String(decoding: bytes[start..<index], as: UTF8.self))
            case UInt8(ascii: "t"): if literal("true") { return .integer(1) }
            case UInt8(ascii: "f"): if literal("false") { return .integer(0) }
            case UInt8(ascii: "n"): if literal("null") { return .null }
            case nil: throw error("expected a value")
            default: return try number()
            }
            throw error("unknown literal")
        }

        /// `{"base64": "…"}` as its bytes; nil (and `index` anywhere) when the object is anything else.
        mutating func blobObject() throws -> Data? {
            index += 1
            skipSpace()
            guard peek() == UInt8(ascii: "\""), try string() == "base64" else { return nil }
            skipSpace()
            guard peek() == UInt8(ascii: ":") else { return nil }
            index += 1
            skipSpace()
            guard peek() == UInt8(ascii: "\"") else { return nil }
            let encoded = try string()
            skipSpace()
            guard peek() == UInt8(ascii: "}") else { return nil }
            index += 1
            guard let data = Data(base64Encoded: encoded) else { throw error("invalid base64 in a blob object") }
            return data
        }

        /// A number in JSON's grammar: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
        mutating func number() throws -> DatabaseValue {
            let start = index
            func digits() -> Int {
                let from = index
                while let b = peek(), b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") { index += 1 }
                return index - from
            }
            if peek() == UInt8(ascii: "-") { index += 1 }
            let integerStart = index
            let integerDigits = digits()
            guard integerDigits > 0, !(integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0")) else {
                index = start
                throw error("expected a number")
            }
            var isInteger = true
            if peek() == UInt8(ascii: ".") {
                index += 1
                isInteger = false
                guard digits() > 0 else { throw error("expected digits after the decimal point") }
            }
            if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
                index += 1
                isInteger = false
                if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw error("expected digits in the exponent") }
            }
            let text = String(decoding: bytes[start..<index], as: UTF8.self)
            // A too-large integer becomes REAL, as SQLite itself does with such a literal.
            if isInteger, let integer = Int64(text) { return .integer(integer) }
            guard let real = Double(text), real.isFinite || allowsInfinity else { throw error("number out of range") }
            return .real(real)
        }

        /// Checks one value of any kind (for nested containers kept as text).
        mutating func skipValue(depth: Int = 0) throws {
            guard depth < 512 else { throw error("nested too deeply") }
            skipSpace()
            switch peek() {
            case UInt8(ascii: "{"):
                index += 1
                skipSpace()
                if peek() == UInt8(ascii: "}") { index += 1; return }
                while true {
                    skipSpace()
                    _ = try string()
                    skipSpace()
                    try expect(":")
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    if peek() == UInt8(ascii: ",") { index += 1; continue }
                    try expect("}")
                    return
                }
            case UInt8(ascii: "["):
                index += 1
                skipSpace()
                if peek() == UInt8(ascii: "]") { index += 1; return }
                while true {
                    try skipValue(depth: depth + 1)
                    skipSpace()
                    if peek() == UInt8(ascii: ",") { index += 1; continue }
                    try expect("]")
                    return
                }
            default:
                _ = try value()
            }
        }

        mutating func string() throws -> String {
            try expect("\"")
            var scalars = String.UnicodeScalarView()
            var run = index
            func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars) }
            while true {
                guard let b = peek() else { throw error("unterminated string") }
                if b == UInt8(ascii: "\"") {
                    flush(index)
                    index += 1
                    return String(scalars)
                }
                if b == UInt8(ascii: "\\") {
                    flush(index)
                    index += 1
                    guard let e = peek() else { throw error("unterminated escape") }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""): scalars.append("\"")
                    case UInt8(ascii: "\\"): scalars.append("\\")
                    case UInt8(ascii: "/"): scalars.append("/")
                    case UInt8(ascii: "b"): scalars.append("\u{08}")
                    case UInt8(ascii: "f"): scalars.append("\u{0C}")
                    case UInt8(ascii: "n"): scalars.append("\n")
                    case UInt8(ascii: "r"): scalars.append("\r")
                    case UInt8(ascii: "t"): scalars.append("\t")
                    case UInt8(ascii: "u"):
                        var code = try hex4()
                        if (0xD800..<0xDC00).contains(code) {
                            guard literal("\\u") else { throw error("lone surrogate") }
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw error("bad surrogate pair") }
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        }
                        guard let scalar = Unicode.Scalar(code) else { throw error("bad \\u escape") }
                        scalars.append(scalar)
                    default: throw error("bad escape")
                    }
                    run = index
                    continue
                }
                if b < 0x20 { throw error("control character in string") }
                index += 1
            }
        }

        /// Exactly four hex digits (`UInt32(_:radix:)` alone would take "+041" or "-000").
        mutating func hex4() throws -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("bad \\u escape") }
            var v: UInt32 = 0
            for b in bytes[index..<index + 4] {
                guard let digit = Character(Unicode.Scalar(b)).hexDigitValue else { throw error("bad \\u escape") }
                v = v << 4 | UInt32(digit)
            }
            index += 4
            return v
        }
    }
}
