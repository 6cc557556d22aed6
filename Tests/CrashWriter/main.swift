import DicRecord
import Foundation

// A child process for CrashConsistencyTests. It uses only the DicRecord library, on a context
// started on the given path (WAL by default).
//
//   CrashWriter batches PATH       forever: one Db.tx of 100 rows per batch; after each commit,
//                                  prints the committed batch number on its own line.
//   CrashWriter rows PATH N TAG    inserts N rows one statement at a time, tagged TAG; prints "done".
//                                  Busy timeout 120 s: two of them write one file at once, and on
//                                  a slow, loaded machine the default 5 s wait for the other's
//                                  lock can run out (the test's 120 s wait catches a hang).
//
// Any failure: the error on stderr and a non-zero exit status.

/// Writes straight to the file descriptor: a line is in the pipe before the next batch starts,
/// so a SIGKILL never loses a report of a commit that happened.
func report(_ line: String, to handle: FileHandle = .standardOutput) {
    handle.write(Data((line + "\n").utf8))
}

func fail(_ message: String) -> Never {
    report("CrashWriter: \(message)", to: .standardError)
    exit(1)
}

func start(_ path: String, options: DbContext.Options = DbContext.Options()) throws -> DbContext {
    let context = try DbContext(path: path, options: options)
    try context.start()
    return context
}

func runBatches(path: String) throws -> Never {
    let context = try start(path)
    _ = context
    try Db.update("""
        create table if not exists crash_batch(
            id integer primary key, batch integer not null, row integer not null, payload text not null)
        """)
    // A restart continues after the last batch that made it into the file.
    var batch = (try Db.queryInt("select coalesce(max(batch), 0) from crash_batch") ?? 0) + 1
    let filler = String(repeating: "payload-", count: 16)
    while true {
        let committed = try Db.tx { db in
            for row in 0..<100 {
                try db.update("insert into crash_batch(batch, row, payload) values (?, ?, ?)",
                              batch, row, "\(filler)\(batch)/\(row)")
            }
            return true
        }
        guard committed else { fail("batch \(batch) did not commit") }
        report("\(batch)")
        batch += 1
    }
}

func runRows(path: String, count: Int, tag: String) throws {
    var options = DbContext.Options()
    options.busyTimeout = 120
    let context = try start(path, options: options)
    defer { context.stop() }
    try Db.update("create table if not exists crash_rows(id integer primary key, tag text not null, n integer not null)")
    for n in 0..<count {
        let changed = try Db.update("insert into crash_rows(tag, n) values (?, ?)", tag, n)
        guard changed == 1 else { fail("row \(n) of \(tag): \(changed) rows changed") }
    }
    report("done")
}

let arguments = CommandLine.arguments
do {
    switch arguments.count > 1 ? arguments[1] : "" {
    case "batches" where arguments.count == 3:
        try runBatches(path: arguments[2])
    case "rows" where arguments.count == 5:
        guard let count = Int(arguments[3]), count >= 0 else { fail("N must be a non-negative integer, got '\(arguments[3])'") }
        try runRows(path: arguments[2], count: count, tag: arguments[4])
    default:
        fail("usage: CrashWriter batches PATH | CrashWriter rows PATH N TAG")
    }
} catch {
    fail("\(error)")
}
exit(0)
