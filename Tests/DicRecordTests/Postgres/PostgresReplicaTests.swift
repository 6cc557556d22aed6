import Foundation
import Synchronization
import Testing
@testable import DicRecord
@testable import DicRecordPostgres

/// The streaming replica `.ci/run` starts beside the primary (`DICRECORD_POSTGRES_REPLICA_URL`,
/// applying WAL 200 ms after each commit; its data folder `DICRECORD_POSTGRES_REPLICA_DIR`).
enum ReplicaServer {
    static let environment = ProcessInfo.processInfo.environment
    static let url = environment["DICRECORD_POSTGRES_REPLICA_URL"].flatMap { $0.isEmpty ? nil : $0 }
    static let folder = environment["DICRECORD_POSTGRES_REPLICA_DIR"].flatMap { $0.isEmpty ? nil : $0 }
    static let enabled = url != nil || PostgresServer.isCI

    static func url(searchPath schema: String) -> String? {
        url.map { $0 + ($0.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)" }
    }

    /// `.ci/postgres-server stop|resume` on the replica.
    static func control(_ command: String) throws {
        _ = try server([command, try #require(folder, "DICRECORD_POSTGRES_REPLICA_DIR is not set")])
    }

    /// Runs `.ci/postgres-server` with `arguments`; returns what it printed (a started server's URL).
    static func server(_ arguments: [String]) throws -> String {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../.ci/postgres-server").standardized
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-pg-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let command = ([script.path] + arguments).map { "'" + $0 + "'" }.joined(separator: " ") + " > '\(output.path)'"
        // posix_spawn and waitpid, not Foundation's Process: the server the script starts lives on
        // holding descriptors Process watches, and its waitUntilExit would never return.
        let words: [String] = ["/bin/bash", "-c", command]
        var argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/bin/bash", nil, nil, &argv, environ)
        try #require(spawned == 0, "cannot run postgres-server: \(spawned)")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        try #require(status == 0, "postgres-server \(arguments.joined(separator: " ")) failed (status \(status))")
        return (try? String(contentsOf: output, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    }
}

@Suite(.enabled(if: ReplicaServer.enabled), .serialized) struct PostgresReplicaTests {
    /// A context "pg" on the primary and the replica, on a fresh schema (made on the primary,
    /// awaited on the replica). The replica may lag `maxReplicaLag` (600 s: on a loaded machine it
    /// can fall more than the default 10 s behind, and these tests are about routing and
    /// read-your-writes, not lag; only the lag test passes its own).
    private func withReplicated<T>(options: DbContext.Options = DbContext.Options(), maxReplicaLag: Double = 600,
                                   _ body: (Db, String) throws -> T) throws -> T {
        try #require(ReplicaServer.url != nil, "CI=true but DICRECORD_POSTGRES_REPLICA_URL is not set (.ci/run starts a replica)")
        let scratch = try PostgresServer.scratch()
        defer { scratch.finish() }
        let primary = try #require(PostgresServer.url(searchPath: scratch.schema))
        let replica = try #require(ReplicaServer.url(searchPath: scratch.schema))
        var options = options
        options.maxReplicaLag = maxReplicaLag
        return try DbContext.withIsolatedRegistry {
            let context = try DbContext(postgres: primary, replicas: [replica], configName: "pg", options: options)
            try context.start()
            defer { context.stop() }
            return try body(Db.use("pg"), scratch.schema)
        }
    }

    /// Runs `body` with the replica's WAL replay paused (nothing new reaches its reads).
    private func withReplayPaused<T>(_ body: () throws -> T) throws -> T {
        let target = PostgresTarget(url: try #require(ReplicaServer.url))
        let admin = try PostgresConnection(target, configName: "replica-admin", connectTimeout: 5)
        defer { admin.close() }
        try admin.execute(script: "SELECT pg_wal_replay_pause()")
        defer { try? admin.execute(script: "SELECT pg_wal_replay_resume()") }
        return try body()
    }

    /// Whether a read through `db` ran on the replica.
    private func onReplica(_ db: Db) throws -> Bool {
        try db.queryFirst("select pg_is_in_recovery()", as: Bool.self) == true
    }

    /// Waits until a read through `db` lands on the replica (it has replayed this context's last
    /// commit), up to 60 s: a loaded machine's replica can take many seconds to replay.
    private func awaitReplica(_ db: Db, seconds: Double = 60) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while try !onReplica(db) {
            try #require(Date() < deadline, "the replica never caught up")
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    @Test func readsRunOnTheReplicaAndWritesOnThePrimary() throws {
        try withReplicated { db, _ in
            try db.update("create table t (id bigint primary key, v text)")
            try awaitReplica(db)
            // Just written, the replica paused: the read goes to the primary.
            try withReplayPaused {
                try db.update("insert into t values (100, 'x')")
                #expect(try !onReplica(db))
                #expect(try db.findById("t", 100)?.get("v", as: String.self) == "x")
            }
            try awaitReplica(db)
            #expect(try db.queryInt("select count(*) from t") == 1)
            // Writes and transactions stay on the primary; a read inside a transaction too.
            try db.tx { db in
                try db.update("insert into t values (1, 'one')")
                #expect(try !onReplica(db))
                return true
            }
            #expect(try db.primary.queryFirst("select pg_is_in_recovery()", as: Bool.self) == false)
            // Counted by the port of the server that answered: 20 reads after the replica caught
            // up all ran there; 20 writes all on the primary.
            let replicaPort = try #require(ReplicaServer.url.flatMap { URLComponents(string: $0)?.port })
            let primaryPort = try #require(PostgresServer.url.flatMap { URLComponents(string: $0)?.port })
            try awaitReplica(db)
            var readPorts: [Int] = []
            for _ in 0..<20 { readPorts.append(try db.queryInt("select inet_server_port()") ?? 0) }
            #expect(readPorts == Array(repeating: replicaPort, count: 20))
            var writePorts: [Int] = []
            for n in 2...21 {
                writePorts.append(try db.queryInt("insert into t values (?, 'w') returning inet_server_port()", n) ?? 0)
            }
            #expect(writePorts == Array(repeating: primaryPort, count: 20))
            #expect(try db.findById("t", 21)?.get("v", as: String.self) == "w")   // read-your-writes
        }
    }

    @Test func readYourWritesHoldsInAThousandRoundsFromFourThreads() throws {
        var options = DbContext.Options()
        options.poolSize = 8
        try withReplicated(options: options) { db, _ in
            try db.update("create table rw (thread bigint primary key, n bigint not null)")
            try db.batch("insert into rw values (?, ?)", (0..<4).map { [$0, 0] })
            let stale = Mutex<[String]>([])
            let done = DispatchSemaphore(value: 0)
            for thread in 0..<4 {
                Thread {
                    defer { done.signal() }
                    for n in 1...250 {
                        do {
                            try db.update("update rw set n = ? where thread = ?", n, thread)
                            let read = try db.queryInt("select n from rw where thread = ?", thread)
                            if read != n { stale.withLock { $0.append("thread \(thread): wrote \(n), read \(read.map(String.init) ?? "nil")") } }
                        } catch {
                            stale.withLock { $0.append("thread \(thread), round \(n): \(error)") }
                            return
                        }
                    }
                }.start()
            }
            for _ in 0..<4 { done.wait() }
            #expect(stale.withLock { $0 } == [])
            // And once the replica has replayed them, the same reads run there and see the same.
            try awaitReplica(db)
            #expect(try db.query("select n from rw order by thread", as: Int.self) == [250, 250, 250, 250])
            // Rounds that wait for the replica between the write and the read: the reads run there
            // (so read-your-writes was not the primary answering every time) and see the write.
            for n in 251...253 {
                try db.update("update rw set n = ? where thread = 0", n)
                try awaitReplica(db)
                #expect(try db.queryInt("select n from rw where thread = 0") == n)
            }
        }
    }

    @Test func aTokenCarriesReadYourWritesToAnotherContext() throws {
        try withReplicated { db, schema in
            try db.update("create table cart (id bigint primary key, items bigint)")
            try awaitReplica(db)
            let other = try DbContext(postgres: try #require(PostgresServer.url(searchPath: schema)),
                                      replicas: [try #require(ReplicaServer.url(searchPath: schema))], configName: "web2")
            try other.start()
            defer { other.stop() }
            try awaitReplica(Db.use("web2"))
            try db.update("insert into cart values (1, 3)")
            let token = try #require(try db.consistencyToken())
            #expect(ReadRoute.position(token) != nil)
            // The other context never wrote: with the token its read waits for the replica to
            // replay the write (else the primary serves it).
            #expect(try Db.use("web2").after(token).queryInt("select items from cart where id = 1") == 3)
            #expect(throws: DicRecordError.self) { try Db.use("web2").after("not a token") }
        }
    }

    @Test func aStoppedReplicaMakesReadsFallBackAndARestartedOneServesAgain() throws {
        try withReplicated { db, _ in
            try db.update("create table s (id bigint primary key)")
            try db.update("insert into s values (1)")
            try awaitReplica(db)
            try ReplicaServer.control("stop")
            var resumed = false
            defer { if !resumed { try? ReplicaServer.control("resume") } }
            // No error: the reads go to the primary.
            for _ in 0..<10 {
                #expect(try db.queryInt("select count(*) from s") == 1)
                #expect(try !onReplica(db))
            }
            try ReplicaServer.control("resume")
            resumed = true
            try awaitReplica(db)
            #expect(try db.queryInt("select count(*) from s") == 1)
        }
    }

    @Test func aReplicaThatLagsMoreThanAllowedIsSkipped() throws {
        // No replica is ever in time.
        try withReplicated(maxReplicaLag: -1) { db, _ throws in
            for _ in 0..<5 { #expect(try !onReplica(db)) }
        }
    }

    @Test func nestedReadsAfterAWriteInAReplicaReadSeeTheWrite() throws {
        try withReplicated { db, _ in
            try db.update("create table o (id bigint primary key, state text)")
            try db.batch("insert into o values (?, 'new')", (1...3).map { [$0] })
            try awaitReplica(db)
            var seen: [String] = []
            // The each runs on the replica; each callback's write goes to the primary, and the
            // read after it may not join the replica's connection (it has not replayed the write).
            try withReplayPaused {
                try db.each("select id from o order by id") { (order: Record) -> Bool in
                    try db.update("update o set state = 'sent' where id = ?", order["id"] as Int?)
                    seen.append(try db.findById("o", order["id"] as Int? ?? 0)?.get("state", as: String.self) ?? "?")
                    return true
                }
            }
            #expect(seen == ["sent", "sent", "sent"])
        }
    }

    @Test func aReadThatWritesRunsOnThePrimaryAndAFailedPageLeavesTheReplicaUsable() throws {
        var options = DbContext.Options()
        options.poolSize = 1   // one replica connection: the failed page's must be handed on clean
        try withReplicated(options: options) { db, _ in
            try db.update("create sequence seq")
            try db.update("create table p (id bigint primary key)")
            try db.batch("insert into p values (?)", (1...5).map { [$0] })
            try awaitReplica(db)
            // nextval writes: a replica refuses it (25006), the primary runs it.
            #expect(try db.queryInt("select nextval('seq')") == 1)
            #expect(try db.queryInt("select nextval('seq')") == 2)
            try awaitReplica(db)
            // A page whose query fails inside its own snapshot transaction on the replica.
            #expect(throws: DatabaseError.self) { try db.paginate(2, 2, "select 1 / (id - 3) as x", "from p order by id") }
            #expect(try onReplica(db))
            #expect(try db.queryInt("select count(*) from p") == 5)
        }
    }

    @Test func withoutReplicasThereIsNoTokenAndTheRoutesReadAsUsual() throws {
        try withDatabase(engine: .postgres) { t throws in
            #expect(try t.db.consistencyToken() == nil)
            #expect(try t.db.primary.queryInt("select 1") == 1)
        }
        try withDatabase { t throws in
            #expect(try t.db.consistencyToken() == nil)
            #expect(try t.db.after("0/1").queryInt("select 1") == 1)
        }
    }

    @Test func aPrimaryThatIsDownFailsWritesByNameWhileReplicasServeReads() throws {
        // A primary and a replica of this test's own: stopping the shared primary would stop the other suites.
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("dicrecord-pair-\(UUID().uuidString)")
        let primaryDir = base.appendingPathComponent("primary").path, replicaDir = base.appendingPathComponent("replica").path
        defer {
            _ = try? ReplicaServer.server(["stop", replicaDir])
            _ = try? ReplicaServer.server(["stop", primaryDir])
            try? FileManager.default.removeItem(at: base)
        }
        let primary = try ReplicaServer.server(["start", primaryDir])
        let replica = try ReplicaServer.server(["replica", replicaDir, primaryDir])
        let primaryPort = try #require(URLComponents(string: primary)?.port)
        try DbContext.withIsolatedRegistry {
            let context = try DbContext(postgres: primary, replicas: [replica], configName: "pair")
            try context.start()
            defer { context.stop() }
            let db = Db.use("pair")
            try db.update("create table kept (id bigint primary key, v text)")
            try db.update("insert into kept values (1, 'one')")
            try awaitReplica(db)
            _ = try ReplicaServer.server(["stop", primaryDir])
            // Writes fail, naming the primary's host and port.
            let error = try #require(throws: DatabaseError.self) { try db.update("insert into kept values (2, 'two')") }
            #expect(error.message.contains("\(primaryPort)"), "\(error)")
            // Reads go on from the replica, which has replayed everything this context wrote.
            #expect(try db.findById("kept", 1)?.get("v", as: String.self) == "one")
            #expect(try onReplica(db))
        }
    }
}
