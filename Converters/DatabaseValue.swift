import Foundation

/// One SQLite value, exactly as SQLite stores it: the five storage classes.
///
/// ```swift
/// let v: DatabaseValue = .text("张三")
/// ```
/// See <https://www.sqlite.org/datatype3.html>.
public enum DatabaseValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)

    /// The storage class's SQL name (`NULL`, `INTEGER`, `REAL`, `TEXT`, `BLOB`), used in error messages.
    public var storageName: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }

    /// True for `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The value as a plain Swift value (`Int64`, `Double`, `String`, `Data`), or nil for NULL.
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
public enum StorageType: String, Sendable {
    case integer = "INTEGER"
    case real = "REAL"
    case text = "TEXT"
    case blob = "BLOB"
}
