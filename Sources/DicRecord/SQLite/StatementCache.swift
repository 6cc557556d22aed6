/// A bounded LRU cache of prepared statements keyed by SQL text, so that a plain SQL string
/// passed again is not prepared again (preparing costs 5–20 µs; a cached lookup well under 1 µs).
struct StatementCache {
    /// By the SQL's bytes (`ExactText`): SQL that differs only in a literal's normalization is
    /// another statement.
    private var statements: [ExactText: Statement] = [:]
    private var clock: UInt64 = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    var count: Int { statements.count }

    /// The statement used last: a repeated call usually repeats its SQL, and comparing two
    /// strings' bytes (often the same literal) is cheaper than hashing one.
    private var mostRecent: Statement?

    /// The cached statement for `sql`, marked as just used; nil when absent.
    mutating func statement(for sql: String) -> Statement? {
        clock &+= 1
        if let last = mostRecent, last.sql.hasSameBytes(as: sql) {
            last.lastUsed = clock
            return last
        }
        guard let statement = statements[ExactText(sql)] else { return nil }
        mostRecent = statement
        statement.lastUsed = clock
        return statement
    }

    /// Caches `statement`, evicting the least recently used idle statement when full.
    mutating func insert(_ statement: Statement) {
        guard capacity > 0 else { return }
        if statements.count >= capacity {
            // A linear scan on insertion only: capacity is small and lookups stay O(1).
            if let victim = statements.values.filter({ !$0.inUse }).min(by: { $0.lastUsed < $1.lastUsed }) {
                statements[ExactText(victim.sql)] = nil
                if mostRecent === victim { mostRecent = nil }
            }
        }
        clock &+= 1
        statement.lastUsed = clock
        statements[ExactText(statement.sql)] = statement
    }

    /// Drops every statement not in use (they finalize when released).
    mutating func removeAll() {
        mostRecent = nil
        statements = statements.filter { $0.value.inUse }
    }
}
