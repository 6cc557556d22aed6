// Record: how a record compares, prints and turns into a dictionary or JSON.
import Foundation

extension Record: Equatable, CustomStringConvertible {
    /// Records are equal when they have the same columns (case-insensitive, in any order)
    /// with equal stored values (TEXT that is not UTF-8 compared by its bytes).
    /// ```swift
    /// try Record(["id": 1, "name": "Jack"]) == Record(["ID": 1, "name": "Jack"])   // true
    /// ```
    public static func == (lhs: Record, rhs: Record) -> Bool {
        if lhs === rhs { return true }
        let left = lhs.storedColumnsWithBytes
        guard left.count == rhs.columnCount else { return false }
        let right = rhs.storedValues(of: left.map(\.name))
        for (column, other) in zip(left, right) {
            guard let other, other.value == column.value, other.bytes == column.bytes else { return false }
        }
        return true
    }

    /// `{id: 1, name: '张三', born: 1020873600.0}`, in column order.
    /// ```swift
    /// print(record)   // {id: 1, name: '张三', born: 1020873600.0}
    /// ```
    public var description: String {
        "{" + storedColumns.map { "\($0.name): \($0.value)" }.joined(separator: ", ") + "}"
    }

    /// Column names to current values (the converted or written value, else the stored one; nil for NULL).
    /// Two columns whose names Swift's `String` takes for equal ("é" and "e" + U+0301, which SQLite
    /// keeps apart) are one key: it holds the first, and a warning names both (`columnNames` and
    /// `record[index]` read every column).
    /// ```swift
    /// let values = record.toDictionary()   // ["id": 1, "name": "张三"]
    /// ```
    public func toDictionary() -> [String: Any?] {
        var result: [String: Any?] = [:]
        for column in currentColumns {
            if let first = result.index(forKey: column.name) {
                layoutOrigin.reportMergedKeys(result[first].key, column.name)
                continue
            }
            result[column.name] = .some(column.current)
        }
        return result
    }

    /// A JSON object with the columns in order. Dates are ISO 8601 text, Data and BLOBs base64,
    /// other converted values are written as they are stored. A written value that has no
    /// database form (NaN, a type without a converter) throws its `ConversionError`, as saving would.
    /// ```swift
    /// let json = try record.toJSON()       // {"id":1,"name":"张三","born":"2002-05-08T16:00:00.000Z"}
    /// ```
    public func toJSON() throws -> String {
        // Such a value is held as NULL: written out, it would silently become `null`.
        if let error = firstEncodingError { throw error }
        var out = "{"
        for (i, column) in currentColumns.enumerated() {
            if i > 0 { out += "," }
            JSONText.appendString(column.name, to: &out)
            out += ":"
            try JSONText.appendValue(column.current, stored: column.stored, column: column.name, to: &out)
        }
        return out + "}"
    }

    /// A record from a JSON object, columns in the object's order. Numbers become INTEGER when
    /// whole and in range, REAL otherwise; nested arrays and objects are kept as JSON text.
    /// ```swift
    /// let r = try Record(json: #"{"name": "张三", "age": 14, "born": 1020873600}"#)
    /// ```
    public convenience init(json: String) throws {
        let pairs = try JSONText.parseObject(json)
        self.init(try Self.build(ArrayPairs(pairs: pairs.map { (key: $0.0, value: $0.1 as Any?) }), registry: .shared))
    }
}
