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

    /// The statements used last, at most `recentCapacity`, oldest overwritten first: a call
    /// usually repeats the SQL of one of the last few (a transaction's BEGIN, its statements and
    /// COMMIT), and comparing strings' bytes (often the same literal, one compare) is cheaper
    /// than hashing one.
    private var recent: [Statement] = []
    private var nextRecent = 0  // the slot overwritten next once `recent` is full
    private var lastHit = 0     // the slot found last: looked at first (a call repeating one SQL)
    static let recentCapacity = 8

    /// The cached statement for `sql`, marked as just used; nil when absent.
    mutating func statement(for sql: String) -> Statement? {
        clock &+= 1
        if lastHit < recent.count, recent[lastHit].sql.hasSameBytes(as: sql) {
            recent[lastHit].lastUsed = clock
            return recent[lastHit]
        }
        for index in recent.indices where index != lastHit && recent[index].sql.hasSameBytes(as: sql) {
            lastHit = index
            recent[index].lastUsed = clock
            return recent[index]
        }
        guard let statement = statements[ExactText(sql)] else { return nil }
        if recent.count < Self.recentCapacity {
            lastHit = recent.count
            recent.append(statement)
        } else {
            lastHit = nextRecent
            recent[nextRecent] = statement
            nextRecent = (nextRecent + 1) % Self.recentCapacity
        }
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
                if let index = recent.firstIndex(where: { $0 === victim }) {
                    recent.remove(at: index)
                    nextRecent = 0
                }
            }
        }
        clock &+= 1
        statement.lastUsed = clock
        statements[ExactText(statement.sql)] = statement
    }

    /// Drops every statement not in use (they finalize when released).
    mutating func removeAll() {
        recent = []
        nextRecent = 0
        statements = statements.filter { $0.value.inUse }
    }
}
