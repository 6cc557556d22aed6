import BenchHarness
import Dispatch
import Foundation
import Synchronization

/// Sizes of the PostgreSQL workloads (`--quick` makes them small: CI checks the checksums, not the times).
struct PgConfig {
    let quick: Bool
    /// Rows of `bench_items` (fetch, lookups) and rows inserted.
    var rows: Int { quick ? 2_000 : 100_000 }
    /// Lookups by primary key.
    var lookups: Int { quick ? 500 : 10_000 }
    /// Rows of `bench_pages` (paginate).
    var pageRows: Int { quick ? 50_000 : 1_000_000 }
    let pageSize = 20
    /// The deep page: the last but one.
    var deepPage: Int { pageRows / pageSize - 1 }
    /// Keyset pages read one after the other (each after the last key of the one before), as a
    /// user scrolls: one page alone takes a fraction of a millisecond, too little to time.
    var keysetPages: Int { quick ? 10 : 100 }
    /// The key after which the first keyset page starts: the walk ends at the deep page.
    var keysetAfter: Int { (deepPage - keysetPages) * pageSize }
    /// The keys looked up, spread over the table.
    var lookupIds: [Int] { (0..<lookups).map { ($0 &* 7_919) % rows + 1 } }
}

/// The SQL every implementation runs (raw libpq and PostgresNIO write `$1` for `?`).
enum Sql {
    static let fetch = "SELECT id, i, r, t FROM bench_items"
    static let lookup = "SELECT id, i, r, t FROM bench_items WHERE id = ?"
    static let count = "SELECT count(*) FROM bench_pages"
    static let page = "SELECT id, i, r, t FROM bench_pages ORDER BY id LIMIT ? OFFSET ?"
    static let keyset = "SELECT id, i, r, t FROM bench_pages WHERE id > ? ORDER BY id LIMIT ?"
    static let insert = "INSERT INTO bench_items (id, i, r, t) VALUES (?, ?, ?, ?)"

    static func dollar(_ sql: String) -> String {
        var n = 0
        return sql.split(separator: "?", omittingEmptySubsequences: false).reduce(into: "") { out, part in
            if n > 0 { out += "$\(n)" }
            out += part
            n += 1
        }
    }
}

/// The checksum of one row (id, i, r, t), the same for every implementation.
func rowChecksum(id: Int, i: Int, r: Double, t: String) -> Int {
    id &+ i &+ Int(r) &+ t.utf8.count
}

/// Row n of both tables (what the fixtures' generate_series writes, and what inserts write).
func fixtureRow(_ n: Int) -> (id: Int, i: Int, r: Double, t: String) {
    (n, n * 7, Double(n) / 3, "item \(n)")
}

/// Runs async work from the synchronous harness and waits for it: one hop per timed run, not per
/// call, so it does not weigh on the async libraries' figures.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let outcome: Result<T, any Error>
        do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// The parts of a postgresql:// URL the NIO clients take.
struct ServerAddress {
    let host: String
    let port: Int
    let user: String
    let password: String?
    let database: String

    init(url: String) throws {
        guard let parts = URLComponents(string: url), let host = parts.host else { throw BenchError("not a postgresql:// URL: \(url)") }
        self.host = host
        port = parts.port ?? 5432
        user = parts.user ?? "postgres"
        password = parts.password
        database = String(parts.path.dropFirst()).isEmpty ? user : String(parts.path.dropFirst())
    }
}

/// `url` naming another database on the same server.
func url(_ url: String, database: String) throws -> String {
    guard var parts = URLComponents(string: url) else { throw BenchError("not a postgresql:// URL: \(url)") }
    parts.path = "/" + database
    return parts.string ?? url
}
