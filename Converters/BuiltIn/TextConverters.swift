import Foundation

/// String as TEXT. INTEGER and REAL decode to their decimal text, a BLOB holding UTF-8 decodes,
/// and text with embedded NUL characters round-trips.
/// ```swift
/// try Db.update("insert into person (name) values (?)", "Ada")   // stored as TEXT 'Ada'
/// ```
public struct StringConverter: TypeConverter {
    /// Creates the converter; it is registered for `String` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(StringConverter())   // puts the built-in back after another String converter
    /// ```
    public init() {}
    /// TEXT, the column type for `String` properties.
    /// ```swift
    /// StringConverter().storageType   // .text
    /// ```
    public var storageType: StorageType { .text }

    /// Stores the string as TEXT, unchanged.
    /// ```swift
    /// try StringConverter().encode("Ada")   // .text("Ada")
    /// ```
    public func encode(_ value: String) throws -> DatabaseValue { BuiltInRules.stored(value) }

    /// Reads TEXT, INTEGER and REAL as their decimal text, and a BLOB holding valid UTF-8; NULL and other BLOBs throw ``ConversionError``.
    /// ```swift
    /// try StringConverter().decode(.integer(42))   // "42"
    /// ```
    public func decode(_ value: DatabaseValue) throws -> String {
        if let s = BuiltInRules.string(value) { return s }
        switch value {
        case .integer(let v): return String(v)
        case .real(let d): return String(d)
        case .blob(let data):
            if let s = String(validating: data, as: UTF8.self) { return s }
            throw ConversionError.cannotDecode(value, to: String.self, "the BLOB is not UTF-8")
        default:   // NULL (TEXT is read above)
            throw ConversionError.cannotDecode(value, to: String.self, "expected TEXT")
        }
    }
}

/// Data as BLOB; an empty Data stays an empty BLOB, never NULL. TEXT decodes to its UTF-8 bytes.
/// ```swift
/// try Db.update("insert into file (bytes) values (?)", Data([1, 2, 3]))   // stored as a 3-byte BLOB
/// ```
public struct DataConverter: TypeConverter {
    /// Creates the converter; it is registered for `Data` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(DataConverter())   // puts the built-in back after another Data converter
    /// ```
    public init() {}
    /// BLOB, the column type for `Data` properties.
    /// ```swift
    /// DataConverter().storageType   // .blob
    /// ```
    public var storageType: StorageType { .blob }

    /// Stores the bytes as a BLOB; an empty `Data` as an empty BLOB, not NULL.
    /// ```swift
    /// try DataConverter().encode(Data())   // .blob of 0 bytes
    /// ```
    public func encode(_ value: Data) throws -> DatabaseValue { BuiltInRules.stored(value) }

    /// Reads a BLOB, or TEXT as its UTF-8 bytes; INTEGER, REAL and NULL throw ``ConversionError``.
    /// ```swift
    /// try DataConverter().decode(.text("hi"))   // Data([0x68, 0x69])
    /// ```
    public func decode(_ value: DatabaseValue) throws -> Data {
        if let d = BuiltInRules.data(value) { return d }
        switch value {
        case .text(let s): return Data(s.utf8)
        default:   // NULL, INTEGER, REAL (BLOB is read above)
            throw ConversionError.cannotDecode(value, to: Data.self, "expected BLOB")
        }
    }
}

/// `[UInt8]` as BLOB, like ``DataConverter``.
/// ```swift
/// try Db.update("insert into file (bytes) values (?)", [UInt8]([1, 2, 3]))   // stored as a 3-byte BLOB
/// ```
public struct BytesConverter: TypeConverter {
    /// Creates the converter; it is registered for `[UInt8]` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(BytesConverter())   // puts the built-in back after another [UInt8] converter
    /// ```
    public init() {}
    /// BLOB, the column type for `[UInt8]` properties.
    /// ```swift
    /// BytesConverter().storageType   // .blob
    /// ```
    public var storageType: StorageType { .blob }

    /// Stores the bytes as a BLOB; an empty array as an empty BLOB, not NULL.
    /// ```swift
    /// try BytesConverter().encode([1, 2, 3])   // .blob of 3 bytes
    /// ```
    public func encode(_ value: [UInt8]) throws -> DatabaseValue { .blob(Data(value)) }

    /// Reads what ``DataConverter`` reads (a BLOB, or TEXT as its UTF-8 bytes), as an array.
    /// ```swift
    /// try BytesConverter().decode(.text("hi"))   // [0x68, 0x69]
    /// ```
    public func decode(_ value: DatabaseValue) throws -> [UInt8] {
        do {
            return [UInt8](try DataConverter().decode(value))
        } catch let error as ConversionError {
            throw error.retargeted(to: [UInt8].self)
        }
    }
}

/// URL as TEXT (`absoluteString`). Text that is not a URL throws.
/// ```swift
/// try Db.update("insert into link (url) values (?)", URL(string: "https://swift.org")!)   // stored as TEXT 'https://swift.org'
/// ```
public struct URLConverter: TypeConverter {
    /// Creates the converter; it is registered for `URL` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(URLConverter())   // puts the built-in back after another URL converter
    /// ```
    public init() {}
    /// TEXT, the column type for `URL` properties.
    /// ```swift
    /// URLConverter().storageType   // .text
    /// ```
    public var storageType: StorageType { .text }

    /// Stores the URL's `absoluteString` as TEXT.
    /// ```swift
    /// try URLConverter().encode(URL(fileURLWithPath: "/tmp/a.txt"))   // .text("file:///tmp/a.txt")
    /// ```
    public func encode(_ value: URL) throws -> DatabaseValue { .text(value.absoluteString) }

    /// Reads non-empty TEXT that `URL(string:)` accepts; empty or invalid text and any other storage throw ``ConversionError``.
    /// ```swift
    /// try URLConverter().decode(.text(""))   // throws: not a valid URL
    /// ```
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
/// ```swift
/// try Db.update("insert into device (id) values (?)", UUID())   // stored as TEXT like 'E621E1F8-C36C-495A-93FC-0C247A3E6E5F'
/// ```
public struct UUIDConverter: TypeConverter {
    /// Creates the converter; it is registered for `UUID` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(UUIDConverter())   // puts the built-in back after another UUID converter
    /// ```
    public init() {}
    /// TEXT, the column type for `UUID` properties.
    /// ```swift
    /// UUIDConverter().storageType   // .text
    /// ```
    public var storageType: StorageType { .text }

    /// Stores the UUID's `uuidString`: 36 uppercase characters with hyphens.
    /// ```swift
    /// try UUIDConverter().encode(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)   // .text("E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
    /// ```
    public func encode(_ value: UUID) throws -> DatabaseValue { .text(value.uuidString) }

    /// Reads TEXT holding a UUID in either case, or a BLOB of its 16 raw bytes; anything else throws ``ConversionError``.
    /// ```swift
    /// try UUIDConverter().decode(.text("e621e1f8-c36c-495a-93fc-0c247a3e6e5f"))   // E621E1F8-C36C-495A-93FC-0C247A3E6E5F
    /// ```
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
/// ```swift
/// Converters.register(CodableConverter<[String]>())
/// try Db.update("update post set tags = ? where id = ?", ["swift", "sqlite"], 1)   // stored as TEXT '["swift","sqlite"]'
/// ```
public struct CodableConverter<T: Codable>: TypeConverter {
    /// Creates the converter for `T`; register it to store `T` as JSON.
    /// ```swift
    /// Converters.register(CodableConverter<Address>())
    /// ```
    public init() {}
    /// TEXT, the column type for JSON.
    /// ```swift
    /// CodableConverter<[String]>().storageType   // .text
    /// ```
    public var storageType: StorageType { .text }

    /// Stores the value as JSON TEXT with sorted keys and unescaped slashes; a value `JSONEncoder` rejects throws ``ConversionError``.
    /// ```swift
    /// try CodableConverter<[String: Int]>().encode(["b": 2, "a": 1])   // .text("{\"a\":1,\"b\":2}")
    /// ```
    public func encode(_ value: T) throws -> DatabaseValue {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return .text(String(decoding: try encoder.encode(value), as: UTF8.self))
        } catch {
            throw ConversionError.cannotEncode(value, "not encodable as JSON: \(error)")
        }
    }

    /// Decodes JSON held as TEXT or a BLOB with `JSONDecoder`; invalid JSON, JSON of another shape, INTEGER, REAL and NULL throw ``ConversionError``.
    /// ```swift
    /// try CodableConverter<[String]>().decode(.text("[\"a\",\"b\"]"))   // ["a", "b"]
    /// ```
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
/// ```swift
/// enum Level: String { case low, high }
/// Converters.register(RawValueConverter<Level>())
/// try Db.update("update task set level = ? where id = ?", Level.high, 1)   // stored as TEXT 'high'
/// ```
public struct RawValueConverter<T: RawRepresentable>: TypeConverter {
    /// Creates the converter for `T`; register it to store `T` as its raw value.
    /// ```swift
    /// Converters.register(RawValueConverter<Level>())
    /// ```
    public init() {}
    /// The storage type of the converter `Converters.shared` has for `T.RawValue` (TEXT for `String`, INTEGER for `Int`), or TEXT when there is none.
    /// ```swift
    /// RawValueConverter<Level>().storageType   // .text, for a String raw value
    /// ```
    public var storageType: StorageType { Converters.shared.storageType(for: T.RawValue.self) ?? .text }

    /// Stores the raw value through the converter `Converters.shared` has for `T.RawValue`.
    /// ```swift
    /// try RawValueConverter<Level>().encode(.high)   // .text("high")
    /// ```
    public func encode(_ value: T) throws -> DatabaseValue {
        try Converters.shared.encode(value.rawValue)
    }

    /// Decodes a `T.RawValue` through `Converters.shared`, then the case with that raw value; a value that is no case's raw value throws ``ConversionError``.
    /// ```swift
    /// try RawValueConverter<Level>().decode(.text("medium"))   // throws: no case has this raw value
    /// ```
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
