import DicRecord
@testable import DicRecordPostgres
import Foundation
import Testing

/// The server the PostgreSQL suites run against: `DICRECORD_POSTGRES_URL` (`.ci/run` starts one).
/// Without it the suites are skipped, with one line saying so; under `CI=true` they run and fail.
enum PostgresServer {
    static let url = ProcessInfo.processInfo.environment["DICRECORD_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Whether the suites run: a server is named, or CI requires them.
    static let enabled = url != nil || isCI

    static var target: PostgresTarget { PostgresTarget(url: url ?? "postgresql://127.0.0.1:1/missing") }

    /// A connection whose `search_path` is a fresh schema of its own, dropped by `finish`.
    static func scratch(_ configName: String = "pg") throws -> Scratch {
        let connection = try PostgresConnection(target, configName: configName, connectTimeout: 5)
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try connection.execute(script: "CREATE SCHEMA \(schema); SET search_path TO \(schema)")
        return Scratch(connection: connection, schema: schema)
    }

    struct Scratch {
        let connection: PostgresConnection
        let schema: String

        func finish() {
            try? connection.execute(script: "DROP SCHEMA \(schema) CASCADE")
            connection.close()
        }
    }
}

@Suite struct PostgresServerTests {
    @Test func theSuitesRunOrSayHowToRunThem() throws {
        if PostgresServer.url == nil {
            if PostgresServer.isCI {
                Issue.record("CI=true but DICRECORD_POSTGRES_URL is not set: the PostgreSQL suites cannot run (.ci/run starts a server)")
            } else {
                print("DicRecord: PostgreSQL suites skipped — set DICRECORD_POSTGRES_URL=postgresql://user@host:port/db (see README, \"PostgreSQL\") to run them")
            }
            return
        }
        let scratch = try PostgresServer.scratch()
        defer { scratch.finish() }
        #expect(scratch.connection.serverVersion >= 140000)
    }
}
