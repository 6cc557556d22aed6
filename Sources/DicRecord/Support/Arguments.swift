// Support: the arguments of one statement as Db receives them, before an engine binds them.
import Foundation

/// The arguments of one statement: positional (`?`, `?NNN`) or named (`:name`, `@name`, `$name`).
enum Arguments: Sendable {
    case positional([DatabaseArgument])
    case named([String: DatabaseArgument])
    /// Values already encoded (the library's own INSERT/UPDATE): bound as they are.
    case values([DatabaseValue])
    /// A record's stored values, with the bytes of TEXT that is not UTF-8 (its key in an UPDATE,
    /// DELETE or upsert, a key looked up): bound as they were read.
    case stored(StoredValues)

    static let none = Arguments.positional([])

    var isEmpty: Bool {
        switch self {
        case .positional(let values): values.isEmpty
        case .named(let values): values.isEmpty
        case .values(let values): values.isEmpty
        case .stored(let stored): stored.values.isEmpty
        }
    }
}

extension Arguments {
    /// Every argument encoded through `registry` (for engines that take values, not Swift objects);
    /// a value without a converter throws, naming the argument.
    package func encoded(_ registry: Converters, sql: String, configName: String?) throws -> EncodedArguments {
        func encode(_ argument: DatabaseArgument, _ name: String) throws -> DatabaseValue {
            do {
                return try registry.encode(argument: argument)
            } catch let error as ConversionError {
                throw DicRecordError(.unsupportedArgument, "argument \(name): \(error)", sql: sql, configName: configName)
            }
        }
        switch self {
        case .positional(let values):
            return .positional(try values.enumerated().map { try encode($0.element, String($0.offset + 1)) })
        case .named(let values):
            var encoded: [String: DatabaseValue] = [:]
            for (key, value) in values { encoded[key] = try encode(value, key) }
            return .named(encoded)
        case .values(let values):
            return .positional(values)
        case .stored(let stored):
            return stored.encoded
        }
    }
}

/// Arguments encoded as values: what an engine other than SQLite binds.
package enum EncodedArguments: Sendable {
    case positional([DatabaseValue])
    /// By name, as given (`name` or `:name`).
    case named([String: DatabaseValue])
    /// Positional values read from SQLite, some of them TEXT that is not UTF-8: bound by their
    /// bytes (SQLite), or refused with `StoredValues.utf8Values` (an engine whose text is UTF-8 only).
    case stored(StoredValues)
}

/// One stored value as it was read: TEXT that is not UTF-8 holds U+FFFD replacements, its bytes
/// kept beside it. A key (to look a row up, or to tell whether a key changed) compares by those
/// bytes, TEXT by its UTF-8 bytes, so "é" and "e" + U+0301, one for Swift's `==`, are two keys
/// as they are two rows; numbers compare by Swift's `==` (1 and 1.0 are two keys, which only
/// costs a lookup more).
struct StoredValue: Hashable, Sendable {
    let value: DatabaseValue
    /// The bytes when the value is TEXT that is not UTF-8; nil for every other value.
    let bytes: Data?

    init(_ value: DatabaseValue, bytes: Data? = nil) {
        self.value = value
        self.bytes = bytes
    }

    static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        guard lhs.bytes == rhs.bytes else { return false }
        if case .text(let left) = lhs.value, case .text(let right) = rhs.value { return left.hasSameBytes(as: right) }
        return lhs.value == rhs.value
    }

    func hash(into hasher: inout Hasher) {
        if case .text(let text) = value { hasher.combine(ExactText(text)) } else { hasher.combine(value) }
        hasher.combine(bytes)
    }
}

/// Stored values of named columns, bound as they were read. A TEXT value that is not UTF-8 is
/// held with U+FFFD replacements, its bytes kept beside it (`rawTexts`): binding the value would
/// write (or match) other text than the row holds.
package struct StoredValues: Sendable {
    package private(set) var values: [DatabaseValue] = []
    /// Each value's column, for an error.
    package private(set) var columns: [String] = []
    /// The bytes of the values that are TEXT but not UTF-8, by position (0-based).
    package private(set) var rawTexts: [Int: Data] = [:]

    init() {}

    init(values: [DatabaseValue], columns: [String], rawTexts: [Int: Data]?) {
        self.values = values
        self.columns = columns
        self.rawTexts = rawTexts ?? [:]
    }

    mutating func append(_ column: String, _ value: DatabaseValue, bytes: Data?) {
        if let bytes { rawTexts[values.count] = bytes }
        values.append(value)
        columns.append(column)
    }

    mutating func append(_ column: String, _ stored: StoredValue) {
        append(column, stored.value, bytes: stored.bytes)
    }

    mutating func append(contentsOf other: StoredValues) {
        for (position, bytes) in other.rawTexts { rawTexts[values.count + position] = bytes }
        values += other.values
        columns += other.columns
    }

    /// As an engine takes them: positional when every TEXT is UTF-8 (as almost always).
    var encoded: EncodedArguments { rawTexts.isEmpty ? .positional(values) : .stored(self) }

    /// The values, for an engine whose TEXT is UTF-8 only: a value read from TEXT that is not
    /// UTF-8 throws, naming its column (its replacement characters would be written, or looked
    /// up, instead of it), and nothing is run.
    package func utf8Values(sql: String? = nil, configName: String?) throws -> [DatabaseValue] {
        if let position = rawTexts.keys.min() {
            let name = columns.indices.contains(position) ? columns[position] : "#\(position + 1)"
            throw DicRecordError(.unsupportedArgument,
                "column \"\(name)\" holds TEXT that is not UTF-8 (read from SQLite); this engine's text is UTF-8 only, so it would write or match other text in its place: nothing was run (write it as Data, or fix the text)",
                sql: sql, configName: configName)
        }
        return values
    }
}
