import Foundation

/// String as TEXT. INTEGER and REAL decode to their decimal text, a BLOB holding UTF-8 decodes,
/// and text with embedded NUL characters round-trips.
public struct StringConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .text }

    public func encode(_ value: String) throws -> DatabaseValue { .text(value) }

    public func decode(_ value: DatabaseValue) throws -> String {
        switch value {
        case .text(let s): return s
        case .integer(let v): return String(v)
        case .real(let d): return String(d)
        case .blob(let data):
            if let s = String(validating: data, as: UTF8.self) { return s }
            throw ConversionError.cannotDecode(value, to: String.self, "the BLOB is not UTF-8")
        case .null:
            throw ConversionError.cannotDecode(value, to: String.self, "expected TEXT")
        }
    }
}

/// Data as BLOB; an empty Data stays an empty BLOB, never NULL. TEXT decodes to its UTF-8 bytes.
public struct DataConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .blob }

    public func encode(_ value: Data) throws -> DatabaseValue { .blob(value) }

    public func decode(_ value: DatabaseValue) throws -> Data {
        switch value {
        case .blob(let d): return d
        case .text(let s): return Data(s.utf8)
        case .null, .integer, .real:
            throw ConversionError.cannotDecode(value, to: Data.self, "expected BLOB")
        }
    }
}

/// `[UInt8]` as BLOB, like ``DataConverter``.
public struct BytesConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .blob }

    public func encode(_ value: [UInt8]) throws -> DatabaseValue { .blob(Data(value)) }

    public func decode(_ value: DatabaseValue) throws -> [UInt8] {
        do {
            return [UInt8](try DataConverter().decode(value))
        } catch let error as ConversionError {
            throw error.retargeted(to: [UInt8].self)
        }
    }
}

/// URL as TEXT (`absoluteString`). Text that is not a URL throws.
public struct URLConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .text }

    public func encode(_ value: URL) throws -> DatabaseValue { .text(value.absoluteString) }

    public func decode(_ value: DatabaseValue) throws -> URL {
        guard case .text(let s) = value else {
            throw ConversionError.cannotDecode(value, to: URL.self, "expected TEXT")
        }
        guard !s.isEmpty, let url = URL(string: s) else {
            throw ConversionError.cannotDecode(value, to: URL.self, "not a valid URL")
        }
        return url
    }
}

/// UUID as TEXT (`uuidString`). Decodes either case and a 16-byte BLOB.
public struct UUIDConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .text }

    public func encode(_ value: UUID) throws -> DatabaseValue { .text(value.uuidString) }

    public func decode(_ value: DatabaseValue) throws -> UUID {
        switch value {
        case .text(let s):
            if let uuid = UUID(uuidString: s.uppercased()) { return uuid }
            throw ConversionError.cannotDecode(value, to: UUID.self, "not a UUID")
        case .blob(let d) where d.count == 16:
            let b = [UInt8](d)
            return UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
                               b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        default:
            throw ConversionError.cannotDecode(value, to: UUID.self, "expected TEXT or a 16-byte BLOB")
        }
    }
}

/// Any Codable type as JSON TEXT, opted in per type: `Converters.register(CodableConverter<[String]>())`.
/// Stored with sorted keys so that equal values store equal text and `json_extract` can query it.
public struct CodableConverter<T: Codable>: TypeConverter {
    public init() {}
    public var storageType: StorageType { .text }

    public func encode(_ value: T) throws -> DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            throw ConversionError.cannotEncode(value, "not encodable as JSON: \(error)")
        }
    }

    public func decode(_ value: DatabaseValue) throws -> T {
        let data: Data
        switch value {
        case .text(let s): data = Data(s.utf8)
        case .blob(let d): data = d
        default: throw ConversionError.cannotDecode(value, to: T.self, "expected JSON TEXT")
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw ConversionError.cannotDecode(value, to: T.self, "invalid JSON for this type: \(error)")
        }
    }
}

/// A RawRepresentable type (an enum) stored as its raw value, opted in per type:
/// `Converters.register(RawValueConverter<Level>())`. The raw value goes through the global registry.
public struct RawValueConverter<T: RawRepresentable>: TypeConverter {
    public init() {}
    public var storageType: StorageType { Converters.shared.storageType(for: T.RawValue.self) ?? .text }

    public func encode(_ value: T) throws -> DatabaseValue {
        try Converters.shared.encode(value.rawValue)
    }

    public func decode(_ value: DatabaseValue) throws -> T {
        let raw: T.RawValue
        do {
            raw = try Converters.shared.decode(value)
        } catch let error as ConversionError {
            throw error.retargeted(to: T.self)
        }
        guard let result = T(rawValue: raw) else {
            throw ConversionError.cannotDecode(value, to: T.self, "no case has this raw value")
        }
        return result
    }
}
