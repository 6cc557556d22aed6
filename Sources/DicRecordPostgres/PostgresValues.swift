// DicRecordPostgres: values between DicRecord's four storage classes and PostgreSQL's wire forms.
import DicRecord
import Foundation

/// PostgreSQL type OIDs DicRecord reads (pg_type.dat).
enum PostgresType {
    static let bool: UInt32 = 16, bytea: UInt32 = 17, char: UInt32 = 18, name: UInt32 = 19, int8: UInt32 = 20
    static let int2: UInt32 = 21, int4: UInt32 = 23, text: UInt32 = 25, oid: UInt32 = 26, json: UInt32 = 114
    static let float4: UInt32 = 700, float8: UInt32 = 701, unknown: UInt32 = 705, bpchar: UInt32 = 1042
    static let varchar: UInt32 = 1043, date: UInt32 = 1082, timestamp: UInt32 = 1114, timestamptz: UInt32 = 1184
    static let numeric: UInt32 = 1700, uuid: UInt32 = 2950, jsonb: UInt32 = 3802

    /// Array types and their element types.
    static let arrays: [UInt32: UInt32] = [
        1000: bool, 1001: bytea, 1002: char, 1005: int2, 1007: int4, 1009: text, 1014: bpchar, 1015: varchar,
        1016: int8, 1021: float4, 1022: float8, 1028: oid, 1115: timestamp, 1182: date, 1185: timestamptz,
        1231: numeric, 2951: uuid, 199: json, 3807: jsonb,
    ]

    /// Whether a result column of this type is read in binary (every type above is).
    static func readsBinary(_ type: UInt32) -> Bool {
        switch type {
        case bool, bytea, char, name, int8, int2, int4, text, oid, json, float4, float8, unknown, bpchar, varchar,
             date, timestamp, timestamptz, numeric, uuid, jsonb:
            true
        default:
            arrays[type] != nil
        }
    }
}

/// Seconds from 1970 to PostgreSQL's epoch, 2000-01-01.
private let postgresEpoch: Double = 946_684_800

/// Reading PostgreSQL's binary and text result values as `DatabaseValue`s.
enum PostgresValueReader {
    /// A binary value of `type` (`readsBinary(type)` is true), or nil when it is malformed.
    static func binary(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> DatabaseValue? {
        switch type {
        case PostgresType.bool: return bytes.count == 1 ? .integer(bytes[0] == 0 ? 0 : 1) : nil
        case PostgresType.int8: return int(bytes, 8).map { .integer($0) }
        case PostgresType.int4: return int(bytes, 4).map { .integer($0) }
        case PostgresType.int2: return int(bytes, 2).map { .integer($0) }
        case PostgresType.oid: return uint32(bytes).map { .integer(Int64($0)) }
        case PostgresType.float8: return uint64(bytes).map { .real(Double(bitPattern: $0)) }
        case PostgresType.float4: return uint32(bytes).map { .real(Double(Float(bitPattern: $0))) }
        case PostgresType.bytea: return .blob(Data(bytes))
        case PostgresType.jsonb:
            guard bytes.count >= 1, bytes[0] == 1 else { return nil }   // version 1, then the JSON text
            return .text(String(decoding: UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), as: UTF8.self))
        case PostgresType.uuid:
            guard bytes.count == 16 else { return nil }
            let hex = bytes.map { String($0, radix: 16).leftPadded(2) }
            let groups = [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }
            return .text(groups.joined(separator: "-"))
        case PostgresType.timestamp, PostgresType.timestamptz:
            guard let micros = int(bytes, 8) else { return nil }
            if micros == Int64.max { return .real(.infinity) }
            if micros == Int64.min { return .real(-.infinity) }
            return .real(Double(micros) / 1_000_000 + postgresEpoch)
        case PostgresType.date:
            guard let days = int(bytes, 4) else { return nil }
            if days == Int64(Int32.max) { return .real(.infinity) }
            if days == Int64(Int32.min) { return .real(-.infinity) }
            return .real(Double(days) * 86_400 + postgresEpoch)
        case PostgresType.numeric: return numeric(bytes).map { .text($0) }
        default:
            if let element = PostgresType.arrays[type] { return array(bytes, element: element).map { .text($0) } }
            return .text(String(decoding: bytes, as: UTF8.self))   // text, varchar, bpchar, name, json, char, unknown
        }
    }

    /// A text-format value of `type` (statements with a column type DicRecord does not read in binary).
    static func text(_ bytes: UnsafeRawBufferPointer, type: UInt32) -> DatabaseValue {
        let string = String(decoding: bytes, as: UTF8.self)
        switch type {
        case PostgresType.bool: return string == "t" ? .integer(1) : (string == "f" ? .integer(0) : .text(string))
        case PostgresType.int8, PostgresType.int4, PostgresType.int2, PostgresType.oid:
            return Int64(string).map { .integer($0) } ?? .text(string)
        case PostgresType.float8, PostgresType.float4:
            switch string {
            case "Infinity": return .real(.infinity)
            case "-Infinity": return .real(-.infinity)
            default: return Double(string).map { .real($0) } ?? .text(string)
            }
        case PostgresType.bytea:
            return hexBytes(string).map { .blob($0) } ?? .text(string)
        case PostgresType.timestamp, PostgresType.timestamptz, PostgresType.date:
            return timestampText(string).map { .real($0) } ?? .text(string)
        default:
            if let element = PostgresType.arrays[type] { return arrayText(string, element: element).map { .text($0) } ?? .text(string) }
            return .text(string)
        }
    }

    /// Seconds since 1970 of a timestamp or date in PostgreSQL's ISO output (the connection sets
    /// `DateStyle=ISO` and `TimeZone=UTC`): `2000-01-02`, `2000-01-02 03:04:05.678+00`, `…+05:30`.
    static func timestampText(_ text: String) -> Double? {
        switch text {
        case "infinity": return .infinity
        case "-infinity": return -.infinity
        default: break
        }
        let bytes = Array(text.utf8)
        var i = 0
        func number(_ width: Int) -> Int? {
            guard i + width <= bytes.count else { return nil }
            var n = 0
            for b in bytes[i..<(i + width)] { guard b >= 0x30 && b <= 0x39 else { return nil }; n = n * 10 + Int(b - 0x30) }
            i += width
            return n
        }
        func take(_ c: Character) -> Bool {
            guard i < bytes.count, bytes[i] == c.asciiValue! else { return false }
            i += 1
            return true
        }
        guard let year = number(4), take("-"), let month = number(2), take("-"), let day = number(2) else { return nil }
        // Days from 1970-01-01 (civil calendar, proleptic Gregorian).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        var seconds = Double(era * 146_097 + doe - 719_468) * 86_400
        if take(" ") {
            guard let hour = number(2), take(":"), let minute = number(2), take(":"), let second = number(2) else { return nil }
            seconds += Double(hour * 3600 + minute * 60 + second)
            if take(".") {
                var scale = 0.1
                while i < bytes.count, bytes[i] >= 0x30 && bytes[i] <= 0x39 { seconds += Double(bytes[i] - 0x30) * scale; scale /= 10; i += 1 }
            }
            if i < bytes.count {
                let sign: Double = take("+") ? 1 : (take("-") ? -1 : 0)
                guard sign != 0, let hours = number(2) else { return nil }
                var offset = hours * 3600
                if take(":") { guard let minutes = number(2) else { return nil }; offset += minutes * 60 }
                if take(":") { guard let secs = number(2) else { return nil }; offset += secs }
                seconds -= sign * Double(offset)
            }
        }
        return i == bytes.count ? seconds : nil
    }

    /// A one-dimensional (or nested) array in PostgreSQL's text form, `{1,2,NULL}` or
    /// `{"a b","c\"d"}`, as JSON text; nil for forms it does not read (bounds, other delimiters).
    static func arrayText(_ text: String, element: UInt32) -> String? {
        let bytes = Array(text.utf8)
        var i = 0
        func parse() -> String? {
            guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return nil }
            i += 1
            var parts: [String] = []
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return "[]" }
            while i < bytes.count {
                if bytes[i] == UInt8(ascii: "{") {
                    guard let inner = parse() else { return nil }
                    parts.append(inner)
                } else if bytes[i] == UInt8(ascii: "\"") {
                    i += 1
                    var raw: [UInt8] = []
                    while i < bytes.count, bytes[i] != UInt8(ascii: "\"") {
                        if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count { i += 1 }
                        raw.append(bytes[i])
                        i += 1
                    }
                    i += 1
                    guard let json = elementJSON(String(decoding: raw, as: UTF8.self), quoted: true) else { return nil }
                    parts.append(json)
                } else {
                    var j = i
                    while j < bytes.count, bytes[j] != UInt8(ascii: ","), bytes[j] != UInt8(ascii: "}") { j += 1 }
                    let raw = String(decoding: bytes[i..<j], as: UTF8.self)
                    i = j
                    guard let json = raw == "NULL" ? "null" : elementJSON(raw, quoted: false) else { return nil }
                    parts.append(json)
                }
                guard i < bytes.count else { return nil }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return "[" + parts.joined(separator: ",") + "]" }
                return nil
            }
            return nil
        }
        func elementJSON(_ raw: String, quoted: Bool) -> String? {
            Self.elementJSON(textValue(raw, element), element: element)
        }
        let json = parse()
        return i == bytes.count ? json : nil
    }

    private static func textValue(_ raw: String, _ type: UInt32) -> DatabaseValue {
        var raw = raw
        return raw.withUTF8 { text(UnsafeRawBufferPointer($0), type: type) }
    }

    private static func uint64(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count == 8 else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
    private static func uint32(_ bytes: UnsafeRawBufferPointer) -> UInt32? {
        guard bytes.count == 4 else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
    /// A big-endian signed integer of `width` bytes.
    private static func int(_ bytes: UnsafeRawBufferPointer, _ width: Int) -> Int64? {
        guard bytes.count == width else { return nil }
        let unsigned = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let shift = UInt64(64 - 8 * width)
        return Int64(bitPattern: unsigned << shift) >> shift
    }

    private static func hexBytes(_ text: String) -> Data? {
        guard text.hasPrefix("\\x") else { return nil }
        var data = Data(capacity: (text.utf8.count - 2) / 2)
        var high: UInt8?
        for c in text.utf8.dropFirst(2) {
            guard let nibble = c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x61 + 10 : nil
            else { return nil }
            if let h = high { data.append(h << 4 | nibble); high = nil } else { high = nibble }
        }
        return high == nil ? data : nil
    }

    /// PostgreSQL's binary numeric (base-10000 digits) as exact decimal text: "NaN", "Infinity" or digits.
    static func numeric(_ bytes: UnsafeRawBufferPointer) -> String? {
        guard bytes.count >= 8 else { return nil }
        func word(_ i: Int) -> Int { Int(bytes[i]) << 8 | Int(bytes[i + 1]) }
        let count = word(0), weight = Int(Int16(truncatingIfNeeded: word(2))), sign = word(4), scale = word(6)
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        default: break
        }
        guard bytes.count == 8 + 2 * count else { return nil }
        let digits = (0..<count).map { word(8 + 2 * $0) }
        var integer = ""
        if weight >= 0 {
            for i in 0...weight {
                let d = i < digits.count ? digits[i] : 0
                integer += i == 0 ? String(d) : String(d).leftPadded(4)
            }
        } else {
            integer = "0"
        }
        var fraction = ""
        if scale > 0 {
            var i = weight + 1
            while fraction.count < scale {
                let d = i >= 0 && i < digits.count ? digits[i] : 0
                fraction += String(d).leftPadded(4)
                i += 1
            }
            fraction = String(fraction.prefix(scale))
        }
        let body = fraction.isEmpty ? integer : integer + "." + fraction
        return sign == 0x4000 ? "-" + body : body
    }

    /// A binary array as JSON text (`[1,2,null]`, nested for more dimensions), for `[T]` Codable reads.
    static func array(_ bytes: UnsafeRawBufferPointer, element: UInt32) -> String? {
        var offset = 0
        func next32() -> Int32? {
            guard offset + 4 <= bytes.count else { return nil }
            defer { offset += 4 }
            return Int32(bitPattern: bytes[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        }
        guard let dimensions = next32(), next32() != nil, next32() != nil, dimensions >= 0 else { return nil }
        if dimensions == 0 { return "[]" }
        var sizes: [Int] = []
        for _ in 0..<dimensions {
            guard let size = next32(), next32() != nil, size >= 0 else { return nil }
            sizes.append(Int(size))
        }
        func elementJSON() -> String? {
            guard let length = next32() else { return nil }
            if length < 0 { return "null" }
            guard offset + Int(length) <= bytes.count else { return nil }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
            offset += Int(length)
            guard let value = binary(slice, type: element) else { return nil }
            return Self.elementJSON(value, element: element)
        }
        func level(_ d: Int) -> String? {
            var parts: [String] = []
            for _ in 0..<sizes[d] {
                guard let part = d == sizes.count - 1 ? elementJSON() : level(d + 1) else { return nil }
                parts.append(part)
            }
            return "[" + parts.joined(separator: ",") + "]"
        }
        return level(0)
    }

    /// One array element as JSON: numbers and booleans bare, JSON as it is, anything else (text,
    /// numeric NaN, infinities, bytes in base64) as a JSON string, so the array always parses.
    private static func elementJSON(_ value: DatabaseValue, element: UInt32) -> String {
        switch value {
        case .null: return "null"
        case .integer(let v): return element == PostgresType.bool ? (v != 0 ? "true" : "false") : String(v)
        case .real(let d): return d.isFinite ? "\(d)" : jsonString(d > 0 ? "Infinity" : "-Infinity")
        case .text(let s):
            if element == PostgresType.json || element == PostgresType.jsonb { return s }
            if element == PostgresType.numeric, Double(s)?.isFinite == true { return s }
            return jsonString(s)
        case .blob(let data): return jsonString(data.base64EncodedString())
        }
    }

    private static func jsonString(_ s: String) -> String {
        var out = ""
        JSONText.appendString(s, to: &out)
        return out
    }
}

/// One argument as libpq sends it: its bytes (nil: NULL) and whether they are binary.
struct PostgresParameter {
    var bytes: [UInt8]?
    var binary: Bool
    /// The parameter's type, as the server inferred it.
    var type: UInt32

    /// `value` in the form of the type PostgreSQL inferred for the parameter (`type`): an INTEGER
    /// for a `boolean` is true/false, a REAL for a `timestamptz` is seconds since 1970, an INTEGER
    /// for an `integer` is range-checked. A value the type cannot take is a thrown error naming the
    /// argument, never a truncation: a BLOB for anything but `bytea`, NUL in text, NaN, a fraction
    /// for an integer type, a value out of the type's range.
    init(_ value: DatabaseValue, as type: UInt32, index: Int, sql: String, configName: String?) throws {
        self.type = type
        func refuse(_ why: String) -> DicRecordError {
            DicRecordError(.unsupportedArgument, "argument \(index): \(why)", sql: sql, configName: configName)
        }
        func binary<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        func whole<T: FixedWidthInteger>(_ v: Int64, _ target: T.Type, _ name: String) throws -> [UInt8] {
            guard let fitted = T(exactly: v) else { throw refuse("\(v) is out of range for PostgreSQL \(name)") }
            return binary(fitted)
        }
        func micros(_ seconds: Double) throws -> [UInt8] {
            let value = ((seconds - 946_684_800) * 1_000_000).rounded()
            guard let micros = Int64(exactly: value) else { throw refuse("\(seconds) seconds since 1970 is out of range for a PostgreSQL timestamp") }
            return binary(micros)
        }
        func days(_ seconds: Double) throws -> [UInt8] {
            if seconds.isInfinite { return binary(seconds > 0 ? Int32.max : Int32.min) }
            let days = (seconds - 946_684_800) / 86_400
            guard days == days.rounded(), let whole = Int32(exactly: days) else {
                throw refuse("\(seconds) seconds since 1970 is not midnight UTC of a day, for a PostgreSQL date")
            }
            return binary(whole)
        }
        func text(_ string: String) { bytes = Array(string.utf8); self.binary = false }
        bytes = nil
        self.binary = true
        switch value {
        case .null:
            bytes = nil
        case .integer(let v):
            switch type {
            case PostgresType.int8: bytes = binary(v)
            case PostgresType.int4: bytes = try whole(v, Int32.self, "integer")
            case PostgresType.int2: bytes = try whole(v, Int16.self, "smallint")
            case PostgresType.bool: bytes = [v != 0 ? 1 : 0]
            case PostgresType.float8:
                guard let d = Double(exactly: v) else { throw refuse("\(v) has no exact double precision value") }
                bytes = binary(d.bitPattern)
            case PostgresType.timestamp, PostgresType.timestamptz: bytes = try micros(Double(v))
            case PostgresType.date: bytes = try days(Double(v))
            case PostgresType.bytea: throw refuse("an INTEGER for a bytea parameter")
            default: text(String(v))   // numeric, text, oid, … and untyped: the server parses it
            }
        case .real(let d):
            if d.isNaN { throw refuse("NaN is refused (SQLite would store NULL; DicRecord refuses it on every engine)") }
            switch type {
            case PostgresType.float8: bytes = binary(d.bitPattern)
            case PostgresType.timestamp, PostgresType.timestamptz:
                if d.isInfinite { bytes = binary(d > 0 ? Int64.max : Int64.min) } else { bytes = try micros(d) }
            case PostgresType.date: bytes = try days(d)
            case PostgresType.int8, PostgresType.int4, PostgresType.int2:
                guard let v = Int64(exactly: d) else { throw refuse("\(d) is not a whole number, for an integer parameter") }
                switch type {
                case PostgresType.int8: bytes = binary(v)
                case PostgresType.int4: bytes = try whole(v, Int32.self, "integer")
                default: bytes = try whole(v, Int16.self, "smallint")
                }
            case PostgresType.bool: bytes = [d != 0 ? 1 : 0]
            case PostgresType.bytea: throw refuse("a REAL for a bytea parameter")
            default:
                // Shortest text that reads back as the same double; infinities in PostgreSQL's words.
                text(d.isInfinite ? (d > 0 ? "Infinity" : "-Infinity") : "\(d)")
            }
        case .text(let string):
            if let nul = string.utf8.firstIndex(of: 0) {
                throw refuse("PostgreSQL text cannot hold a NUL character (at byte \(string.utf8.distance(from: string.utf8.startIndex, to: nul))); store it as Data (bytea)")
            }
            if type == PostgresType.bytea { bytes = Array(string.utf8) } else { text(string) }
        case .blob(let data):
            guard type == PostgresType.bytea else {
                throw refuse("a BLOB of \(data.count) bytes for a parameter of type OID \(type); PostgreSQL stores bytes in bytea columns")
            }
            bytes = [UInt8](data)
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
