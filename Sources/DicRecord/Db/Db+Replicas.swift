// Db: where reads run on an engine with read replicas (PostgreSQL's `DbContext(postgres:replicas:)`).
// On SQLite, and on an engine without replicas, every read already sees every commit: these
// handles read as `Db` does.
extension Db {
    /// This handle with its reads on the primary (a read that must see what another process
    /// just wrote, without a token).
    /// ```swift
    /// let fresh = try Db.use("pg").primary.findById("item", 1)
    /// ```
    public var primary: Db { routed(.primary) }

    /// What this context has committed so far, as a token (a PostgreSQL WAL position, `"0/3015E58"`)
    /// that another process hands to `after(_:)`: a web request that wrote returns it, the next
    /// request reads after it. Nil when the config has no read replicas.
    /// ```swift
    /// let token = try Db.use("pg").consistencyToken()
    /// ```
    public func consistencyToken() throws -> String? {
        try context().externalPool()?.consistencyToken()
    }

    /// This handle with its reads on a replica only once it has replayed what `token` names (and
    /// this context's own last commit), else on the primary. A malformed token throws.
    /// ```swift
    /// let rows = try Db.use("pg").after(token).find("select * from cart where user_id = ?", 7)
    /// ```
    public func after(_ token: String) throws -> Db {
        guard let position = ReadRoute.position(token) else {
            throw DicRecordError(.invalidArgument, "'\(token)' is not a consistency token (a WAL position such as 0/3015E58)",
                                 configName: configName)
        }
        return routed(.atLeast(position))
    }
}

extension ReadRoute {
    /// A token's WAL position: `X/Y`, two hexadecimal numbers of 32 bits (PostgreSQL's `pg_lsn` text).
    package static func position(_ token: String) -> UInt64? {
        let parts = token.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let high = UInt64(parts[0], radix: 16), let low = UInt64(parts[1], radix: 16),
              high <= UInt64(UInt32.max), low <= UInt64(UInt32.max) else { return nil }
        return high << 32 | low
    }

    /// The token of a WAL position.
    package static func token(_ position: UInt64) -> String {
        String(position >> 32, radix: 16, uppercase: true) + "/" + String(position & 0xFFFF_FFFF, radix: 16, uppercase: true)
    }
}
