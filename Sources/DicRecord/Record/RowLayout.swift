import Foundation
import Synchronization

/// The columns of a result set: names in SELECT order and a case-insensitive index. One layout
/// is shared by every record a statement produces, so a row costs its values and nothing more.
@usableFromInline
final class RowLayout: Sendable {
    let names: [String]
    /// Each name's `columnKey` to the leftmost column of that name.
    private let index: [[UInt8]: Int]
    /// The converters typed reads use: the context's registry for fetched rows.
    let registry: Converters
    /// Per column, the first 8 bytes of its ASCII-lowercased name packed in an integer, and its
    /// length: a lookup compares integers, not strings (nil when a name is not ASCII).
    private let packedNames: [PackedName]?
    /// True when no two names are the same to SQLite: then a name found at a guessed position is
    /// the leftmost of that name (see `position(of:hint:)`).
    let namesAreDistinct: Bool
    /// Where the rows came from (SQL, config, logger), for a typed read that misses.
    let origin: ReadOrigin

    /// The layout of a new, empty record (layouts never change: a write makes a new one).
    static let empty = RowLayout(names: [], registry: .shared)
    /// The layout of a new model: its `id`, not yet generated.
    static let idOnly = RowLayout(names: ["id"], registry: .shared)

    init(names: [String], registry: Converters, origin: ReadOrigin = .builtInCode) {
        self.names = names
        self.registry = registry
        self.origin = origin
        let packed = names.map(PackedName.init)
        packedNames = packed.contains { $0 == nil } ? nil : packed.compactMap { $0 }
        // The dictionary serves only layouts with a non-ASCII name (or non-ASCII lookups).
        var index: [[UInt8]: Int] = [:]
        if packedNames == nil {
            for (i, name) in names.enumerated() where index[Self.columnKey(name)] == nil {
                index[Self.columnKey(name)] = i
            }
        }
        self.index = index
        namesAreDistinct = Self.distinct(names, packedNames)
    }

    private static func distinct(_ names: [String], _ packed: [PackedName]?) -> Bool {
        guard let packed else { return Set(names.map(columnKey)).count == names.count }
        for i in packed.indices {
            for j in packed.indices where j > i && packed[i].prefix == packed[j].prefix && packed[i].length == packed[j].length {
                if packed[i].length <= 8 || PackedName.equalIgnoringASCIICase(names[i], names[j]) { return false }
            }
        }
        return true
    }

    /// `position(of:)`, trying `hint` first: readers that take the columns in order (a Decodable
    /// type's properties, say) then compare one name instead of searching. `hint` is set past the
    /// position found.
    func position(of name: String, hint: inout Int) -> Int? {
        // The same bytes (Swift's == alone would take the Kelvin sign for "K"): in an ASCII
        // layout, == and an equal UTF-8 length say so (a string equivalent to ASCII text is
        // longer unless it is that text); otherwise the bytes are compared.
        if namesAreDistinct, hint < names.count,
           packedNames != nil ? names[hint] == name && names[hint].utf8.count == name.utf8.count : names[hint].hasSameBytes(as: name) {
            hint += 1
            return hint - 1
        }
        let found = position(of: name)
        if let found { hint = found + 1 }
        return found
    }

    /// The position of `name`, compared case-insensitively as SQLite does; the leftmost wins.
    @usableFromInline
    func position(of name: String) -> Int? {
        if let packedNames, let query = PackedName(name) {
            // Over the buffer: no bounds check per column (a typed read by name runs this).
            return packedNames.withUnsafeBufferPointer { packed in
                for i in packed.indices where packed[i].prefix == query.prefix && packed[i].length == query.length {
                    // Names longer than the packed prefix are confirmed byte by byte.
                    if query.length <= 8 || PackedName.equalIgnoringASCIICase(names[i], name) { return i }
                }
                return nil
            }
        }
        // An ASCII layout has no column of a non-ASCII name: SQLite folds the case of ASCII
        // letters only and compares every other byte as it is.
        if packedNames != nil { return nil }
        return index[Self.columnKey(name)]
    }

    /// A name as SQLite compares column names: its UTF-8 bytes with ASCII letters lowercased and
    /// every other byte as it is. (Not Swift's `lowercased()` and `==`: they take the Kelvin sign
    /// for "k", and "é" for "e" + U+0301, which SQLite keeps apart.)
    static func columnKey(_ name: String) -> [UInt8] {
        name.utf8.map(PackedName.lower)
    }

    /// Whether two lists of names are spelled with the same bytes. A shared layout must keep each
    /// record's own spelling: Swift's `==` takes "é" and "e" + U+0301 as equal, SQLite does not.
    static func sameSpelling(_ a: [String], _ b: [String]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.hasSameBytes(as: $1) }
    }

    /// Whether every name is ASCII.
    var isASCII: Bool { packedNames != nil }

    /// `sameSpelling(names, other)` for `other` all ASCII (the caller packed each name): this
    /// layout's names must be ASCII too, and then Swift's `==` compares bytes (no two ASCII
    /// spellings are canonically equivalent) and takes its fast path for equal small strings.
    func hasASCIINames(_ other: [String]) -> Bool {
        guard packedNames != nil, names.count == other.count else { return false }
        for i in names.indices where names[i] != other[i] { return false }
        return true
    }

    /// Whether two column names are the same to SQLite (case-insensitive).
    static func sameColumn(_ a: String, _ b: String) -> Bool {
        if let pa = PackedName(a), let pb = PackedName(b) {
            return pa.prefix == pb.prefix && pa.length == pb.length && (pa.length <= 8 || PackedName.equalIgnoringASCIICase(a, b))
        }
        return PackedName.equalIgnoringASCIICase(a, b)
    }

    /// This layout plus one column. ASCII layouts extend their packed names instead of
    /// recomputing them (a new model grows one column per property it sets). The last result is
    /// remembered: records sharing a layout (a fetch, a batch) that all gain the same column (a
    /// generated key written back) then share the new layout too.
    /// The caller has checked that this layout has no column `name` (in any case): `Record`'s one
    /// call does, so a remembered result also means the name is absent (`appendingIfRemembered`).
    func appending(_ name: String) -> RowLayout {
        if let last = lastAppended.withLock({ $0 }), last.name.hasSameBytes(as: name) { return last.layout }
        let made: RowLayout
        if let packedNames, let packed = PackedName(name) {
            made = RowLayout(names: names + [name], packedNames: packedNames + [packed], registry: registry,
                             namesAreDistinct: namesAreDistinct && position(of: name) == nil, origin: origin)
        } else {
            made = RowLayout(names: names + [name], registry: registry, origin: origin)
        }
        lastAppended.withLock { $0 = (name, made) }
        if firstSuccessor.load(ordering: .relaxed) == nil {
            let successor = Unmanaged.passRetained(Successor(name: name, layout: made))
            if !firstSuccessor.compareExchange(expected: nil, desired: successor, ordering: .acquiringAndReleasing).exchanged {
                successor.release()
            }
        }
        return made
    }

    private let lastAppended = Guarded<(name: String, layout: RowLayout)?>(nil)

    /// The first layout `appending` made from this one, with its name: set once, read without a
    /// lock (a write to a column the record has, the common case, looks here first and must not
    /// take a lock the record's siblings share).
    private final class Successor: Sendable {
        let name: String
        let layout: RowLayout
        init(name: String, layout: RowLayout) {
            self.name = name
            self.layout = layout
        }
    }
    /// Set once, held (+1) until this layout goes. (Not `AtomicLazyReference`: its `load()` is
    /// not specialized here and looked up generic metadata on every write.)
    private let firstSuccessor = Atomic<Unmanaged<Successor>?>(nil)

    deinit {
        firstSuccessor.load(ordering: .acquiring)?.release()
    }

    /// The layout `appending(name)` made first, if `name` is the same bytes: since `appending` is
    /// only asked for names this layout lacks, a hit also says that `name` is not a column here
    /// (a record building its columns one write at a time skips looking it up).
    func appendingIfRemembered(_ name: String) -> RowLayout? {
        rememberedSuccessor(name)?.takeUnretainedValue()
    }

    /// `appendingIfRemembered`, not retained: this layout holds its first successor for good, so
    /// the result lives as long as the caller holds this layout. (A record stepping to it retains
    /// it once, for its own reference; a retained result would cost a second retain and release.)
    func rememberedSuccessor(_ name: String) -> Unmanaged<RowLayout>? {
        // Held by this layout, which the caller holds: not retained for the look.
        guard let first = firstSuccessor.load(ordering: .acquiring) else { return nil }
        return first._withUnsafeGuaranteedRef { $0.name.hasSameBytes(as: name) ? Unmanaged.passUnretained($0.layout) : nil }
    }


    /// How many columns a record growing from this layout had at the end of the first chain of
    /// `appending` calls (following remembered successors, at most `limit` of them): how much room
    /// a record built one column at a time, as the last one was, will want.
    func rememberedLength(limit: Int = 64) -> Int {
        // Walked without retaining: each layout holds its first successor, and the successor its
        // layout, for good (set once, released in deinit), and the caller holds this one.
        var layout = Unmanaged.passUnretained(self)
        for _ in 0..<limit {
            guard let first = layout._withUnsafeGuaranteedRef({ $0.firstSuccessor.load(ordering: .acquiring) }) else { break }
            layout = first._withUnsafeGuaranteedRef { Unmanaged.passUnretained($0.layout) }
        }
        return layout._withUnsafeGuaranteedRef { $0.names.count }
    }

    /// A layout whose names the caller has packed (all ASCII) and checked.
    init(names: [String], packedNames: [PackedName], registry: Converters, namesAreDistinct: Bool,
         origin: ReadOrigin = .builtInCode) {
        self.names = names
        self.registry = registry
        self.origin = origin
        self.packedNames = packedNames
        self.index = [:]
        self.namesAreDistinct = namesAreDistinct
    }

    func removing(at positions: Set<Int>) -> RowLayout {
        RowLayout(names: names.enumerated().filter { !positions.contains($0.offset) }.map(\.element), registry: registry, origin: origin)
    }
}

/// An ASCII name's first 8 lowercased bytes and its length.
struct PackedName: Sendable {
    let prefix: UInt64
    let length: Int

    init?(_ name: String) {
        // Over the contiguous UTF-8 (native and small strings have it): a plain loop over bytes,
        // several times faster than the view's iterator for the short names of typed reads.
        let packed = name.utf8.withContiguousStorageIfAvailable(Self.pack) ?? Self.pack(name.utf8)
        guard let packed else { return nil }
        self = packed
    }

    private init(prefix: UInt64, length: Int) {
        self.prefix = prefix
        self.length = length
    }

    @inline(__always)
    private static func pack<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> PackedName? {
        var prefix: UInt64 = 0, length = 0
        for byte in bytes {
            guard byte < 0x80 else { return nil }
            if length < 8 { prefix = prefix << 8 | UInt64(lower(byte)) }
            length += 1
        }
        return PackedName(prefix: prefix, length: length)
    }

    @inline(__always)
    static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    static func equalIgnoringASCIICase(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lower($0) == lower($1) }
    }
}
