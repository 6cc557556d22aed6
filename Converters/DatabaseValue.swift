import Foundation

/// One SQLite value, exactly as SQLite stores it: the five storage classes.
///
/// ```swift
/// let v: DatabaseValue = .text("张三")
/// ```
/// See <https://www.sqlite.org/datatype3.html>.
public enum DatabaseValue: Sendable, Hashable {
    /// SQL NULL.
    /// ```swift
    /// let none: DatabaseValue = .null
    /// ```
    case null
    /// A 64-bit signed integer.
    /// ```swift
    /// let age: DatabaseValue = .integer(14)
    /// ```
    case integer(Int64)
    /// A 64-bit IEEE floating point number.
    /// ```swift
    /// let born: DatabaseValue = .real(1020873600)
    /// ```
    case real(Double)
    /// A text value (UTF-8 in the database).
    /// ```swift
    /// let name: DatabaseValue = .text("张三")
    /// ```
    case text(String)
    /// A blob of bytes.
    /// ```swift
    /// let photo: DatabaseValue = .blob(Data([0xFF, 0xD8]))
    /// ```
    case blob(Data)

    /// The storage class's SQL name (`NULL`, `INTEGER`, `REAL`, `TEXT`, `BLOB`), used in error messages.
    /// ```swift
    /// DatabaseValue.integer(14).storageName   // "INTEGER"
    /// ```
    public var storageName: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }

    /// The storage class; nil for NULL.
    @inline(__always)
    package var storageType: StorageType? {
        switch self {
        case .null: nil
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }

    /// True for `.null`.
    /// ```swift
    /// DatabaseValue.null.isNull   // true
    /// ```
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as a plain Swift value (`Int64`, `Double`, `String`, `Data`), or nil for NULL.
    /// ```swift
    /// DatabaseValue.text("Jack").storedValue as? String   // "Jack"
    /// ```
    public var storedValue: (any Sendable)? {
        switch self {
        case .null: nil
        case .integer(let v): v
        case .real(let v): v
        case .text(let v): v
        case .blob(let v): v
        }
    }
}

extension DatabaseValue: CustomStringConvertible {
    /// A short, readable form for logs and error messages: long text and blobs are summarized.
    /// ```swift
    /// print(DatabaseValue.text("it's"))   // 'it''s'
    /// ```
    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let s):
            let quoted = s.count > 64 ? String(s.prefix(61)) + "..." : s
            // Doubled scalar by scalar (a quote followed by a combining mark is still a quote).
            var scalars = String.UnicodeScalarView()
            for scalar in quoted.unicodeScalars {
                scalars.append(scalar)
                if scalar == "'" { scalars.append(scalar) }
            }
            return "'" + String(scalars) + "'"
        case .blob(let d): return "<\(d.count) bytes>"
        }
    }
}

/// The SQLite column type a converter declares in `CREATE TABLE` and `ALTER TABLE`.
/// ```swift
/// var storageType: StorageType { .integer }   // in a TypeConverter
/// ```
public enum StorageType: String, Sendable {
    /// `INTEGER`: whole numbers, Bool, Color and the like.
    /// ```swift
    /// StorageType.integer.rawValue   // "INTEGER"
    /// ```
    case integer = "INTEGER"
    /// `REAL`: floating point numbers and dates.
    /// ```swift
    /// StorageType.real.rawValue      // "REAL"
    /// ```
    case real = "REAL"
    /// `TEXT`: strings, URLs, UUIDs, decimals and JSON.
    /// ```swift
    /// StorageType.text.rawValue      // "TEXT"
    /// ```
    case text = "TEXT"
    /// `BLOB`: bytes and geometry.
    /// ```swift
    /// StorageType.blob.rawValue      // "BLOB"
    /// ```
    case blob = "BLOB"
}
