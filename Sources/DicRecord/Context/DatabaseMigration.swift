// Context: the database's own migrations (patchwork's), which a context runs at start before
// any declaration's upkeep; and the schema transaction both use.
import Foundation

/// One step of a database's own migrations: `context.migration(version: 2) { db in … }`.
struct DatabaseMigration: Sendable {
    let version: Int
    let body: @Sendable (Db) throws -> Void

    /// Runs the steps above the file's `PRAGMA user_version` in order, each in its own
    /// transaction that stamps its version; refuses a database newer than the last step.
    static func run(_ migrations: [DatabaseMigration], on connection: Connection, db: Db, configName: String) throws {
        guard !migrations.isEmpty else { return }
        let steps = migrations.sorted { $0.version < $1.version }
        for (a, b) in zip(steps, steps.dropFirst()) where a.version == b.version {
            throw DicRecordError(.invalidArgument, "two migrations declare version \(a.version)", configName: configName)
        }
        if let bad = steps.first(where: { $0.version < 1 }) {
            throw DicRecordError(.invalidArgument, "migration versions start at 1 (got \(bad.version))", configName: configName)
        }
        var current = 0
        if case .integer(let v) = try connection.rows("PRAGMA user_version").first?.first { current = Int(v) }
        let latest = steps[steps.count - 1].version
        if current > latest {
            throw DicRecordError(.schemaVersion,
                "the database is at user_version \(current), newer than this code's last migration (\(latest)); refusing to open it with older code",
                configName: configName)
        }
        for step in steps where step.version > current {
            do {
                try connection.inSchemaTransaction {
                    try step.body(db)
                    _ = try connection.run("PRAGMA user_version = \(step.version)", .none)
                }
            } catch let error as DatabaseError {
                throw DatabaseError(resultCode: error.resultCode, extendedResultCode: error.extendedResultCode,
                                    message: "migration \(step.version) failed: \(error.message)", sql: error.sql,
                                    arguments: error.arguments, configName: configName, sqlState: error.sqlState)
            }
        }
    }
}

extension Connection {
    /// BEGIN IMMEDIATE … COMMIT, or a savepoint inside a transaction the caller holds (a model
    /// registered from inside `tx`); rolled back whole if `body` throws.
    func inSchemaTransaction(_ body: () throws -> Void) throws {
        let nested = isInTransaction
        _ = try run(nested ? "SAVEPOINT dicrecord_schema" : "BEGIN IMMEDIATE", .none)
        do {
            try body()
            _ = try run(nested ? "RELEASE dicrecord_schema" : "COMMIT", .none)
        } catch {
            if isInTransaction {
                if nested {
                    try? runRollback("ROLLBACK TO dicrecord_schema")
                    try? runRollback("RELEASE dicrecord_schema")
                } else {
                    try? runRollback("ROLLBACK")
                }
            }
            throw error
        }
    }
}
