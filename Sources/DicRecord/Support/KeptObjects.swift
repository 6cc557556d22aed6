import Synchronization

/// Objects an owner builds on demand and keeps for its whole life, the one used last published
/// for readers without a lock (a lock and its release are two atomic operations, paid on every
/// save that reads it). The owner is a model schema, which is never freed.
///
/// Unretained, as `ModelSchema.offsetSlots`: every object published stays in `kept` for the
/// owner's life, so a reader's unretained load stays valid. Past `limit` objects no new one is
/// kept or published; a kept one asked for again is published again.
/// `ModelTests.insertsOfManyShapesStopBeingKeptAtTheLimit` and `twoShapesSavedByTurnsStayPublished`
/// check both.
final class KeptObjects<Item: AnyObject & Sendable>: Sendable {
    private let last = Atomic<Unmanaged<Item>?>(nil)
    private let kept = Guarded<[Item]>([])
    let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// The object published last; nil before the first.
    var current: Item? { last.load(ordering: .acquiring)?.takeUnretainedValue() }

    /// How many are kept (tests).
    var count: Int { kept.withLock { $0.count } }

    /// The kept object `matches` accepts, published again; else the one `make` builds, kept and
    /// published while fewer than `limit` are kept (past that it is returned and not kept).
    func object(matching matches: (Item) -> Bool, make: () -> Item) -> Item {
        kept.withLock { kept -> Item in
            if let known = kept.first(where: matches) {
                last.store(Unmanaged.passUnretained(known), ordering: .releasing)
                return known
            }
            let made = make()
            guard kept.count < limit else { return made }
            kept.append(made)
            last.store(Unmanaged.passUnretained(made), ordering: .releasing)
            return made
        }
    }
}
