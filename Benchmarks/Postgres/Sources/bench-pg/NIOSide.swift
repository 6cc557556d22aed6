import BenchHarness
import Foundation
import Logging
import PostgresNIO

/// PostgresNIO's implementations of the workloads, through its `PostgresClient` (a pool, run in a
/// task of its own), the library's idiomatic API: `query` with interpolated binds (each one sent as
/// an unnamed statement), and for lookups also a `PostgresPreparedStatement`.
final class NIOSide: Sendable {
    let client: PostgresClient
    private let running: Task<Void, Never>
    private static let logger = Logger(label: "bench-pg.nio")

    init(url: String) throws {
        let address = try ServerAddress(url: url)
        client = PostgresClient(
            configuration: .init(host: address.host, port: address.port, username: address.user,
                                 password: address.password, database: address.database, tls: .disable),
            backgroundLogger: Self.logger)
        let client = client
        running = Task { await client.run() }
    }

    func close() { running.cancel() }

    /// The lookup as a prepared statement: parsed once per connection, then bound and executed.
    struct Lookup: PostgresPreparedStatement {
        static let sql = Sql.dollar(Sql.lookup)
        typealias Row = (Int, Int, Double, String)
        let id: Int

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings()
            bindings.append(id)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    func fetch(_ w: Workload) {
        let client = client
        w.measure("postgres-nio query, decode (Int, Int, Double, String)") {
            try blocking {
                var sum = 0
                for try await (id, i, r, t) in try await client.query("SELECT id, i, r, t FROM bench_items").decode((Int, Int, Double, String).self) {
                    sum &+= rowChecksum(id: id, i: i, r: r, t: t)
                }
                return sum
            }
        }
    }

    func lookup(_ w: Workload, ids: [Int]) {
        let client = client
        w.measure("postgres-nio query") {
            try blocking {
                var sum = 0
                for id in ids {
                    for try await (id, i, r, t) in try await client.query("SELECT id, i, r, t FROM bench_items WHERE id = \(id)").decode((Int, Int, Double, String).self) {
                        sum &+= rowChecksum(id: id, i: i, r: r, t: t)
                    }
                }
                return sum
            }
        }
        w.measure("postgres-nio prepared statement") {
            try blocking {
                var sum = 0
                for id in ids {
                    for try await (id, i, r, t) in try await client.execute(Lookup(id: id)) {
                        sum &+= rowChecksum(id: id, i: i, r: r, t: t)
                    }
                }
                return sum
            }
        }
    }

    /// PostgresNIO has no batch API: its bulk insert is one statement over arrays (unnest).
    func insert(_ w: Workload, rows: Int, clear: @escaping () -> Void) {
        let client = client
        w.measure("postgres-nio one INSERT … SELECT FROM unnest(arrays)", setUp: clear) {
            try blocking {
                let values = (1...rows).map(fixtureRow)
                let ids = values.map(\.id), i = values.map(\.i), r = values.map(\.r), t = values.map(\.t)
                try await client.query("INSERT INTO bench_items (id, i, r, t) SELECT * FROM unnest(\(ids)::bigint[], \(i)::bigint[], \(r)::float8[], \(t)::text[])")
                return rows
            }
        }
    }

    func paginate(_ w: Workload, config: PgConfig) {
        let client = client
        w.measure("postgres-nio count, then LIMIT/OFFSET") {
            try blocking {
                var sum = 0
                for try await count in try await client.query("SELECT count(*) FROM bench_pages").decode(Int.self) { sum &+= count }
                let offset = (config.deepPage - 1) * config.pageSize
                for try await (id, i, r, t) in try await client.query("SELECT id, i, r, t FROM bench_pages ORDER BY id LIMIT \(config.pageSize) OFFSET \(offset)").decode((Int, Int, Double, String).self) {
                    sum &+= rowChecksum(id: id, i: i, r: r, t: t)
                }
                return sum
            }
        }
    }

    func keyset(_ w: Workload, config: PgConfig) {
        let client = client
        w.measure("postgres-nio WHERE id > ?") {
            try blocking {
                var sum = 0, key = config.keysetAfter
                for _ in 0..<config.keysetPages {
                    for try await (id, i, r, t) in try await client.query("SELECT id, i, r, t FROM bench_pages WHERE id > \(key) ORDER BY id LIMIT \(config.pageSize)").decode((Int, Int, Double, String).self) {
                        sum &+= rowChecksum(id: id, i: i, r: r, t: t)
                        key = id
                    }
                }
                return sum
            }
        }
    }
}
