// DicRecordPostgres: SQL written for DicRecord (`?`, `?NNN`, `:name`) as PostgreSQL reads it (`$n`).
import DicRecord

/// A statement's text with DicRecord's placeholders rewritten to PostgreSQL's `$n`, skipping
/// string literals, quoted identifiers, comments and dollar-quoted bodies. `??` stands for a
/// literal `?` (PostgreSQL's jsonb operators); `::` is a cast, never a name.
struct PostgresPlaceholders: Sendable, Equatable {
    /// The SQL PostgreSQL runs.
    let text: String
    /// How many `$n` parameters it has.
    let count: Int
    /// For `:name` SQL: the name (without `:`) of each parameter, `$1` first; nil for positional SQL.
    let names: [String]?
    /// Where each rewritten placeholder starts, as (byte offset in `text`, in the original SQL):
    /// how a position PostgreSQL reports is turned back into one in the SQL the user wrote.
    private let shifts: [(rewritten: Int, original: Int, rewrittenEnd: Int, originalEnd: Int)]

    static func == (a: Self, b: Self) -> Bool { a.text == b.text && a.count == b.count && a.names == b.names }

    /// The byte offset in the original SQL of PostgreSQL's 1-based character `position` in `text`.
    func originalOffset(ofCharacter position: Int) -> Int {
        let scalars = text.unicodeScalars
        let index = scalars.index(scalars.startIndex, offsetBy: max(0, min(position - 1, scalars.count)))
        let byte = text.utf8.distance(from: text.utf8.startIndex, to: index)
        var delta = 0
        for shift in shifts {
            if byte < shift.rewritten { break }
            if byte < shift.rewrittenEnd { return shift.original }
            delta = shift.originalEnd - shift.rewrittenEnd
        }
        return byte + delta
    }

    init(_ sql: String, configName: String?) throws {
        let bytes = Array(sql.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var i = 0
        var next = 0              // the last `?` number given (SQLite's rule: `?` is one more than the largest so far)
        var highest = 0
        var names: [String] = []
        var sawPositional = false
        var sawNamed = false
        var brackets = 0          // depth of [ ]: a colon inside is an array slice
        var shifts: [(rewritten: Int, original: Int, rewrittenEnd: Int, originalEnd: Int)] = []
        func isIdent(_ c: UInt8) -> Bool {
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x5F || c >= 0x80
        }
        func copy(until end: Int) { out.append(contentsOf: bytes[i..<end]); i = end }
        func append(_ s: String) { out.append(contentsOf: s.utf8) }
        /// Writes `$number` for the placeholder at `i`..<`end`, noting the shift for error positions.
        func emit(_ number: Int, replacing end: Int) {
            let start = out.count
            // `$` continues a PostgreSQL identifier: `and?` must not become `and$1`.
            if let last = out.last, isIdent(last) || last == UInt8(ascii: "$") { append(" ") }
            append("$\(number)")
            shifts.append((start, i, out.count, end))
            i = end
        }
        while i < bytes.count {
            let c = bytes[i]
            switch c {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // A literal or quoted identifier: '' (or "") inside is the quote itself. E'…' strings
                // may escape a quote with a backslash.
                let escapes = c == UInt8(ascii: "'") && i > 0 && (bytes[i - 1] | 0x20) == UInt8(ascii: "e")
                    && (i < 2 || !isIdent(bytes[i - 2]))
                var j = i + 1
                while j < bytes.count {
                    if escapes && bytes[j] == UInt8(ascii: "\\") { j += 2; continue }
                    if bytes[j] == c {
                        if j + 1 < bytes.count && bytes[j + 1] == c { j += 2; continue }
                        break
                    }
                    j += 1
                }
                copy(until: min(j + 1, bytes.count))
            case UInt8(ascii: "-") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "-"):
                var j = i
                while j < bytes.count && bytes[j] != UInt8(ascii: "\n") { j += 1 }
                copy(until: j)
            case UInt8(ascii: "/") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*"):
                var depth = 0, j = i   // PostgreSQL's block comments nest
                repeat {
                    if j + 1 < bytes.count && bytes[j] == UInt8(ascii: "/") && bytes[j + 1] == UInt8(ascii: "*") { depth += 1; j += 2 }
                    else if j + 1 < bytes.count && bytes[j] == UInt8(ascii: "*") && bytes[j + 1] == UInt8(ascii: "/") { depth -= 1; j += 2 }
                    else { j += 1 }
                } while depth > 0 && j < bytes.count
                copy(until: j)
            case UInt8(ascii: "$"):
                // $tag$ … $tag$ (a dollar-quoted body), or PostgreSQL's own $n, kept as written.
                var j = i + 1
                while j < bytes.count && isIdent(bytes[j]) && !(bytes[j] >= 0x30 && bytes[j] <= 0x39 && j == i + 1) { j += 1 }
                if j < bytes.count && bytes[j] == UInt8(ascii: "$") && (i == 0 || !isIdent(bytes[i - 1])) {
                    let tag = Array(bytes[i...j])
                    var k = j + 1
                    while k < bytes.count {
                        if bytes[k] == UInt8(ascii: "$") && k + tag.count <= bytes.count && Array(bytes[k..<(k + tag.count)]) == tag { k += tag.count; break }
                        k += 1
                    }
                    copy(until: min(k, bytes.count))
                } else {
                    var k = i + 1
                    var number = 0
                    while k < bytes.count && bytes[k] >= 0x30 && bytes[k] <= 0x39 { number = number * 10 + Int(bytes[k] - 0x30); k += 1 }
                    if k > i + 1 { highest = max(highest, number); sawPositional = true }
                    copy(until: max(k, i + 1))
                }
            case UInt8(ascii: "?"):
                if i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "?") {
                    shifts.append((out.count, i, out.count + 1, i + 2))
                    out.append(c)
                    i += 2
                    continue
                }
                var k = i + 1
                var number = 0
                while k < bytes.count && bytes[k] >= 0x30 && bytes[k] <= 0x39 && number < 100_000 { number = number * 10 + Int(bytes[k] - 0x30); k += 1 }
                if k == i + 1 {
                    next = max(next, highest) + 1
                    number = next
                } else if number < 1 {
                    throw DicRecordError(.invalidArgument, "placeholder ?0: numbered placeholders start at ?1", sql: sql, configName: configName)
                }
                highest = max(highest, number)
                next = max(next, number)
                sawPositional = true
                emit(number, replacing: k)
            case UInt8(ascii: "["), UInt8(ascii: "]"):
                brackets += c == UInt8(ascii: "[") ? 1 : (brackets > 0 ? -1 : 0)
                out.append(c)
                i += 1
            // `:name`, except inside brackets (an array slice: `a[lo:hi]`, `a[:hi]`).
            case UInt8(ascii: ":") where brackets == 0 && i + 1 < bytes.count && isIdent(bytes[i + 1]) && !(bytes[i + 1] >= 0x30 && bytes[i + 1] <= 0x39)
                && (i == 0 || bytes[i - 1] != UInt8(ascii: ":")):
                var k = i + 1
                while k < bytes.count && isIdent(bytes[k]) { k += 1 }
                let name = String(decoding: bytes[(i + 1)..<k], as: UTF8.self)
                let index = names.firstIndex(of: name) ?? { names.append(name); return names.count - 1 }()
                sawNamed = true
                emit(index + 1, replacing: k)
            case UInt8(ascii: ":") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: ":"):
                out.append(contentsOf: [c, c])   // a cast
                i += 2
            default:
                out.append(c)
                i += 1
            }
        }
        if sawNamed && sawPositional {
            throw DicRecordError(.invalidArgument, "the SQL mixes :name and ? (or $n) placeholders; PostgreSQL numbers them all: use one kind",
                                 sql: sql, configName: configName)
        }
        text = String(decoding: out, as: UTF8.self)
        count = sawNamed ? names.count : highest
        self.names = sawNamed ? names : nil
        self.shifts = shifts
    }
}
