import BenchHarness
import FluentKit
import FluentPostgresDriver
import Foundation
import Logging
import NIOCore
import NIOPosix

/// Fluent's model of `bench_items`: the key is the table's own (`id`, given by the user).
final class FluentItem: FluentKit.Model, @unchecked Sendable {
    static let schema = "bench_items"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "i") var i: Int
    @Field(key: "r") var r: Double
    @Field(key: "t") var t: String

    init() {}

    init(_ row: (id: Int, i: Int, r: Double, t: String)) {
        self.id = row.id
        self.i = row.i
        self.r = row.r
        self.t = row.t
    }

    var checksum: Int { rowChecksum(id: id ?? 0, i: i, r: r, t: t) }
}

/// The same columns in `bench_pages` (Fluent names a model's table statically).
final class FluentPage: FluentKit.Model, @unchecked Sendable {
    static let schema = "bench_pages"
    @ID(custom: "id", generatedBy: .user) var id: Int?
    @Field(key: "i") var i: Int
    @Field(key: "r") var r: Double
    @Field(key: "t") var t: String

    init() {}

    var checksum: Int { rowChecksum(id: id ?? 0, i: i, r: r, t: t) }
}

/// Fluent's implementations of the workloads (fluent-kit with fluent-postgres-driver, its async API).
final class FluentSide: Sendable {
    private let databases: Databases
    let db: any Database

    init(url: String) throws {
        let group = MultiThreadedEventLoopGroup.singleton
        databases = Databases(threadPool: NIOThreadPool.singleton, on: group)
        databases.use(try .postgres(url: url + (url.contains("?") ? "&" : "?") + "tlsmode=disable"), as: .psql)
        guard let db = databases.database(.psql, logger: Logger(label: "bench-pg.fluent"), on: group.any()) else {
            throw BenchError("Fluent gave no database")
        }
        self.db = db
    }

    func close() { databases.shutdown() }

    func fetch(_ w: Workload) {
        let db = db
        w.measure("fluent Model query.all()") {
            try blocking { try await FluentItem.query(on: db).all().reduce(0) { $0 &+ $1.checksum } }
        }
    }

    func lookup(_ w: Workload, ids: [Int]) {
        let db = db
        w.measure("fluent Model find(id)") {
            try blocking {
                var sum = 0
                for id in ids { sum &+= try await FluentItem.find(id, on: db)!.checksum }
                return sum
            }
        }
    }

    /// Fluent's bulk insert: `[Model].create(on:)`, one multi-row INSERT per 1,000 models (PostgreSQL
    /// takes at most 65,535 parameters a statement), in one transaction.
    func insert(_ w: Workload, rows: Int, clear: @escaping () -> Void) {
        let db = db
        w.measure("fluent [Model].create(on:), 1,000 a statement, one transaction", setUp: clear) {
            try blocking {
                let models = (1...rows).map { FluentItem(fixtureRow($0)) }
                try await db.transaction { db in
                    var start = 0
                    while start < models.count {
                        try await Array(models[start..<min(start + 1_000, models.count)]).create(on: db)
                        start += 1_000
                    }
                }
                return rows
            }
        }
    }

    func paginate(_ w: Workload, config: PgConfig) {
        let db = db
        w.measure("fluent query.sort(id).paginate") {
            try blocking {
                let page = try await FluentPage.query(on: db).sort(\.$id).paginate(PageRequest(page: config.deepPage, per: config.pageSize))
                return page.items.reduce(page.metadata.total) { $0 &+ $1.checksum }
            }
        }
    }

    func keyset(_ w: Workload, config: PgConfig) {
        let db = db
        w.measure("fluent query.filter(id > key).sort(id).limit") {
            try blocking {
                var sum = 0, key = config.keysetAfter
                for _ in 0..<config.keysetPages {
                    let page = try await FluentPage.query(on: db).filter(\.$id > key).sort(\.$id).limit(config.pageSize).all()
                    sum = page.reduce(sum) { $0 &+ $1.checksum }
                    key = page.last?.id ?? key
                }
                return sum
            }
        }
    }
}
