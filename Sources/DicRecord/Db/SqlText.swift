/// The little SQL text handling the library needs: quoting identifiers it writes, telling a
/// read from a write, and finding a trailing ORDER BY outside strings, comments and parentheses.
import Foundation

package enum SqlText {
    /// `name` as a quoted SQL identifier: `order` → `"order"`, `a"b` → `"a""b"`.
    package static func quote(_ name: String) -> String {
        guard name.utf8.contains(UInt8(ascii: "\"")) else { return "\"\(name)\"" }
        return "\"" + doubling("\"", in: name) + "\""
    }

    /// `text` with every `quote` doubled, scalar by scalar: a quote followed by a combining mark is
    /// one Character to Swift but still a quote to SQLite.
    package static func doubling(_ quote: Unicode.Scalar, in text: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            scalars.append(scalar)
            if scalar == quote { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// `text` as an SQL string literal: `it's` → `'it''s'`.
    static func literal(_ text: String) -> String {
        "'" + doubling("'", in: text) + "'"
    }

    /// `INSERT INTO "table" ("a", "b") VALUES (?, ?)`, or `DEFAULT VALUES` for no columns.
    static func insert(into table: String, columns: [String]) -> String {
        columns.isEmpty
            ? "INSERT INTO \(quote(table)) DEFAULT VALUES"
            : "INSERT INTO \(quote(table)) (\(columns.map(quote).joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
    }

    /// The columns of a primary key declared as `"id"` or `"a, b"`.
    static func keyColumns(_ primaryKey: String) -> [String] {
        primaryKey.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    enum Access { case read, write, ask }

    /// Where a statement can run: SELECT, VALUES and EXPLAIN on a reader; WITH may be either
    /// (`WITH … INSERT`), so SQLite is asked; anything else on the writer.
    static func access(_ sql: String) -> Access {
        sql.utf8.withContiguousStorageIfAvailable(access(bytes:)) ?? access(bytes: sql.utf8)
    }

    /// The first word, by bytes: this runs on every query.
    @inline(__always)
    private static func access<Bytes: Collection<UInt8>>(bytes: Bytes) -> Access {
        var word: UInt64 = 0, length = 0
        for byte in bytes {
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "("):
                if length > 0 { return access(word: word) }
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
                guard length < 8 else { return .write }
                word = word << 8 | UInt64(byte | 0x20)
                length += 1
            default:
                return length > 0 ? access(word: word) : .write
            }
        }
        return access(word: word)
    }

    /// The keywords' lowercase ASCII bytes packed big-endian, as `access(bytes:)` packs the first
    /// word (literals, so that no lazily initialized global is checked per query).
    private static let select: UInt64 = 0x73_65_6c_65_63_74, values: UInt64 = 0x76_61_6c_75_65_73
    private static let explain: UInt64 = 0x65_78_70_6c_61_69_6e, with: UInt64 = 0x77_69_74_68

    private static func access(word: UInt64) -> Access {
        switch word {
        case select, values, explain: return .read
        case with: return .ask
        default: return .write
        }
    }

    /// `sql` without a trailing top-level `ORDER BY …` (count queries don't need it), unless that
    /// clause holds a placeholder, whose argument the count query must still bind.
    static func removingTrailingOrderBy(_ sql: String) -> String {
        let tokens = topLevelWords(sql)
        guard let order = tokens.lastIndex(where: { $0.word == "order" }),
              order + 1 < tokens.count, tokens[order + 1].word == "by" else { return sql }
        let start = tokens[order].offset
        let tail = sql.utf8[sql.utf8.index(sql.utf8.startIndex, offsetBy: start)...]
        if hasPlaceholder(Substring(tail)) { return sql }
        return String(decoding: Array(sql.utf8.prefix(start)), as: UTF8.self)
    }

    /// Lowercased words at parenthesis depth 0, outside strings and comments, with their UTF-8 offsets.
    private static func topLevelWords(_ sql: String) -> [(word: String, offset: Int)] {
        let bytes = Array(sql.utf8)
        var words: [(String, Int)] = []
        var i = 0, depth = 0
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "`"):
                i = skipQuoted(bytes, from: i, closing: b)
            case UInt8(ascii: "["):
                i = skipQuoted(bytes, from: i, closing: UInt8(ascii: "]"))
            case UInt8(ascii: "-") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "-"):
                while i < bytes.count && bytes[i] != UInt8(ascii: "\n") { i += 1 }
            case UInt8(ascii: "/") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*"):
                i += 2
                while i + 1 < bytes.count && !(bytes[i] == UInt8(ascii: "*") && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i += 2
            case UInt8(ascii: "("): depth += 1; i += 1
            case UInt8(ascii: ")"): depth -= 1; i += 1
            default:
                if isWordByte(b) {
                    let start = i
                    while i < bytes.count && isWordByte(bytes[i]) { i += 1 }
                    if depth == 0 { words.append((String(decoding: bytes[start..<i], as: UTF8.self).lowercased(), start)) }
                } else {
                    i += 1
                }
            }
        }
        return words
    }

    private static func isWordByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_") || b >= 0x80
    }

    private static func skipQuoted(_ bytes: [UInt8], from start: Int, closing: UInt8) -> Int {
        var i = start + 1
        while i < bytes.count {
            if bytes[i] == closing {
                // A doubled quote is an escaped quote inside the string.
                if i + 1 < bytes.count && bytes[i + 1] == closing && closing != UInt8(ascii: "]") { i += 2; continue }
                return i + 1
            }
            i += 1
        }
        return i
    }

    /// True when `text` holds `?`, `:name`, `@name` or `$name` outside strings.
    private static func hasPlaceholder(_ text: Substring) -> Bool {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "'") || b == UInt8(ascii: "\"") || b == UInt8(ascii: "`") {
                i = skipQuoted(bytes, from: i, closing: b)
                continue
            }
            if b == UInt8(ascii: "?") { return true }
            if (b == UInt8(ascii: ":") || b == UInt8(ascii: "@") || b == UInt8(ascii: "$")),
               i + 1 < bytes.count, isWordByte(bytes[i + 1]) { return true }
            i += 1
        }
        return false
    }
}
