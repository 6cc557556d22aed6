// `swift run postgres-replicas PRIMARY_URL REPLICA_URL…`: a primary and its streaming replicas
// behind one config. It shows where reads and writes run (by the port of the server that
// answers), read-your-writes after each commit, a token carried to a second context, and
// `Db.primary`. The URLs come from the arguments, or DICRECORD_POSTGRES_URL and
// DICRECORD_POSTGRES_REPLICA_URL (README, "Scaling out", says how to start a primary and a
// replica). Everything runs in a schema of its own, dropped at the end; each check exits
// non-zero when it fails.
import DicRecord
import DicRecordPostgres
import Foundation

func say(_ text: String) { print("\n▸ " + text) }

func check(_ condition: Bool, _ what: String) {
    guard condition else {
        FileHandle.standardError.write(Data("check failed: \(what)\n".utf8))
        exit(1)
    }
}

let environment = ProcessInfo.processInfo.environment
var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.isEmpty, let primary = environment["DICRECORD_POSTGRES_URL"], let replica = environment["DICRECORD_POSTGRES_REPLICA_URL"] {
    arguments = [primary, replica]
}
guard arguments.count >= 2 else {
    print("usage: swift run postgres-replicas PRIMARY_URL REPLICA_URL…   (or set DICRECORD_POSTGRES_URL and DICRECORD_POSTGRES_REPLICA_URL)")
    exit(2)
}
let primaryURL = arguments[0], replicaURLs = Array(arguments.dropFirst())

// A schema of our own on the primary (the replicas receive it by streaming).
let schema = "dicrecord_replicas_\(UInt32.random(in: 0...UInt32.max))"
let admin = try DbContext(postgres: primaryURL, configName: "admin")
try admin.start()
try Db.use("admin").update("create schema \(schema)")
defer {
    _ = try? Db.use("admin").update("drop schema \(schema) cascade")
    admin.stop()
}
func inSchema(_ url: String) -> String { url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)" }

let shop = try DbContext(postgres: inSchema(primaryURL), replicas: replicaURLs.map(inSchema), configName: "shop")
try shop.start()
defer { shop.stop() }
let db = Db.use("shop")
func port(_ url: String) -> Int { URLComponents(string: url)?.port ?? 5432 }
func server(_ port: Int?) -> String {
    guard let port else { return "?" }
    return port == URLComponents(string: primaryURL)?.port ? "the primary (:\(port))" : "a replica (:\(port))"
}

say("A write runs on the primary; the read right after it waits for nothing: it goes to the primary until a replica has replayed it.")
try db.update("create table stock (id bigint primary key, qty bigint not null)")
let written = try db.queryInt("insert into stock values (1, 10) returning inet_server_port()")
let readAfter = try db.queryInt("select inet_server_port() from stock where id = 1 and qty = 10")
print("  insert on \(server(written)); the read after it on \(server(readAfter)), and it sees qty 10")
check(written == port(primaryURL) && readAfter != nil, "the write on the primary, the read sees it")

say("Once a replica has replayed the commit, reads go there (round robin over the replicas).")
var onReplica = false
for _ in 0..<200 where !onReplica {
    onReplica = try db.queryFirst("select pg_is_in_recovery()", as: Bool.self) == true
    if !onReplica { Thread.sleep(forTimeInterval: 0.05) }
}
let reads = try (0..<6).map { _ in try db.queryInt("select inet_server_port()") }
print("  six reads on: \(reads.map(server).joined(separator: ", "))")
check(onReplica && reads.allSatisfy { $0 != port(primaryURL) }, "caught-up replicas serve the reads")

say("Read-your-writes: 100 updates, each read back at once through the same context — never stale.")
var stale = 0
for n in 1...100 {
    try db.update("update stock set qty = ? where id = 1", n)
    if try db.queryInt("select qty from stock where id = 1") != n { stale += 1 }
}
print("  stale reads: \(stale)")
check(stale == 0, "read-your-writes")

say("A token carries it to another process: a second context reads after the first one's write.")
let other = try DbContext(postgres: inSchema(primaryURL), replicas: replicaURLs.map(inSchema), configName: "web2")
try other.start()
defer { other.stop() }
try db.update("update stock set qty = 500 where id = 1")
let token = try db.consistencyToken() ?? ""
let seen = try Db.use("web2").after(token).queryInt("select qty from stock where id = 1")
print("  token \(token): the other context reads qty \(seen.map(String.init) ?? "-")")
check(seen == 500, "the token's read sees the write")

say("Db.primary forces a read onto the primary.")
let forced = try db.primary.queryInt("select inet_server_port()")
print("  on \(server(forced))")
check(forced == port(primaryURL), "Db.primary reads the primary")

print("\nDone: writes on the primary, reads on the replicas, and never a stale read of one's own write.")
