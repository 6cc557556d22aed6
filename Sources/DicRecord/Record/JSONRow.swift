import Foundation

/// One object of a JSON array, read by ``JSONRow/rows(json:)``: its members in file order, each as the
/// value SQLite would store, and the line the object starts on (for messages about the row).
/// ```swift
/// let rows = try JSONRow.rows(json: Data(#"[{"id": 1, "score": 1.0}]"#.utf8))
/// rows[0].columns   // ["id", "score"]
/// rows[0].values    // [.integer(1), .real(1.0)]
/// ```
/// See <https://www.sqlite.org/datatype3.html> for the storage classes.
public struct JSONRow: Sendable, Hashable {
    /// The member names, in file order (repeated names are kept: SQLite decides what they mean).
    /// ```swift
    /// let names = rows[0].columns   // ["id", "score"]
    /// ```
    public var columns: [String]
    /// The member values as stored values, one per name.
    /// ```swift
    /// let values = rows[0].values   // [.integer(1), .real(1.0)]
    /// ```
    public var values: [DatabaseValue]
    /// The 1-based line of the file the object starts on.
    /// ```swift
    /// print("row 1 starts on line \(rows[0].line)")
    /// ```
    public var line: Int

    /// The objects of a JSON array as rows of stored values: what `sqlite3 -json` writes (see
    /// <https://www.sqlite.org/cli.html#changing_output_formats>) and the `dicrecord` tool's
    /// `export` writes, read back exactly. An integer literal that fits 64 bits is `.integer`, any
    /// other number `.real` (`1.0` stays REAL, `1e999` is infinity, as sqlite3 writes it); `true`
    /// and `false` are 1 and 0; `{"base64": "…"}` is a `.blob`; any other object or array is
    /// `.text` holding its JSON. A leading byte order mark is skipped. Anything else, or JSON that
    /// is not an array of objects, throws `DicRecordError` `.invalidJSON` naming the byte (and
    /// line) where reading stopped.
    /// ```swift
    /// let text = #"[{"id": 1, "photo": {"base64": "AQI="}}, {"id": 2, "tags": ["a"]}]"#
    /// for row in try JSONRow.rows(json: Data(text.utf8)) {
    ///     print(row.columns, row.values)   // ["id", "photo"] [1, <2 bytes>], then ["id", "tags"] [2, '["a"]']
    /// }
    /// ```
    public static func rows(json: Data) throws -> [JSONRow] {
        try JSONText.parseRows([UInt8](json))
    }
}
