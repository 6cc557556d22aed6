import DicRecord
import Foundation

/// An open database file: the context the tool started on it and its `Db` handle.
struct Database {
    let context: DbContext
    let db: Db

    /// Opens the database file at `path`: readonly unless `writable`. A missing file is an error,
    /// checked before anything is opened, so that no command ever creates a file or folder.
    static func open(_ path: String, writable: Bool = false, latency: Double? = nil) throws -> Database {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw ToolError("no such database file: \(path)")
        }
        guard !isDirectory.boolValue else { throw ToolError("\(path) is a directory, not a database file") }
        var options = DbContext.Options()
        options.readonly = !writable
        // A write keeps the file's journal mode: WAL stays WAL, a rollback journal is not turned into WAL.
        options.journalMode = isWAL(path) ? .wal : .delete
        if let latency { options.externalChangeLatency = latency }
        let context = try DbContext(path: path, configName: "dicrecord", options: options)
        try context.start()
        return Database(context: context, db: Db.use(context.configName))
    }

    func close() { context.stop() }

    /// Opens `path`, runs `body` and closes the database whatever happens.
    static func with<T>(_ path: String, writable: Bool = false, _ body: (Db) throws -> T) throws -> T {
        let database = try open(path, writable: writable)
        defer { database.close() }
        return try body(database.db)
    }

    /// Whether the file's header says WAL (bytes 18 and 19 are 2; see https://www.sqlite.org/fileformat.html).
    private static func isWAL(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 20), header.count == 20 else { return false }
        return header[header.startIndex + 18] == 2 && header[header.startIndex + 19] == 2
    }

    /// `name` as an SQL identifier: always double-quoted, inner quotes doubled.
    static func quote(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A row's values exactly as SQLite returned them, in column order.
    static func values(of record: Record) throws -> [DatabaseValue] {
        try (0..<record.columnCount).map { try record.get($0, as: DatabaseValue.self) }
    }
}

extension Db {
    /// Whether `table` is a table or view of the main schema (SQLite's case-insensitive naming).
    func tableExists(_ table: String, includingViews: Bool = false) throws -> Bool {
        let types = includingViews ? "('table', 'view')" : "('table')"
        return (try queryInt("select count(*) from sqlite_master where type in \(types) and name = ? collate nocase", table) ?? 0) > 0
    }
}
