import DicRecord
import Foundation

/// Reads the JSON import format: an array of objects whose members are columns. Numbers keep
/// SQLite's distinction: an integer literal that fits 64 bits is INTEGER, any other number REAL
/// (`1.0` stays REAL); `true`/`false` are 1/0; `{"base64": "…"}` is a BLOB; any other object or
/// array is stored as its JSON text.
struct JSONReader {
    /// One object of the array: its members in file order.
    struct Row {
        let columns: [String]
        let values: [DatabaseValue]
        /// The 1-based line the object starts on.
        let line: Int
    }

    private let bytes: [UInt8]
    private let name: String
    private var i = 0
    private var line = 1
    /// Deeper nesting is refused rather than risking the stack.
    private static let maxDepth = 512

    private init(_ data: Data, name: String) {
        var bytes = [UInt8](data)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }
        self.bytes = bytes
        self.name = name
    }

    static func rows(_ data: Data, name: String) throws -> [Row] {
        var reader = JSONReader(data, name: name)
        return try reader.readRows()
    }

    private mutating func readRows() throws -> [Row] {
        skipSpace()
        try expect(UInt8(ascii: "["), "the file must hold an array of objects")
        var rows: [Row] = []
        skipSpace()
        if peek == UInt8(ascii: "]") {
            i += 1
        } else {
            while true {
                skipSpace()
                rows.append(try readRow())
                skipSpace()
                if peek == UInt8(ascii: ",") { i += 1; continue }
                try expect(UInt8(ascii: "]"), "expected ',' or ']' after an object")
                break
            }
        }
        skipSpace()
        guard i == bytes.count else { throw failure("unexpected text after the array") }
        return rows
    }

    private mutating func readRow() throws -> Row {
        let startLine = line
        guard peek == UInt8(ascii: "{") else { throw failure("each element of the array must be an object") }
        i += 1
        var columns: [String] = []
        var values: [DatabaseValue] = []
        skipSpace()
        if peek == UInt8(ascii: "}") {
            i += 1
            return Row(columns: [], values: [], line: startLine)
        }
        while true {
            skipSpace()
            guard peek == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let key = try readString()
            skipSpace()
            try expect(UInt8(ascii: ":"), "expected ':' after a member name")
            skipSpace()
            columns.append(key)
            values.append(try readColumnValue())
            skipSpace()
            if peek == UInt8(ascii: ",") { i += 1; continue }
            try expect(UInt8(ascii: "}"), "expected ',' or '}' in an object")
            return Row(columns: columns, values: values, line: startLine)
        }
    }

    /// A member value as the value to store.
    private mutating func readColumnValue() throws -> DatabaseValue {
        switch peek {
        case UInt8(ascii: "\""): return .text(try readString())
        case UInt8(ascii: "{"):
            let (start, startLine) = (i, line)
            if let blob = try readBlobObject() { return .blob(blob) }
            (i, line) = (start, startLine)
            return .text(try readRawValue())
        case UInt8(ascii: "["): return .text(try readRawValue())
        case UInt8(ascii: "t"): try keyword("true"); return .integer(1)
        case UInt8(ascii: "f"): try keyword("false"); return .integer(0)
        case UInt8(ascii: "n"): try keyword("null"); return .null
        default: return try readNumber()
        }
    }

    /// `{"base64": "…"}` as its bytes; nil (position unspecified) when the object is anything else.
    private mutating func readBlobObject() throws -> Data? {
        i += 1
        skipSpace()
        guard peek == UInt8(ascii: "\""), try readString() == "base64" else { return nil }
        skipSpace()
        guard peek == UInt8(ascii: ":") else { return nil }
        i += 1
        skipSpace()
        guard peek == UInt8(ascii: "\"") else { return nil }
        let encoded = try readString()
        skipSpace()
        guard peek == UInt8(ascii: "}") else { return nil }
        i += 1
        guard let data = Data(base64Encoded: encoded) else { throw failure("invalid base64 in a blob object") }
        return data
    }

    /// Any JSON value, checked, as its source text (objects and arrays that are not blobs).
    private mutating func readRawValue() throws -> String {
        let start = i
        try skipValue(depth: 0)
        return String(decoding: bytes[start..<i], as: UTF8.self)
    }

    private mutating func skipValue(depth: Int) throws {
        guard depth < Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth) levels") }
        switch peek {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = peek == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            i += 1
            skipSpace()
            if peek == close { i += 1; return }
            while true {
                skipSpace()
                if isObject {
                    guard peek == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
                    _ = try readString()
                    skipSpace()
                    try expect(UInt8(ascii: ":"), "expected ':' after a member name")
                    skipSpace()
                }
                try skipValue(depth: depth + 1)
                skipSpace()
                if peek == UInt8(ascii: ",") { i += 1; continue }
                try expect(close, "expected ',' or '\(Character(Unicode.Scalar(close)))'")
                return
            }
        case UInt8(ascii: "\""): _ = try readString()
        case UInt8(ascii: "t"): try keyword("true")
        case UInt8(ascii: "f"): try keyword("false")
        case UInt8(ascii: "n"): try keyword("null")
        default: _ = try readNumber()
        }
    }

    private mutating func readNumber() throws -> DatabaseValue {
        let start = i
        if peek == UInt8(ascii: "-") { i += 1 }
        let integerStart = i
        while let c = peek, isDigit(c) { i += 1 }
        guard i > integerStart else { throw failure("expected a value") }
        if bytes[integerStart] == UInt8(ascii: "0") && i - integerStart > 1 { throw failure("a number with a leading zero") }
        var isInteger = true
        if peek == UInt8(ascii: ".") {
            isInteger = false
            i += 1
            let fractionStart = i
            while let c = peek, isDigit(c) { i += 1 }
            guard i > fractionStart else { throw failure("expected digits after the decimal point") }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            isInteger = false
            i += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { i += 1 }
            let exponentStart = i
            while let c = peek, isDigit(c) { i += 1 }
            guard i > exponentStart else { throw failure("expected digits in an exponent") }
        }
        let literal = String(decoding: bytes[start..<i], as: UTF8.self)
        // A too-large integer becomes REAL, as SQLite itself does with such a literal.
        if isInteger, let integer = Int64(literal) { return .integer(integer) }
        guard let real = Double(literal) else { throw failure("invalid number \(literal)") }
        return .real(real)
    }

    private mutating func readString() throws -> String {
        let startLine = line
        i += 1   // the opening quote
        var scalars = String.UnicodeScalarView()
        var run = i
        func flush(_ end: Int) { scalars.append(contentsOf: String(decoding: bytes[run..<end], as: UTF8.self).unicodeScalars) }
        while true {
            guard let c = peek else { throw ToolError("\(name) line \(startLine): a string is not closed") }
            if c == UInt8(ascii: "\"") {
                flush(i)
                i += 1
                return String(scalars)
            }
            if c < 0x20 { throw failure("a control character inside a string (escape it)") }
            if c != UInt8(ascii: "\\") {
                i += 1
                continue
            }
            flush(i)
            i += 1
            guard let escape = peek else { throw failure("a string is not closed") }
            i += 1
            switch escape {
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
                if (0xD800...0xDBFF).contains(code), peek == UInt8(ascii: "\\"), i + 1 < bytes.count, bytes[i + 1] == UInt8(ascii: "u") {
                    let save = i
                    i += 2
                    let low = try hex4()
                    if (0xDC00...0xDFFF).contains(low) {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    } else {
                        i = save
                    }
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")   // a lone surrogate
            default:
                throw failure("invalid escape in a string")
            }
            run = i
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var code: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let digit: UInt32
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
            default: throw failure("a \\u escape needs four hex digits")
            }
            code = code << 4 | digit
            i += 1
        }
        return code
    }

    private mutating func keyword(_ word: String) throws {
        let utf8 = Array(word.utf8)
        guard bytes.count - i >= utf8.count, bytes[i..<i + utf8.count].elementsEqual(utf8) else { throw failure("expected a value") }
        i += utf8.count
    }

    private var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    private func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    private mutating func skipSpace() {
        while let c = peek, c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
            if c == 0x0A { line += 1 }
            i += 1
        }
    }

    private mutating func expect(_ byte: UInt8, _ message: String) throws {
        guard peek == byte else { throw failure(message) }
        i += 1
    }

    private func failure(_ message: String) -> ToolError {
        ToolError("\(name) line \(line): \(message)")
    }
}
