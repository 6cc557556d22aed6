import DicRecord
@testable import DicRecordPostgres
import Foundation
import Testing

/// The PostgreSQL engine's connection: placeholders, values both ways, errors.
@Suite(.enabled(if: PostgresServer.enabled)) struct PostgresConnectionTests {
    @Test func positionalNumberedAndNamedPlaceholdersBind() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE t (id bigint, name text)")
        try c.run("insert into t (id, name) values (?, ?)", .positional([.integer(1), .text("a")]))
        try c.run("insert into t (id, name) values (?2, ?1)", .positional([.text("b"), .integer(2)]))
        try c.run("insert into t (id, name) values (:id, :name)", .named(["id": .integer(3), ":name": .text("c")]))
        #expect(try c.rows("select id, name from t where name <> '?' and name <> ':x' order by id")
                == [[.integer(1), .text("a")], [.integer(2), .text("b")], [.integer(3), .text("c")]])
        #expect(try c.rows("select id::text::bigint from t where id = ?::int", .positional([.integer(2)])) == [[.integer(2)]])
    }

    @Test func valuesRoundTripExactly() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE v (i bigint, r double precision, t text, b bytea)")
        let big = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let rows: [[DatabaseValue]] = [
            [.integer(.max), .real(-0.0), .text(""), .blob(Data())],
            [.integer(.min), .real(.infinity), .text("héllo ✓ 'quoted' \"x\""), .blob(big)],
            [.null, .real(-.infinity), .null, .null],
            [.integer(0), .real(.leastNonzeroMagnitude), .text(String(repeating: "x", count: 100_000)), .blob(Data([0]))],
        ]
        for row in rows { try c.run("insert into v values (?, ?, ?, ?)", .positional(row)) }
        let read = try c.rows("select i, r, t, b from v")
        #expect(read == rows)
        if case .real(let zero) = read[0][1] { #expect(zero.sign == .minus) }
    }

    /// Binary results, and text results (a column type DicRecord does not read in binary makes
    /// the whole row come as text): the same values either way.
    @Test(arguments: ["", ", interval '1 day'"])
    func nativeTypesReadAsTheMatchingStorage(extra: String) throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let row = try s.connection.rows("""
            select true, 7::smallint, 8::integer, 1.5::real, 12345678901234567890.0123::numeric, (-0.5)::numeric,
                   'NaN'::numeric, timestamptz '1970-01-02 00:00:00.25+00', date '2000-01-02',
                   'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '{"a": [1, 2]}'::jsonb, '{"b":1}'::json,
                   array[1, 2, null]::bigint[], array['x', 'y"']::text[], array[[1,2],[3,4]]::int[], '{}'::int[]
            \(extra)
            """).first.map { Array($0.prefix(16)) }
        #expect(row == [
            .integer(1), .integer(7), .integer(8), .real(1.5), .text("12345678901234567890.0123"), .text("-0.5"),
            .text("NaN"), .real(86_400.25), .real(946_771_200),
            .text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), .text(#"{"a": [1, 2]}"#), .text(#"{"b":1}"#),
            .text("[1,2,null]"), .text(#"["x","y\""]"#), .text("[[1,2],[3,4]]"), .text("[]"),
        ])
    }

    @Test func textWithANulIsRefusedNotTruncated() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        try s.connection.execute(script: "CREATE TABLE t (name text)")
        let error = try #require(throws: DicRecordError.self) {
            try s.connection.run("insert into t values (?)", .positional([.text("a\u{0}b")]))
        }
        #expect(error.kind == .unsupportedArgument)
        #expect(error.description.contains("NUL"))
        #expect(try s.connection.rows("select count(*) from t") == [[.integer(0)]])
    }

    @Test func wrongSQLGivesPostgresMessageAndThePositionInTheSQLAsWritten() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let sql = "select ?, ? frm nowhere"
        let error = try #require(throws: DatabaseError.self) {
            try s.connection.run(sql, .positional([.integer(1), .integer(2)]))
        }
        #expect(error.sqlState == "42601")
        #expect(error.message.contains("syntax error at or near \"nowhere\""))
        #expect(error.errorOffset == sql.utf8.distance(from: sql.utf8.startIndex, to: sql.range(of: "nowhere")!.lowerBound.samePosition(in: sql.utf8)!))
        #expect(error.sql == sql)
    }

    @Test func wrongArgumentCountIsAnErrorBeforeTheServerSeesIt() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let error = try #require(throws: DicRecordError.self) {
            try s.connection.run("select ?, ?", .positional([.integer(1)]))
        }
        #expect(error.kind == .argumentCount)
        #expect(error.description.contains("2 parameters but 1 argument was given"))
    }

    @Test func aValueOfTheWrongTypeAndAUniqueViolationMapToSQLiteCodes() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE u (id bigint primary key, n integer)")
        try c.run("insert into u values (?, ?)", .positional([.integer(1), .integer(1)]))
        let duplicate = try #require(throws: DatabaseError.self) {
            try c.run("insert into u values (?, ?)", .positional([.integer(1), .integer(2)]))
        }
        #expect(duplicate.resultCode == 19 && duplicate.extendedResultCode == 2067 && duplicate.sqlState == "23505")
        let wrongType = try #require(throws: DatabaseError.self) {
            try c.run("insert into u values (?, ?)", .positional([.integer(2), .text("twelve")]))
        }
        #expect(wrongType.sqlState == "22P02")
        #expect(wrongType.message.contains("invalid input syntax for type integer"))
        // Out of an integer column's range: refused before the server sees it, naming the argument.
        let outOfRange = try #require(throws: DicRecordError.self) {
            try c.run("insert into u values (?, ?)", .positional([.integer(3), .integer(Int64(Int32.max) + 1)]))
        }
        #expect(outOfRange.kind == .unsupportedArgument)
        #expect(outOfRange.description.contains("argument 2"))
    }

    @Test func aServerThatIsDownIsAClearErrorNamingHostAndPortWithinTheTimeout() throws {
        let port = try freePort()
        let started = ContinuousClock.now
        let error = try #require(throws: DatabaseError.self) {
            _ = try PostgresConnection(PostgresTarget(host: "127.0.0.1", port: port, user: "nobody", database: "none"),
                                       configName: "down", connectTimeout: 2)
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(error.message.contains("127.0.0.1:\(port)"))
        #expect(error.configName == "down")
        #expect(error.sqlState == "08001")
    }

    @Test func theSameSQLWithOtherArgumentTypesIsPreparedForThoseTypes() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE m (x double precision)")
        try c.run("insert into m values (?)", .positional([.null]))
        try c.run("insert into m values (?)", .positional([.integer(2)]))
        try c.run("insert into m values (?)", .positional([.real(2.5)]))
        try c.run("insert into m values (?)", .positional([.text("3.25")]))
        #expect(try c.rows("select x from m order by x nulls first") == [[.null], [.real(2)], [.real(2.5)], [.real(3.25)]])
    }

    @Test func placeholdersSkipStringsCommentsCastsAndDollarQuotes() throws {
        let p = try PostgresPlaceholders("""
            select '?', "a?", $q$ ? :x $q$, x::int, ? -- ? :y
            /* ? /* nested ? */ :z */ , :: text, E'\\'?', ??
            """, configName: nil)
        #expect(p.count == 1)
        #expect(p.names == nil)
        #expect(p.text.contains("x::int, $1 -- ? :y"))
        #expect(p.text.hasSuffix("E'\\'?', ?"))
        let named = try PostgresPlaceholders("select :a, :b, :a", configName: nil)
        #expect(named.text == "select $1, $2, $1")
        #expect(named.names == ["a", "b"])
        #expect(throws: DicRecordError.self) { try PostgresPlaceholders("select :a, ?", configName: nil) }
        let numbered = try PostgresPlaceholders("select ?2, ?, ?1", configName: nil)
        #expect(numbered.text == "select $2, $3, $1")
        #expect(numbered.count == 3)
    }

    private func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &size) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Arguments take the type PostgreSQL infers for their parameter; an aborted transaction never commits.
@Suite(.enabled(if: PostgresServer.enabled)) struct PostgresArgumentTypeTests {
    @Test func datesBoolsAndSmallIntegersBindToNativeColumns() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE n (at timestamptz, day timestamp, ok boolean, small integer, tiny smallint, price numeric, id uuid, doc jsonb, name text)")
        try c.run("insert into n values (?, ?, ?, ?, ?, ?, ?, ?, ?)", .positional([
            .real(86_400.5), .integer(0), .integer(1), .integer(7), .integer(-3), .real(19.99),
            .text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), .text(#"{"a": 1}"#), .text("Ann"),
        ]))
        #expect(try c.rows("select at, day, ok, small, tiny, price, id, doc, left(name, ?) from n where at > ? and ok = ?",
                           .positional([.integer(2), .real(0), .integer(1)]))
                == [[.real(86_400.5), .real(0), .integer(1), .integer(7), .integer(-3), .text("19.99"),
                     .text("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), .text(#"{"a": 1}"#), .text("An")]])
        let outOfRange = try #require(throws: DicRecordError.self) {
            try c.run("update n set small = ?", .positional([.integer(Int64(Int32.max) + 1)]))
        }
        #expect(outOfRange.description.contains("out of range for PostgreSQL integer"))
        let fraction = try #require(throws: DicRecordError.self) { try c.run("update n set small = ?", .positional([.real(1.5)])) }
        #expect(fraction.description.contains("not a whole number"))
        let blob = try #require(throws: DicRecordError.self) { try c.run("update n set name = ?", .positional([.blob(Data([1]))])) }
        #expect(blob.description.contains("bytea"))
        #expect(try c.rows("select small from n") == [[.integer(7)]])
    }

    @Test func arraySlicesAreNotNamedParametersButNamesAfterAWordAre() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        #expect(try s.connection.rows("select (array[1,2,3])[2:3], (array[1,2,3])[:2], ?::int", .positional([.integer(5)]))
                == [[.text("[2,3]"), .text("[1,2]"), .integer(5)]])
        #expect(try s.connection.rows("select 2 between :lo and:hi", .named(["lo": .integer(1), "hi": .integer(3)])) == [[.integer(1)]])
    }

    @Test func parametersTheSQLGivesNoTypeTakeTheArgumentsTypeEvenInsideATransaction() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE t (id bigint); INSERT INTO t VALUES (1), (2); BEGIN")
        #expect(try c.rows("select ? + ?", .positional([.integer(2), .integer(3)])) == [[.integer(5)]])
        #expect(try c.rows("select count(*) from t where ? is null or id = ?", .positional([.integer(2), .integer(2)])) == [[.integer(1)]])
        #expect(try c.rows("select count(*) from t") == [[.integer(2)]])   // the transaction goes on
        try c.execute(script: "COMMIT")
    }

    @Test func datesBindToDateColumnsAsWholeDays() throws {
        let s = try PostgresServer.scratch()
        defer { s.finish() }
        let c = s.connection
        try c.execute(script: "CREATE TABLE h (day date)")
        try c.run("insert into h values (?)", .positional([.real(1_704_067_200)]))   // 2024-01-01
        #expect(try c.rows("select day::text, day from h") == [[.text("2024-01-01"), .real(1_704_067_200)]])
        let partial = try #require(throws: DicRecordError.self) { try c.run("insert into h values (?)", .positional([.real(1_704_067_201)])) }
        #expect(partial.description.contains("not midnight"))
    }

    @Test(arguments: Engine.available) func aTransactionAnErrorAbortedThrowsAtCommitAndKeepsNothing(engine: Engine) throws {
        try engine.run { db in
            try db.update("create table item (\(engine.idColumn), name text unique)")
            let a = try Record(["name": "a"])
            let committed: Result<Bool, any Error> = Result {
                try db.tx { db in
                    try db.save("item", a)
                    _ = try? db.update("insert into item (name) values ('a')")   // a duplicate, caught
                    return true
                }
            }
            switch engine {
            case .sqlite:
                // SQLite goes on after a failed statement: the transaction commits what succeeded.
                #expect((try? committed.get()) == true)
                #expect(try db.queryInt("select count(*) from item") == 1)
            case .postgres:
                // PostgreSQL aborted the transaction: the commit is refused, nothing is kept, the save is undone.
                #expect(throws: DatabaseError.self) { try committed.get() }
                #expect(try db.queryInt("select count(*) from item") == 0)
                #expect((a["id"] as Int?) == nil)
                // Caught in a nested tx (a savepoint), the error leaves the outer transaction going.
                try db.tx { db in
                    try db.save("item", a)
                    _ = try? db.tx { db in try db.update("insert into item (name) values ('a')") > 0 }
                    return true
                }
                #expect(try db.queryInt("select count(*) from item") == 1)
            }
        }
    }
}
