// Context: the database's own migrations (patchwork's), which a context runs at start before
// any declaration's upkeep, on any engine (the version lives where the engine keeps it: SQLite's
// `PRAGMA user_version`, a one-row table on PostgreSQL).
import Foundation

/// One step of a database's own migrations: `context.migration(version: 2) { db in … }`.
struct DatabaseMigration: Sendable {
    let version: Int
    let body: @Sendable (Db) throws -> Void

    /// Runs the steps above the database's version (`PRAGMA user_version` on SQLite) in order,
    /// each in its own transaction that stamps its version; refuses a database newer than the last step.
    static func run(_ migrations: [DatabaseMigration], on connection: any EngineConnection, db: Db, configName: String) throws {
        guard !migrations.isEmpty else { return }
        let steps = migrations.sorted { $0.version < $1.version }
        for (a, b) in zip(steps, steps.dropFirst()) where a.version == b.version {
            throw DicRecordError(.invalidArgument, "two migrations declare version \(a.version)", configName: configName)
        }
        if let bad = steps.first(where: { $0.version < 1 }) {
            throw DicRecordError(.invalidArgument, "migration versions start at 1 (got \(bad.version))", configName: configName)
        }
        let current = try connection.databaseVersion()
        let latest = steps[steps.count - 1].version
        if current > latest {
            throw DicRecordError(.schemaVersion,
                "the database is at migration version \(current), newer than this code's last migration (\(latest)); refusing to open it with older code",
                configName: configName)
        }
        for step in steps where step.version > current {
            do {
                try connection.inSchemaTransaction {
                    // Read again under the schema lock: another server starting at the same
                    // time may have run this step since (each step runs once).
                    guard try connection.databaseVersion() < step.version else { return }
                    try step.body(db)
                    try connection.setDatabaseVersion(step.version)
                }
            } catch let error as DatabaseError {
                throw DatabaseError(resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                                    message: "migration \(step.version) failed: \(error.message)", sql: error.sql,
                                    arguments: error.arguments, configName: configName, sqlState: error.sqlState)
            }
        }
    }
}
