import Foundation

extension Record {
    /// Decodes the record into a `Decodable` type, converting each column through the same
    /// converters as typed reads. A nested Codable property is read from JSON text.
    /// ```swift
    /// struct Student: Decodable { var name: String; var born: Date? }
    /// let s = try record.decode(Student.self)
    /// ```
    public func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try T(from: RecordDecoder(record: self, registry: registry))
    }
}

private struct RecordDecoder: Decoder {
    let record: Record
    let registry: Converters
    var codingPath: [any CodingKey] = []
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(record: record, registry: registry))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "a record decodes as a keyed container"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: codingPath, debugDescription: "a record decodes as a keyed container"))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let record: Record
    let registry: Converters
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { record.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { record.hasColumn(key.stringValue) }

    func decodeNil(forKey key: Key) throws -> Bool {
        (record.storedValue(key.stringValue) ?? .null) == .null
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let stored = record.storedValue(key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [key], debugDescription: "no column \"\(key.stringValue)\""))
        }
        if registry.converter(for: T.self) != nil || T.self == DatabaseValue.self {
            return try record.get(key.stringValue, as: T.self)
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

    func superDecoder() throws -> any Decoder { RecordDecoder(record: record, registry: registry) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RecordDecoder(record: record, registry: registry) }
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
