// Record: decoding a record into a Decodable type, by the built-in rules and the registry.
import Foundation
import Synchronization

extension Record {
    /// Decodes the record into a `Decodable` type, converting each column through the same
    /// converters as typed reads. A nested Codable property is read from JSON text.
    /// ```swift
    /// struct Student: Decodable { var name: String; var born: Date? }
    /// let s = try record.decode(Student.self)
    /// ```
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        // One snapshot under the lock; the containers then read without locking.
        try T(from: RecordDecoder(row: snapshot()))
    }

    private func snapshot() -> DecodingRow {
        if !isMutated { return DecodingRow(layout: baseLayout, values: baseValues) }
        return lock.withLock { _ -> DecodingRow in DecodingRow(layout: self.layout, values: self.values) }
    }
}

/// A record's columns and stored values, as `decode` reads them. A class: the containers that
/// Codable copies for every field then hold one reference, not three.
private final class DecodingRow {
    let layout: RowLayout
    let values: RowValues
    var registry: Converters { layout.registry }
    /// Whether the common types decode by `BuiltInRules` (no converter of theirs replaced):
    /// read once per record, not per field.
    let fast: Bool
    /// Whether a name found at the guessed position is the one a search would find (no two
    /// names alike to SQLite).
    private let guessable: Bool

    init(layout: RowLayout, values: RowValues) {
        self.layout = layout
        self.values = values
        fast = !Converters.anyReplacesFastPathType.load(ordering: .relaxed) || layout.registry.fastPathEnabled
        guessable = layout.namesAreDistinct
    }

    /// Where the next column is likely to be: properties are usually declared in column order.
    /// (One decode on one thread uses a row: no dynamic exclusivity checks needed.)
    @exclusivity(unchecked) private var hint = 0

    func value(_ column: String) -> DatabaseValue? {
        layout.position(of: column, hint: &hint).map { values[$0] }
    }

    /// The value stored in `column` when it lies at the guessed position with the very same name
    /// (the same representation: a synthesized `init(from:)` over `SELECT *` of its table, for
    /// names of up to 15 UTF-8 bytes, which a String holds inline); nil otherwise, and the caller
    /// takes the general path (which finds the same column).
    @inline(__always)
    func valueAtHint(_ column: consuming String) -> DatabaseValue? {
        let at = hint
        guard guessable, at < layout.names.count, layout.names[at].hasSameRepresentation(as: column) else { return nil }
        // The name's last use: released before the value is read, which then needs no retain of
        // the storage across the release.
        _ = consume column
        hint = at + 1
        return values[at]
    }

    /// The stored bytes of `column` when it holds TEXT that is not UTF-8 (see `RowValues`).
    func invalidText(_ column: String) -> Data? {
        layout.position(of: column, hint: &hint).flatMap { values.invalidText(at: $0) }
    }
}

private struct RecordDecoder: Decoder {
    let row: DecodingRow
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(row: row))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a record decodes as a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a record decodes as a keyed container"))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: DecodingRow
    var registry: Converters { row.registry }
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { row.layout.names.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { row.layout.position(of: key.stringValue) != nil }

    func decodeNil(forKey key: Key) throws -> Bool {
        (row.value(key.stringValue) ?? .null) == .null
    }

    private func stored(_ key: Key, _ type: Any.Type) throws -> DatabaseValue {
        guard let stored = row.value(key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no column \"\(key.stringValue)\""))
        }
        if case .null = stored {
            throw DecodingError.valueNotFound(type, .init(codingPath: [key], debugDescription: "column \"\(key.stringValue)\" is NULL"))
        }
        return stored
    }

    private func convert<T>(_ stored: DatabaseValue, _ key: Key, as type: T.Type) throws -> T {
        do {
            return try registry.decode(stored, as: T.self)
        } catch let error as ConversionError {
            throw error.inColumn(key.stringValue)
        }
    }

    // The common types: concrete code with no generic metadata to look up per value. Anything
    // but the canonical storage goes through the registry, as a typed read would.
    private var fast: Bool { row.fast }

    /// A common type by `BuiltInRules` (specialized per type: a metatype test, no cast).
    @inline(__always)
    private func decodeCommon<T>(_ type: T.Type, _ key: Key) throws -> T {
        // The column where the last one ended, its value taken as it lies; else looked up.
        if fast, let value = row.valueAtHint(key.stringValue), let decoded = BuiltInRules.decode(value, as: T.self) { return decoded }
        let value = try stored(key, type)
        if fast, let decoded = BuiltInRules.decode(value, as: T.self) { return decoded }
        return try convert(value, key, as: type)
    }

    /// `decodeIfPresent` of a common type (an optional property): what the standard library's
    /// default does (`contains`, then `decodeNil`, then `decode`), with a column found at the
    /// guessed position read once.
    @inline(__always)
    private func decodeCommonIfPresent<T>(_ type: T.Type, _ key: Key) throws -> T? {
        if fast, let value = row.valueAtHint(key.stringValue) {
            if case .null = value { return nil }
            if let decoded = BuiltInRules.decode(value, as: T.self) { return decoded }
        }
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        return try decodeCommon(type, key)
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try decodeCommonIfPresent(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try decodeCommonIfPresent(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try decodeCommonIfPresent(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try decodeCommonIfPresent(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try decodeCommonIfPresent(type, key) }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decodeCommon(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decodeCommon(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decodeCommon(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decodeCommon(type, key) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decodeCommon(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let stored = try stored(key, type)
        // TEXT that is not UTF-8 decoded as bytes: the bytes stored, not the replaced ones.
        if T.self == Data.self, case .text = stored, let bytes = row.invalidText(key.stringValue) as? T { return bytes }
        if fast, case .value(let value?) = Record.fastDecode(stored, as: T.self) { return value }
        if registry.converter(for: T.self) != nil || T.self == DatabaseValue.self {
            return try convert(stored, key, as: T.self)
        }
        // No converter: a nested Codable value stored as JSON, or a single-value type.
        if case .text(let json) = stored, let data = json.data(using: .utf8),
           let nested = try? JSONDecoder().decode(T.self, from: data) {
            return nested
        }
        return try T(from: ValueDecoder(value: stored, registry: registry, codingPath: [key]))
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "nested containers are read from JSON text columns"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "nested containers are read from JSON text columns"))
    }

    func superDecoder() throws -> any Decoder { RecordDecoder(row: row) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RecordDecoder(row: row) }
}

/// Decodes one column's value for types that decode from a single value (wrappers, enums).
private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DatabaseValue
    let registry: Converters
    var codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        throw DecodingError.typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected JSON object text, found \(value.storageName) \(value)"))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "expected JSON array text, found \(value.storageName) \(value)"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value == .null }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if registry.converter(for: T.self) != nil { return try registry.decode(value, as: T.self) }
        return try T(from: self)
    }
}
