import Foundation
import Synchronization
import Testing
@testable import DicRecord
@testable import DicRecordPostgres

/// Concurrency on PostgreSQL: the pool, pinned transactions, conflicts and lost connections.
@Suite(.enabled(if: PostgresServer.enabled), .serialized) struct PostgresConcurrencyTests {
    /// Runs `body` with a started PostgreSQL context "main" on a fresh schema.
    private func withPostgres<T>(options: DbContext.Options = DbContext.Options(), _ body: (Db, String) throws -> T) throws -> T {
        let scratch = try PostgresServer.scratch()
        defer { scratch.finish() }
        let url = try #require(PostgresServer.url(searchPath: scratch.schema))
        return try DbContext.withIsolatedRegistry {
            let context = try DbContext(postgres: url, options: options)
            try context.start()
            defer { context.stop() }
            return try body(Db.use(context.configName), scratch.schema)
        }
    }

    private func threads(_ count: Int, _ work: @escaping @Sendable (Int) -> Void) {
        let done = DispatchSemaphore(value: 0)
        for n in 0..<count {
            Thread {
                work(n)
                done.signal()
            }.start()
        }
        for _ in 0..<count { done.wait() }
    }

    @Test func eightThreadsTimesFiveThousandTransfersKeepTheTotal() throws {
        var options = DbContext.Options()
        options.poolSize = 8
        options.busyTimeout = 30
        // Row locks taken in key order, PostgreSQL's READ COMMITTED idiom (the default, serializable,
        // is pinned by the counter test below).
        options.isolation = .readCommitted
        try withPostgres(options: options) { db, _ in
            try db.update("create table account (id bigint primary key, balance bigint not null)")
            try db.batch("insert into account values (?, ?)", (1...10).map { [$0, 1_000] })
            let failures = Mutex<[String]>([])
            threads(8) { n in
                var random = SystemRandomNumberGenerator()
                for i in 0..<5_000 {
                    let from = Int.random(in: 1...10, using: &random), to = (from % 10) + 1
                    do {
                        // Rows locked in key order: two transfers never wait for each other in a cycle.
                        try db.tx(retryOnConflict: 10) { db in
                            try db.update("select id from account where id in (?, ?) order by id for update", from, to)
                            try db.update("update account set balance = balance - 1 where id = ?", from)
                            try db.update("update account set balance = balance + 1 where id = ?", to)
                            return true
                        }
                    } catch {
                        failures.withLock { $0.append("thread \(n), transfer \(i): \(error)") }
                        return
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(try db.queryInt("select sum(balance) from account") == 10_000)
            #expect(try db.queryInt("select count(*) from account") == 10)
        }
    }

    @Test func serializableIncrementsWithRetryOnConflictLoseNothing() throws {
        var options = DbContext.Options()
        options.poolSize = 8
        options.busyTimeout = 30
        try withPostgres(options: options) { db, _ in
            try db.update("create table counter (id bigint primary key, n bigint not null)")
            try db.update("insert into counter values (1, 0)")
            let conflicts = Atomic<Int>(0)
            let failures = Mutex<[String]>([])
            threads(8) { n in
                for i in 0..<100 {
                    do {
                        try db.tx(retryOnConflict: 1_000) { db in
                            let value = try db.queryInt("select n from counter where id = 1") ?? 0
                            do {
                                try db.update("update counter set n = ? where id = 1", value + 1)
                            } catch let error as DicRecordError where error.kind == .conflict {
                                conflicts.add(1, ordering: .relaxed)
                                throw error
                            }
                            return true
                        }
                    } catch {
                        failures.withLock { $0.append("thread \(n), increment \(i): \(error)") }
                        return
                    }
                }
            }
            #expect(failures.withLock { $0 } == [])
            #expect(try db.queryInt("select n from counter where id = 1") == 800)
            // Read-then-write under SERIALIZABLE from 8 threads does conflict: the retries did work.
            #expect(conflicts.load(ordering: .relaxed) > 0)
        }
    }

    @Test func aConflictIsATypedErrorAndANestedTransactionDoesNotRetry() throws {
        try withPostgres { db, schema in
            try db.update("create table counter (id bigint primary key, n bigint not null)")
            try db.update("insert into counter values (1, 0)")
            var runs = 0
            let error = try #require(throws: DicRecordError.self) {
                try db.tx { db in
                    try db.tx(retryOnConflict: 5) { db in
                        runs += 1
                        // Another connection commits a change to what this transaction read.
                        _ = try db.queryInt("select n from counter where id = 1")
                        _ = try PostgresServer.withAdmin { try $0.run("update \(schema).counter set n = n + 100 where id = 1", .positional([])) }
                        try db.update("update counter set n = n + 1 where id = 1")
                        return true
                    }
                }
            }
            #expect(error.kind == .conflict)
            #expect(runs == 1)
            #expect(error.description.contains("40001"))
        }
    }

    @Test func aConnectionKilledMidTransactionCommitsNothingAndThePoolRecovers() throws {
        try withPostgres { db, _ in
            try db.update("create table t (n bigint)")
            let error = #expect(throws: (any Error).self) {
                try db.tx { db in
                    try db.update("insert into t values (1)")
                    let pid = try #require(try db.queryInt("select pg_backend_pid()"))
                    // Killed from a connection outside the pool, as a server restart or a network cut would.
                    let killed = try PostgresServer.withAdmin {
                        try $0.rows("select pg_terminate_backend(?::integer)", .positional([.integer(Int64(pid))]))
                    }
                    #expect(killed == [[.integer(1)]])
                    Thread.sleep(forTimeInterval: 0.2)
                    try db.update("insert into t values (2)")
                    return true
                }
            }
            #expect(error != nil)
            #expect(try db.queryInt("select count(*) from t") == 0)
            try db.update("insert into t values (3)")
            #expect(try db.query("select n from t", as: Int.self) == [3])
        }
    }

    @Test func nestedCallsOnOneThreadJoinItsConnectionAndNeverWait() throws {
        var options = DbContext.Options()
        options.poolSize = 1
        options.busyTimeout = 2
        try withPostgres(options: options) { db, _ in
            try db.update("create table t (n bigint)")
            try db.tx { db in
                try db.update("insert into t values (1)")
                try db.each("select n from t") { _ in
                    try db.update("insert into t values (2)")   // the each's connection, joined
                    #expect(try db.queryInt("select count(*) from t") == 2)
                    return false
                }
                return true
            }
            #expect(try db.queryInt("select count(*) from t") == 2)
        }
    }

    @Test func sqliteOnlyCallsSayWhyOnPostgres() throws {
        try withPostgres { db, _ in
            let error = try #require(throws: DicRecordError.self) { try db.execute { $0.isInTransaction } }
            #expect(error.kind == .misuse)
            #expect(error.description.contains("SQLite-only"))
            #expect(error.description.contains("PostgreSQL"))
        }
    }

    @Test func aReadonlyContextReadsEvenWhatLooksLikeAWrite() throws {
        var options = DbContext.Options()
        options.readonly = true
        try withPostgres(options: options) { db, schema in
            try PostgresServer.withAdmin { try $0.execute(script: "create table \(schema).t (n bigint); insert into \(schema).t values (7)") }
            #expect(try db.find("-- a comment first\nselect n from t").count == 1)
            let refused = try #require(throws: DatabaseError.self) { try db.update("insert into t values (8)") }
            #expect(refused.sqlState == "25006")   // read_only_sql_transaction
        }
    }

    @Test func aConflictTheBodyCaughtStillRetries() throws {
        try withPostgres { db, schema in
            try db.update("create table counter (id bigint primary key, n bigint not null)")
            try db.update("insert into counter values (1, 0)")
            var runs = 0
            try db.tx(retryOnConflict: 3) { db in
                runs += 1
                _ = try db.queryInt("select n from counter where id = 1")
                if runs == 1 {
                    _ = try PostgresServer.withAdmin { try $0.run("update \(schema).counter set n = n + 100 where id = 1", .positional([])) }
                }
                _ = try? db.update("update counter set n = n + 1 where id = 1")   // the conflict, swallowed
                return true
            }
            #expect(runs == 2)
            #expect(try db.queryInt("select n from counter where id = 1") == 101)
        }
    }
}
