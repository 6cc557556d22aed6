import Foundation
import Synchronization

/// An untyped row: ordered, case-insensitive columns whose values convert lazily.
///
/// ```swift
/// let t = try Db.use("backup").findFirst("select * from teacher where id = ?", 11)!
/// let name: String? = t.name          // typed read through the converters
/// let born: Date? = t.born            // REAL -> Date on the first typed read, then kept
/// t.age = 41                          // marks "age" modified
/// try Db.use("backup").update("teacher", t)
/// ```
///
/// Fetching copies SQLite's values and converts nothing. The first typed read of a column
/// converts it and keeps the result; reading never marks a column modified. `find` stores its
/// rows in shared blocks of a few hundred: a record kept after the rest of its result is gone
/// keeps its block (at most 36 KiB of numbers and about 64 KiB of text and blobs) until it is. Typed reads give
/// nil for NULL, a missing column or a bad value; the last two also log a warning (or stop the
/// process under `Options.strictReads`), and `get(_:as:)` throws with the reason.
/// A record may be read and written from several threads.
@dynamicMemberLookup
public final class Record: Sendable {
    // Reads of a fetched record that no one has written take no lock (a lock costs more than
    // the read itself). The fetched layout and values are kept as `baseLayout`/`baseValues`,
    // never written again while `isMutated` is false; the first write sets `isMutated` (under the
    // lock, before it writes) and from then on everything goes through the locked copy in
    // `extras`, which starts out sharing the base's storage. A record written from birth (built
    // from values, `Record()`, a new model's) is marked written before anyone sees it, so no
    // reader ever reads its base without the lock: its base is its written copy (`ownsBaseBit`),
    // and it needs no `extras` at all. Only `reload`, on a record no one else references,
    // rewrites the base of a fetched record.
    /// Bit 63: the record has been written (`isMutated`); a record built from values counts as
    /// written, so an unwritten record holds no Swift values. Bit 62: a typed read may have kept
    /// a converted value (`converted`). Bit 61: the base is the written copy (`ownsBaseBit`).
    /// Bit 60: a cell may hold an encoding error. Bits 0..<60: column i was read as a Date on
    /// the inlined path. A Date from REAL is cheap and exact to rebuild, so that bit is how such
    /// a read "keeps" its value: untyped reads and `toJSON` then show a Date, with nothing allocated.
    @usableFromInline let flags = Atomic<UInt64>(0)
    @usableFromInline static var mutatedBit: UInt64 { 1 << 63 }
    static var keptBit: UInt64 { 1 << 62 }
    static var ownsBaseBit: UInt64 { 1 << 61 }
    static var mayHoldEncodingErrorBit: UInt64 { 1 << 60 }
    /// How many columns the Date marks cover (bits 0..<60 of `flags`).
    @inlinable static var dateMarkCount: Int { 60 }
    static var dateMarkBits: UInt64 { (1 << 60) - 1 }

    @usableFromInline var isMutated: Bool { flags.load(ordering: .acquiring) & Self.mutatedBit != 0 }
    @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var baseLayout: RowLayout
    @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var baseValues: RowValues

    @usableFromInline let lock = RecordLock()
    /// The columns whose cells `cells` does not hold because each is the plain cell of its stored
    /// value (see `PlainCells`): a record built from common values, or written column by column,
    /// makes no cell array. Declared after `lock` so that it takes the padding after it (the
    /// record stays 72 bytes). Guarded by `lock`, like `cells`, and unchecked for the same reason.
    @exclusivity(unchecked) nonisolated(unsafe) private var plainCells = PlainCells()
    /// What a fetched record needs beyond its row once written or once a typed read kept a
    /// conversion: nil until then, so that a fetched record stays small and shares its layout.
    /// Guarded by `lock`. (Exclusivity is the lock's job here, so the runtime's dynamic
    /// exclusivity checks, which cost as much as the reads they guard, are turned off.)
    @exclusivity(unchecked) nonisolated(unsafe) private var extras: Extras?
    /// Per-column written Swift values and flags; nil until a column is written other than by a
    /// common value (`plainCells`). Guarded by `lock`.
    @exclusivity(unchecked) nonisolated(unsafe) private var cells: ContiguousArray<Cell>?

    /// Touched only under the record's lock, as the record's own `extras` is: the runtime's
    /// dynamic exclusivity checks on its fields (14% of a member write) are off for the same
    /// reason. RecordSharingTests, run under ThreadSanitizer by .ci/run, fail if an access
    /// escapes the lock.
    private class Extras {
        /// Values kept by typed reads, by column position.
        @exclusivity(unchecked) final var kept: KeptConversions
        /// This object with the fetched record's written copy, once it has been written.
        var written: WrittenExtras? { nil }

        init(kept: KeptConversions = KeptConversions()) {
            self.kept = kept
        }
    }

    /// A fetched record's written copy of its layout and values, with its kept conversions (a
    /// record written from birth writes its base instead). Apart from `Extras`, so that a record
    /// that only kept a conversion (a URL read) holds 64 bytes, not 88.
    private final class WrittenExtras: Extras {
        @exclusivity(unchecked) var layout: RowLayout
        @exclusivity(unchecked) var values: RowValues
        override var written: WrittenExtras? { self }

        init(layout: RowLayout, values: RowValues, kept: KeptConversions) {
            self.layout = layout
            self.values = values
            super.init(kept: kept)
        }
    }

    /// Values kept by typed reads, by column position: a record usually keeps one or two
    /// conversions (Date, URL, ...), so the first is held inline (keeping one costs one allocation,
    /// the `Extras` it sits in).
    struct KeptConversions {
        // The first entry as two plain fields, not an optional tuple: the optional of a tuple
        // holding an `Any` was copied and tested through the runtime's generic value witnesses
        // (about 370 instructions a kept URL, fetch_mixed 4% slower).
        /// The first kept conversion's column (-1: none) and value (`()` while there is none).
        private var firstIndex = -1
        private var firstValue: Any = ()
        private var more: [(index: Int, value: Any)] = []

        var isEmpty: Bool { firstIndex < 0 }

        /// A list holding only `value` for column `index`.
        init(index: Int, value: consuming Any) {
            firstIndex = index
            firstValue = value
        }

        init() {}

        func contains(_ index: Int) -> Bool {
            index == firstIndex || more.contains { $0.index == index }
        }

        func value(at index: Int) -> Any? {
            if index == firstIndex { return firstValue }
            for entry in more where entry.index == index { return entry.value }
            return nil
        }

        mutating func append(_ index: Int, _ value: consuming Any) {
            assert(index >= 0, "a kept conversion's column is a position")   // -1 means none
            if firstIndex < 0 {
                firstIndex = index
                firstValue = value
            } else {
                more.append((index, value))
            }
        }

        mutating func remove(at index: Int) {
            if index == firstIndex {
                if more.isEmpty {
                    firstIndex = -1
                    firstValue = ()
                } else {
                    (firstIndex, firstValue) = more.removeFirst()
                }
            }
            if !more.isEmpty { more.removeAll { $0.index == index } }
        }

        /// The conversions of the columns left when those at `positions` are removed, renumbered.
        func removing(_ positions: Set<Int>) -> KeptConversions {
            var left = KeptConversions()
            let entries = (firstIndex < 0 ? [] : [(index: firstIndex, value: firstValue)]) + more
            for entry in entries where !positions.contains(entry.index) {
                left.append(entry.index - positions.count { $0 < entry.index }, entry.value)
            }
            return left
        }
    }

    private var extrasObject: Extras {
        if let extras { return extras }
        let made = Extras()
        extras = made
        return made
    }

    /// Whether writes go to the base (a record written from birth). Under the lock.
    private var ownsBase: Bool { flags.load(ordering: .relaxed) & Self.ownsBaseBit != 0 }

    /// The current layout (the base until a fetched record is written). Read and written under the lock.
    @usableFromInline var layout: RowLayout {
        get { extras?.written?.layout ?? baseLayout }
        set {
            if ownsBase { baseLayout = newValue } else { writtenCopy.layout = newValue }
        }
    }

    /// The stored value of each column, as SQLite has it or as it will be written. Under the lock.
    @usableFromInline var values: RowValues {
        get { extras?.written?.values ?? baseValues }
        _modify {
            if ownsBase {
                yield &baseValues
            } else {
                let e = writtenCopy
                yield &e.values
            }
        }
    }

    /// A fetched record's written copy of its layout and values, made at its first write
    /// (taking over the conversions kept so far).
    private var writtenCopy: WrittenExtras {
        if let written = extras?.written { return written }
        let made = WrittenExtras(layout: baseLayout, values: baseValues, kept: extras?.kept ?? KeptConversions())
        extras = made
        return made
    }

    /// A written column's flags, and what it keeps beyond them. 16 bytes: a value of a common
    /// type is rebuilt from its stored value (`plain`), so only other values and encoding errors
    /// take a box (a written record's cells are kept by the thousand).
    struct Cell {
        /// The converted value of the first typed read or the value written, and why it could
        /// not be encoded; nil when there is neither.
        var box: CellBox?
        var hasSwiftValue = false
        var modified = false
        /// The common type of the value written, rebuilt from its stored value (see `kept(_:stored:)`).
        var plain = PlainKind.none

        init() {}

        init(swiftValue: Any?, hasSwiftValue: Bool, modified: Bool, plain: PlainKind = .none, encodingError: ConversionError? = nil) {
            if swiftValue != nil || encodingError != nil { box = CellBox(value: swiftValue, encodingError: encodingError) }
            self.hasSwiftValue = hasSwiftValue
            self.modified = modified
            self.plain = plain
        }

        /// A written value of a common type, rebuilt from its stored value: nothing boxed.
        init(plain: PlainKind, modified: Bool = true) {
            hasSwiftValue = true
            self.modified = modified
            self.plain = plain
        }

        var swiftValue: Any? { box?.value }
        var encodingError: ConversionError? { box?.encodingError }
    }

    /// A run of columns, `lower..<upper`, each holding a common value of its storage class's
    /// Swift type, written as that type (an `Int` stored as INTEGER, a `Double` as REAL, a
    /// `String` as TEXT), and all modified or all not: the cell of each is
    /// `Cell(plain: natural kind of its stored value, modified:)`, so none is stored. Only while
    /// `cells` is nil; every other column's cell is `Cell()` (nothing written, not modified).
    /// A record built from a literal of common values is one run, a new model's columns (after
    /// its `id`) another: neither allocates cells. A write that breaks the run makes the cells.
    struct PlainCells {
        var lower: UInt16 = 0
        var upper: UInt16 = 0
        var modified = false

        var isEmpty: Bool { @inline(__always) get { lower == upper } }

        @inline(__always)
        func contains(_ i: Int) -> Bool { i >= Int(lower) && i < Int(upper) }

        /// The kind of the common value a run's column stores `stored` for.
        @inline(__always)
        static func naturalKind(of stored: DatabaseValue) -> PlainKind? {
            switch stored {
            case .integer: .int
            case .real: .double
            case .text: .string
            case .null, .blob: nil
            }
        }

        /// Whether `cell`, holding `stored`, is the cell a run with these flags stands for.
        @inline(__always)
        func stands(for cell: Cell, _ stored: DatabaseValue) -> Bool {
            cell.box == nil && cell.hasSwiftValue && cell.modified == modified
                && cell.plain != .none && cell.plain == Self.naturalKind(of: stored)
        }
    }

    final class CellBox {
        let value: Any?
        let encodingError: ConversionError?
        init(value: Any?, encodingError: ConversionError?) {
            self.value = value
            self.encodingError = encodingError
        }
    }

    /// The written or kept value of a cell whose column stores `stored`.
    private static func kept(_ cell: Cell, stored: DatabaseValue) -> Any? {
        guard cell.hasSwiftValue else { return nil }
        return cell.plain == .none ? cell.swiftValue : cell.plain.value(from: stored)
    }

    /// The cell of column `i`, nil for `Cell()` (nothing written, not modified). With the lock held.
    private func cell(at i: Int) -> Cell? {
        if let cells { return cells[i] }
        guard plainCells.contains(i), let kind = PlainCells.naturalKind(of: values[i]) else { return nil }
        return Cell(plain: kind, modified: plainCells.modified)
    }

    /// Whether the record stores a cell per column (tests check that a plain run stores none).
    var storesCells: Bool { lock.withLock { _ in cells != nil } }

    /// Stores the cells of the plain run (`plainCells`) in `cells`, before a write the run cannot
    /// stand for. With the lock held.
    private func materializePlainCells() {
        guard cells == nil, !plainCells.isEmpty else { return }
        var made = Self.emptyCells(count: values.count, room: values.capacity)
        for i in Int(plainCells.lower) ..< Int(plainCells.upper) {
            if let kind = PlainCells.naturalKind(of: values[i]) { made[i] = Cell(plain: kind, modified: plainCells.modified) }
        }
        cells = made
        plainCells = PlainCells()
    }

    init(layout: RowLayout, values: RowValues) {
        self.baseLayout = layout
        self.baseValues = values
    }

    /// A record written from birth: marked written before anyone sees it, so its base is its
    /// written copy (no `extras` object, and its first write copies nothing).
    init(writing layout: RowLayout, values: RowValues, cells: ContiguousArray<Cell>? = nil, plainCells: PlainCells = PlainCells()) {
        self.baseLayout = layout
        self.baseValues = values
        self.cells = cells
        self.plainCells = plainCells
        flags.store(Self.mutatedBit | Self.ownsBaseBit, ordering: .relaxed)
    }

    /// Called with the lock held before any write to `layout` or `values`.
    private func willMutate() {
        if flags.load(ordering: .relaxed) & Self.mutatedBit == 0 {
            flags.bitwiseOr(Self.mutatedBit, ordering: .releasing)
        }
    }

    /// An empty record; add columns by assigning them.
    /// ```swift
    /// let r = Record(); r.name = "Jack"; r.age = 14
    /// try Db.save("student", r)
    /// ```
    public convenience init() {
        self.init(writing: RowLayout.empty, values: RowValues.empty)
    }

    /// A record with these columns in this order; each value goes through its converter.
    /// ```swift
    /// let r = try Record(["name": "Jack", "age": 40])
    /// ```
    public convenience init(_ columns: KeyValuePairs<String, Any?>) throws {
        // Unsafe, fenced: `KeyValuePairs` is @frozen and its one stored property is the array of
        // its elements (the standard library's ABI), so the literal is read in place: taking an
        // element through the collection copies its `Any?` (40 ns a value). `PlainValueTests`
        // fails if that layout changes.
        let elements = unsafeBitCast(columns, to: [(key: String, value: Any?)].self)
        let built = try elements.withUnsafeBufferPointer { buffer in
            try Self.build(LiteralPairs(elements: buffer), registry: .shared)
        }
        self.init(built)
    }

    /// A record with the columns of `dictionary` (in no particular order).
    /// A value with no converter throws its `ConversionError`.
    /// ```swift
    /// let r = try Record(dictionary: ["name": "Jack", "age": 14])
    /// ```
    public convenience init(dictionary: [String: Any?]) throws {
        self.init(try Self.build(ArrayPairs(pairs: dictionary.sorted { $0.key < $1.key }), registry: .shared))
    }

    /// The layout, values and cells of a record built from `pairs`.
    struct Built {
        let layout: RowLayout
        /// In storage of their own, which the record takes over.
        let values: RowValues
        /// Nil when every value is a common one, written as its storage class's type: the
        /// record's columns are then one plain run (`plainCells`), with no cells to allocate.
        let cells: ContiguousArray<Cell>?
    }

    @inline(__always)
    convenience init(_ built: consuming Built) {
        // Written from birth: its values are its base, unshared, so its first write, such as a
        // save's generated key, copies nothing.
        self.init(writing: built.layout, values: built.values, cells: built.cells,
                  plainCells: built.cells == nil && !built.values.isEmpty
                      ? PlainCells(lower: 0, upper: UInt16(built.values.count), modified: true) : PlainCells())
    }

    /// (Generic over the pairs: a record literal is read where it is, not copied.)
    @inline(__always)
    static func build<Pairs: BuildingPairs>(_ pairs: Pairs, registry: Converters) throws -> Built {
        let count = pairs.count
        // Room for one more: saving a record built without its key writes the generated one back.
        var values = RowValues(storage: RowStorage.array(EmptyCollection(), capacity: count + 1), start: 0, count: 0)
        // Made at the first cell a plain run cannot stand for (see `PlainCells`), or when there
        // are too many columns for a run.
        var cells: ContiguousArray<Cell>? = count < Int(UInt16.max) ? nil : ContiguousArray()
        let run = PlainCells(lower: 0, upper: UInt16.max, modified: true)
        // The cells of the values so far, all plain.
        func madeCells() -> ContiguousArray<Cell> {
            var made = ContiguousArray<Cell>()
            made.reserveCapacity(count + 1)
            for value in values { made.append(PlainCells.naturalKind(of: value).map { Cell(plain: $0) } ?? Cell()) }
            return made
        }
        // Records built in a loop (a batch) share the layout of the previous one: while the names
        // come in that layout's order, each is compared with its counterpart there and nothing
        // else is done with it (an ASCII layout of distinct names: see `LayoutReuse`).
        let lastBuilt = Self.lastBuiltLayout.current
        var reuse = LayoutReuse(lastBuilt.value, registry: registry)
        var names: [String] = []
        var packed: [PackedName?] = []
        var allASCII = true
        let fast = registry.fastPathEnabled
        for index in 0..<count {
            let encoded: DatabaseValue
            let cell: Cell
            if fast, let plain = pairs.plain(at: index) {
                // A common value: no `Any` copied, kept or destroyed.
                encoded = plain.stored
                cell = Cell(plain: plain.kind)
            } else {
                let value: Encoded
                do {
                    value = try pairs.encoded(at: index, registry: registry)
                } catch let error as ConversionError {
                    throw error.inColumn(pairs.name(at: index))
                }
                encoded = value.stored
                cell = Cell(swiftValue: value.kept, hasSwiftValue: value.kept != nil, modified: true)
            }
            // (The name is compared where it lies: taking it out retains and releases it.)
            if reuse.matches(index, of: pairs) {
                if cells == nil, !run.stands(for: cell, encoded) { cells = madeCells() }
                values.append(encoded)
                cells?.append(cell)
                continue
            }
            let name = pairs.name(at: index)
            if let matched = reuse.stop() {
                // The names so far are the layout's first ones.
                names = Array(matched.names[0..<values.count])
                packed = names.map(PackedName.init)
            }
            // A name SQLite takes for an earlier one replaces that column. Each name is packed
            // once (`RowLayout.sameColumn` would pack both names for every comparison).
            let key = PackedName(name)
            if key == nil { allASCII = false }
            if let i = names.indices.first(where: { i in
                guard let key, let other = packed[i] else { return RowLayout.sameColumn(names[i], name) }
                return key.prefix == other.prefix && key.length == other.length
                    && (key.length <= 8 || PackedName.equalIgnoringASCIICase(names[i], name))
            }) {
                if cells == nil, !run.stands(for: cell, encoded) { cells = madeCells() }
                values[i] = encoded
                cells?[i] = cell
            } else {
                if cells == nil, !run.stands(for: cell, encoded) { cells = madeCells() }
                names.append(name)
                packed.append(key)
                values.append(encoded)
                cells?.append(cell)
            }
        }
        // One layout for the whole record, not one per column; its names are distinct already.
        let layout: RowLayout
        if let matched = reuse.finished(count: values.count) {
            layout = matched
        } else {
            if let matched = reuse.stop() {
                // Every name matched the last layout's, but there were fewer.
                names = Array(matched.names[0..<values.count])
                packed = names.map(PackedName.init)
            }
            if let last = lastBuilt.value, last.registry === registry,
               allASCII ? last.hasASCIINames(names) : RowLayout.sameSpelling(last.names, names) {
                layout = last
            } else {
                layout = allASCII
                    ? RowLayout(names: names, packedNames: packed.compactMap { $0 }, registry: registry, namesAreDistinct: true)
                    : RowLayout(names: names, registry: registry)
                lastBuilt.value = layout
            }
        }
        return Built(layout: layout, values: values, cells: cells)
    }

    /// Building a record with the layout of the last one built, while its names come in order.
    struct LayoutReuse {
        private var layout: RowLayout?
        private var next = 0

        init(_ last: RowLayout?, registry: Converters) {
            // ASCII names only: for those, Swift's `==` with equal UTF-8 lengths means the same bytes
            // (a non-ASCII string equal to an ASCII one, such as the Kelvin sign's "K", is longer).
            guard let last, last.registry === registry, last.isASCII, last.namesAreDistinct else { return }
            layout = last
        }

        /// Whether the name at `index` of `pairs` is the layout's next name (spelled with the same bytes).
        @inline(__always)
        mutating func matches<Pairs: BuildingPairs>(_ index: Int, of pairs: Pairs) -> Bool {
            guard let layout, next < layout.names.count, pairs.name(at: index, is: layout.names[next]) else { return false }
            next += 1
            return true
        }

        /// Stops reusing; returns the layout whose first names were matched, if any.
        mutating func stop() -> RowLayout? {
            defer { layout = nil }
            return layout
        }

        /// The layout, when every name matched and there were as many.
        func finished(count: Int) -> RowLayout? {
            guard let layout, next == count, count == layout.names.count else { return nil }
            return layout
        }
    }

    /// The layout of the last record this thread built from values: records built in a loop
    /// share it instead of each making its own.
    private static let lastBuiltLayout = ThreadSlot<RowLayout>()

    // MARK: Columns

    /// Column names in SELECT (or insertion) order, as spelled there.
    /// ```swift
    /// record.columnNames   // ["id", "name", "age"]
    /// ```
    public var columnNames: [String] { lock.withLock { _ in layout.names } }

    /// The number of columns.
    /// ```swift
    /// record.columnCount   // 3
    /// ```
    public var columnCount: Int { lock.withLock { _ in values.count } }

    /// Whether the record has `column` (case-insensitive).
    /// ```swift
    /// if record.hasColumn("t_name") { print(record["t_name"] as Any) }
    /// ```
    public func hasColumn(_ column: String) -> Bool {
        lock.withLock { _ in layout.position(of: column) != nil }
    }

    /// Columns written since the record was fetched or last saved, in column order.
    /// ```swift
    /// record.age = 15; record.modifiedColumns   // ["age"]
    /// ```
    public var modifiedColumns: [String] {
        lock.withLock { _ in
            guard let cells else { return plainCells.modified ? Array(layout.names[Int(plainCells.lower) ..< Int(plainCells.upper)]) : [] }
            return cells.indices.filter { cells[$0].modified }.map { layout.names[$0] }
        }
    }

    /// Removes columns (and their modified flags).
    /// ```swift
    /// record.remove("password", "salt")
    /// ```
    public func remove(_ columns: String...) {
        lock.withLock { _ in
            removeColumns(Set(columns.compactMap { layout.position(of: $0) }))
        }
    }

    /// Keeps only these columns.
    /// ```swift
    /// record.keep("id", "name")
    /// ```
    public func keep(_ columns: String...) {
        lock.withLock { _ in
            let kept = Set(columns.compactMap { layout.position(of: $0) })
            removeColumns(Set(values.indices).subtracting(kept))
        }
    }

    /// Removes every column.
    /// ```swift
    /// record.clear(); record.columnCount   // 0
    /// ```
    public func clear() {
        lock.withLock { _ in removeColumns(Set(values.indices)) }
    }

    private func removeColumns(_ positions: Set<Int>) {
        guard !positions.isEmpty else { return }
        // Written first: a Date read marking a column from now on checks its mark under the lock
        // (`keepDate`), so no mark set after `keepMarkedDates` lands on a shifted column.
        willMutate()
        keepMarkedDates()
        materializePlainCells()
        layout = layout.removing(at: positions)
        values = values.removing(positions)
        if let old = cells {
            cells = ContiguousArray(old.enumerated().filter { !positions.contains($0.offset) }.map(\.element))
        }
        if let extras, !extras.kept.isEmpty {
            extras.kept = extras.kept.removing(positions)
        }
    }

    /// The value a typed read kept for column `i`, if any. Called with the lock held.
    private func convertedValue(at i: Int) -> Any? {
        extras?.kept.value(at: i)
    }

    /// Forgets a kept conversion of column `i` (it was overwritten). Called with the lock held.
    private func forgetConverted(at i: Int) {
        if let extras, !extras.kept.isEmpty { extras.kept.remove(at: i) }
        // Read first: an atomic read-modify-write on every write costs more than the read.
        if i < Self.dateMarkCount, flags.load(ordering: .relaxed) & (UInt64(1) << UInt64(i)) != 0 {
            flags.bitwiseAnd(~(UInt64(1) << UInt64(i)), ordering: .relaxed)
        }
    }

    /// Whether column `i` was read as a Date on the inlined path.
    private func isMarkedDate(_ i: Int) -> Bool {
        i < Self.dateMarkCount && flags.load(ordering: .relaxed) & (UInt64(1) << UInt64(i)) != 0
    }

    /// Turns Date marks into kept values, before columns move. Called with the lock held.
    private func keepMarkedDates() {
        for i in values.indices where isMarkedDate(i) && extras?.kept.contains(i) != true && cell(at: i)?.hasSwiftValue != true {
            if let date = try? DateConverter().decode(values[i]) {
                extrasObject.kept.append(i, date)
            }
        }
        if extras?.kept.isEmpty == false { flags.bitwiseOr(Self.keptBit, ordering: .releasing) }
        // The Date marks go; the record's status bits stay.
        flags.bitwiseAnd(~Self.dateMarkBits, ordering: .relaxed)
    }

    // MARK: Untyped access

    /// The current value of `column`: the value written or converted, else the stored value
    /// (`Int64`, `Double`, `String`, `Data`); nil for NULL or a missing column. Assigning marks
    /// the column modified (and adds it when missing).
    /// ```swift
    /// print(record["t_name"] as Any)           // from "select s.*, t.name t_name …"
    /// record["nickname"] = "Jack"
    /// ```
    public subscript(column: String) -> Any? {
        get {
            lock.withLock { _ in
                guard let i = layout.position(of: column) else { return nil }
                return currentValue(at: i)
            }
        }
        set { set(column, newValue) }
    }

    /// The current value at `index` in column order; nil when out of range.
    /// ```swift
    /// let first = record[0]
    /// ```
    public subscript(index: Int) -> Any? {
        lock.withLock { _ in values.indices.contains(index) ? currentValue(at: index) : nil }
    }

    /// `record.name` reads (current value) and writes (marks modified) the column `name`.
    /// ```swift
    /// print(record.name as Any)               // untyped: the current value
    /// record.age = 15                          // marks "age" modified
    /// ```
    public subscript(dynamicMember column: String) -> Any? {
        get { self[column] }
        set { set(column, consume newValue) }
    }

    private func currentValue(at i: Int) -> Any? {
        if let cell = cell(at: i), cell.hasSwiftValue { return Self.kept(cell, stored: values[i]) }
        if let kept = convertedValue(at: i) { return kept }
        if isMarkedDate(i), let date = try? DateConverter().decode(values[i]) { return date }
        return values[i].storedValue
    }

    /// Writes `value` to `column` through its converter and marks the column modified.
    /// A value with no converter is kept and reported by the statement that would store it.
    /// ```swift
    /// record.set("born", Date())
    /// ```
    public func set(_ column: String, _ value: __owned Any?) {
        // Unwrapped first: what is left to destroy is an `Any` (a call through its type's witness),
        // not an `Any?` (through Optional's generic witnesses, about 75 instructions a write).
        guard let unwrapped = consume value else { return setConverting(column, nil) }
        // A value of a common type is read where it lies (no copy of the `Any`); while no registry
        // replaces a common type's converter, the record's registry need not be asked.
        if let plain = PlainValue.peek(unwrapped)?.encoded,
           !Converters.anyReplacesFastPathType.load(ordering: .acquiring) || lock.withLock({ _ in layout.registry }).fastPathEnabled {
            return storePlain(column, plain.stored, kind: plain.kind)
        }
        setConverting(column, unwrapped)
    }

    /// `set` of a value that is not of a common type (or when a registry replaces a common type's
    /// converter): encoded by the record's registry.
    private func setConverting(_ column: String, _ value: Any?) {
        let registry = lock.withLock { _ in layout.registry }
        let encoded: DatabaseValue
        do {
            encoded = try registry.encode(value)
        } catch {
            let encodingError = (error as? ConversionError)?.inColumn(column)
                ?? ConversionError(kind: .invalidValue, column: column, value: String(describing: value),
                                   targetType: "\(type(of: value))", reason: "\(error)")
            return store(column, .null, swiftValue: Self.kept(value), encodingError: encodingError)
        }
        store(column, encoded, swiftValue: Self.kept(value), encodingError: nil)
    }

    /// What a cell keeps of a written value: the value itself, or what a written Optional wraps.
    @inline(__always)
    private static func kept(_ value: Any?) -> Any? {
        value.flatMap { isPlainValue($0) ? $0 : ($0 as? any OptionalProtocol)?.unwrapped ?? $0 }
    }

    /// Writes a value encoded by the built-in rules (a model's column) and marks the column modified.
    func set(_ column: String, _ encoded: Encoded) {
        // (A common value's cell keeps nothing but its kind.)
        if encoded.kind != .none { return storePlain(column, encoded.stored, kind: encoded.kind) }
        store(column, encoded.stored, swiftValue: encoded.kept, plain: encoded.kind, encodingError: nil)
    }

    /// Writes a value already encoded (a model's JSON column) and marks the column modified.
    func set(_ column: String, encoded: DatabaseValue, swiftValue: Any?) {
        store(column, encoded, swiftValue: swiftValue, encodingError: nil)
    }

    /// Keeps a value that could not be encoded: the statement that would store it throws `error`.
    func set(_ column: String, failedToEncode value: Any, error: any Error) {
        let conversion = (error as? ConversionError)?.inColumn(column)
            ?? ConversionError(kind: .invalidValue, column: column, value: String(describing: value),
                               targetType: "\(type(of: value))", reason: "\(error)")
        store(column, .null, swiftValue: value, encodingError: conversion)
    }

    private func store(_ column: String, _ encoded: DatabaseValue, swiftValue: Any?, plain: PlainKind = .none,
                       encodingError: ConversionError?) {
        let cell = plain != .none && encodingError == nil
            ? Cell(plain: plain)
            : Cell(swiftValue: plain != .none ? nil : swiftValue, hasSwiftValue: plain != .none || swiftValue != nil, modified: true,
                   plain: plain, encodingError: encodingError)
        lock.withLock { _ in
            if encodingError != nil { flags.bitwiseOr(Self.mayHoldEncodingErrorBit, ordering: .relaxed) }
            storeLocked(column, encoded, cell)
        }
    }

    /// `store` of a value of a common type (its cell keeps only its kind, `Cell(plain:)`).
    @inline(__always)
    private func storePlain(_ column: String, _ encoded: DatabaseValue, kind: PlainKind) {
        lock.withLock { _ in
            if appendsToPlainRun(column, encoded, kind) { return }
            storeLocked(column, encoded, Cell(plain: kind))
        }
    }

    /// `store`, with the lock held.
    private func storeLocked(_ column: String, _ encoded: DatabaseValue, _ cell: Cell) {
        // A new column is appended with its value and cell (not as NULL first, then written).
        guard let i = position(of: column, elseAppending: encoded, cell) else { return }
        willMutate()
        if cells == nil, !(plainCells.contains(i) && plainCells.stands(for: cell, encoded)) { materializePlainCells() }
        values[i] = encoded
        if cells == nil, !plainCells.contains(i) { cells = Self.emptyCells(count: values.count, room: values.capacity) }
        cells?[i] = cell
        forgetConverted(at: i)
    }

    /// The common case of a record built one column at a time (`Record()`, then `r.name = …`),
    /// taken whole when it applies: a record written from birth, with no cells and nothing kept,
    /// whose plain run (`PlainCells`) ends at its last column, gets a column its layout's
    /// remembered successor adds (a record built before it added the same one next), holding a
    /// common value of its storage class's type. What `storeLocked` would do, without its general
    /// steps: the value appended, the run one longer. (Nothing to forget at a new position: kept
    /// conversions and Date marks are of the columns there are.) False, with nothing done, otherwise.
    /// With the lock held.
    @inline(__always)
    private func appendsToPlainRun(_ column: String, _ encoded: DatabaseValue, _ kind: PlainKind) -> Bool {
        guard cells == nil, extras == nil, ownsBase, PlainCells.naturalKind(of: encoded) == kind else { return false }
        let j = baseValues.count
        guard j < Int(UInt16.max), plainCells.isEmpty || (Int(plainCells.upper) == j && plainCells.modified),
              // Asked without retaining the layout: the record holds it, and only this thread
              // (holding the lock) replaces it. The successor, held by it, is retained once: by the
              // store below, for the record's own reference (before the old one is released).
              let grown = Unmanaged.passUnretained(baseLayout)._withUnsafeGuaranteedRef({ $0.rememberedSuccessor(column) })
        else { return false }
        baseLayout = grown.takeUnretainedValue()
        baseValues.append(encoded, expected: grown._withUnsafeGuaranteedRef { $0.rememberedLength() } + 1)
        plainCells = PlainCells(lower: plainCells.isEmpty ? UInt16(j) : plainCells.lower, upper: UInt16(j + 1), modified: true)
        return true
    }

    /// The value of `column` decoded by `decode` (a model's JSON column): the written or kept
    /// value if there is one, else the stored value decoded once and kept. Nil for NULL, a missing
    /// column or a value `decode` refuses.
    func decoded(_ column: String, using decode: (DatabaseValue) throws -> Any) -> Any? {
        guard let snapshot = lock.withLock({ _ in layout.position(of: column).map { slot(at: $0) } }) else { return nil }
        if let cached = snapshot.cached { return cached }
        guard snapshot.raw != .null, let value = try? decode(snapshot.raw) else { return nil }
        cacheConversion(value, at: snapshot.index, ifStill: snapshot.raw)
        return value
    }

    /// `put`, returning what the column held before (nil: it did not exist), in one lock.
    func exchange(_ column: String, _ value: DatabaseValue) -> DatabaseValue? {
        lock.withLock { _ in exchangeLocked(column, value).previous }
    }

    /// `exchange`, with the lock held.
    /// Returns the column's previous value (nil: it was absent) and its position now.
    private func exchangeLocked(_ column: String, _ value: DatabaseValue, knownAt known: InsertShape? = nil)
        -> (previous: DatabaseValue?, position: Int) {
        // A save knows where its key was left out: no lookup while the layout is the one it inserted.
        let existing: Int?
        if let known, let omitted = known.omitted, layout === known.layout {
            existing = omitted
        } else {
            existing = layout.position(of: column)
        }
        let previous = existing.map { values[$0] }
        let i = existing ?? position(creating: column)
        willMutate()
        if plainCells.contains(i) { materializePlainCells() }
        values[i] = value
        if cells != nil { cells![i] = Cell() }
        forgetConverted(at: i)
        return (previous, i)
    }

    /// After the record's row was written: stores the generated `key` value, if any, and clears
    /// the modified flags, under one lock. Returns the key's previous value (nil: the column was
    /// absent), its position in the layout of `cleared` (nil: no key written) and what was modified.
    func finishWrite(key: String?, generated: DatabaseValue?, at shape: InsertShape? = nil)
        -> (previous: DatabaseValue?, keyPosition: Int?, cleared: ModifiedSet) {
        lock.withLock { _ in
            // The flags first: writing the key resets its cell, and a key set to nil on purpose
            // was modified. Writing the key only appends a column or writes one in place, so the
            // positions stay good in the layout after it.
            var cleared = clearModifiedLocked()
            var previous: DatabaseValue?, keyPosition: Int?
            if let key, let generated {
                (previous, keyPosition) = exchangeLocked(key, generated, knownAt: shape)
                cleared.layout = layout
            }
            return (previous, keyPosition, cleared)
        }
    }

    /// Writes a stored value without marking the column modified (generated ids, fetched data).
    func put(_ column: String, _ value: DatabaseValue) {
        _ = exchange(column, value)
    }

    /// The position of `column`, appended (NULL) when new. Under the lock.
    private func position(creating column: String) -> Int {
        position(of: column, elseAppending: .null, Cell(), cellsIfNone: false) ?? values.count - 1
    }

    /// The position of `column`; when the record lacks it, appends it with `value` and `cell`
    /// and returns nil. Under the lock. (Without `cellsIfNone`, a record with no cells yet gets
    /// none for the new column either.)
    private func position(of column: String, elseAppending value: DatabaseValue, _ cell: Cell, cellsIfNone: Bool = true) -> Int? {
        // Columns written one by one in the order of the last record built this way: the
        // layout's remembered successor says the column is new here (no lookup).
        let grown: RowLayout
        do {
            let current = layout
            if let remembered = current.appendingIfRemembered(column) {
                grown = remembered
            } else {
                if let i = current.position(of: column) { return i }
                grown = current.appending(column)
            }
        }
        willMutate()
        // A common value written as its storage class's type, right after a plain run (or as the
        // first of one), joins the run: no cell is stored. Any other written cell ends the run.
        let j = values.count
        var run: PlainCells?
        if cells == nil, cellsIfNone {
            if j >= Int(UInt16.max) {
                run = nil
            } else if plainCells.isEmpty {
                run = PlainCells(lower: UInt16(j), upper: UInt16(j + 1), modified: cell.modified)
            } else if Int(plainCells.upper) == j {
                run = plainCells
                run?.upper = UInt16(j + 1)
            }
            if run?.stands(for: cell, value) != true {
                run = nil
                materializePlainCells()
            }
        }
        // (The last use of `grown`: the record takes it over, with no retain and release of its own.)
        layout = grown
        // Room for as many columns as the last record grown this way ended with, and its
        // generated key: its values and cells grow once, not at 8 and again at 16.
        values.append(value, expected: self.layout.rememberedLength() + 1)
        if let run {
            plainCells = run
        } else if cells != nil {
            if cells!.count == cells!.capacity { cells!.reserveCapacity(Swift.max(8, cells!.count * 2, values.capacity)) }
            cells!.append(cell)
        } else if cellsIfNone {
            var made = Self.emptyCells(count: values.count - 1, room: values.capacity)
            made.append(cell)
            cells = made
        }
        forgetConverted(at: values.count - 1)
        return nil
    }

    /// Cells for `count` columns none of which was written, with room to grow (for as many as
    /// `room`, the values' room, at least).
    private static func emptyCells(count: Int, room: Int = 0) -> ContiguousArray<Cell> {
        var made = ContiguousArray<Cell>()
        made.reserveCapacity(Swift.max(8, count, room))
        made.append(contentsOf: repeatElement(Cell(), count: count))
        return made
    }

    // MARK: Typed access

    /// Reads `column` as `T`, throwing a `ConversionError` that names the column, the stored
    /// value and `T` when the value does not convert, and ``DicRecordError`` when there is no such column.
    /// NULL reads as nil when `T` is an Optional and throws otherwise.
    /// ```swift
    /// let born = try record.get("born", as: Date.self)
    /// let nickname = try record.get("nickname", as: String?.self)   // nil for NULL
    /// ```
    public func get<T>(_ column: String, as type: T.Type = T.self) throws -> T {
        // Position and value are read under one lock: a concurrent `remove` cannot shift them apart.
        let snapshot = lock.withLock { _ in layout.position(of: column).map { slot(at: $0) } }
        guard let snapshot else {
            throw DicRecordError(.missingColumn, "no column \"\(column)\" in the record; it has \(columnNames)")
        }
        return try convert(snapshot, as: T.self)
    }

    /// Reads the column at `index` (column order) as `T`.
    /// ```swift
    /// let count = try record.get(0, as: Int.self)
    /// ```
    public func get<T>(_ index: Int, as type: T.Type = T.self) throws -> T {
        let snapshot = lock.withLock { _ in values.indices.contains(index) ? slot(at: index) : nil }
        guard let snapshot else {
            throw DicRecordError(.missingColumn, "no column at index \(index); the record has \(columnCount) columns")
        }
        return try convert(snapshot, as: T.self)
    }

    private struct Slot {
        let index: Int
        let raw: DatabaseValue
        let cached: Any?
        let registry: Converters
        /// The stored bytes of TEXT that is not UTF-8 (`raw` holds them with U+FFFD replacements).
        let invalidText: Data?
    }

    /// Must be called with the lock held.
    private func slot(at i: Int) -> Slot {
        let cached = cell(at: i).flatMap { Self.kept($0, stored: values[i]) } ?? convertedValue(at: i)
        return Slot(index: i, raw: values[i], cached: cached, registry: layout.registry, invalidText: values.invalidText(at: i))
    }

    private func convert<T>(_ slot: Slot, as type: T.Type) throws -> T {
        if let cached = slot.cached, let typed = cached as? T { return typed }
        // TEXT that is not UTF-8 read as bytes: the bytes stored, not the replaced ones.
        if let bytes = slot.invalidText, T.self == Data.self || T.self == Data?.self, let typed = bytes as? T { return typed }
        do {
            // The common case first: a converter for exactly `T` (no Optional to look through).
            if slot.raw != .null, let decoded = try slot.registry.decodeRegistered(slot.raw, as: T.self) {
                if slot.cached == nil, !slot.registry.isCheap(T.self) {
                    cacheConversion(decoded, at: slot.index, ifStill: slot.raw)
                }
                return decoded
            }
            let decoded: T = try slot.registry.decode(slot.raw)
            // Keep the first conversion (not for NULL, nor for types cheaper to convert than to keep).
            if slot.cached == nil, slot.raw != .null, !slot.registry.isCheap(T.self) {
                keepConverted(decoded, at: slot.index, ifStill: slot.raw)
            }
            return decoded
        } catch let error as ConversionError {
            // `T` with no converter of its own (Any, any Sendable, a protocol): the current value if it is one.
            if error.kind == .noConverter, let current = slot.cached ?? slot.raw.storedValue.map({ $0 as Any }),
               let typed = current as? T {
                return typed
            }
            throw error.inColumn(columnName(at: slot.index))
        }
    }

    private func columnName(at index: Int) -> String {
        lock.withLock { _ in layout.names.indices.contains(index) ? layout.names[index] : "#\(index)" }
    }

    private func keepConverted<T>(_ value: T, at index: Int, ifStill raw: DatabaseValue) {
        let unwrapped: Any?
        if let optional = value as? any OptionalProtocol { unwrapped = optional.unwrapped } else { unwrapped = value }
        guard let unwrapped else { return }
        cacheConversion(unwrapped, at: index, ifStill: raw)
    }

    /// A URL read without the registry (the caller checked `fastPathAllowed`), as `URLConverter`
    /// decodes it; the first read parses and keeps it, later reads return the kept URL. Nil sends
    /// the caller to the general path (not TEXT, not a URL, or a kept value of another type).
    @usableFromInline
    func fastURL(at index: Int, stored: DatabaseValue) -> URL? {
        guard case .text(let text) = stored else { return nil }
        // An unwritten record that kept nothing has nothing to look up.
        if flags.load(ordering: .acquiring) & (Self.mutatedBit | Self.keptBit) != 0 {
            let kept = lock.withLock { _ -> Any? in
                guard index < values.count else { return nil }
                return cell(at: index).flatMap { Self.kept($0, stored: values[index]) } ?? convertedValue(at: index)
            }
            if let kept { return kept as? URL }
        }
        guard !text.isEmpty, let url = URL(string: text) else { return nil }
        cacheConversion(url, at: index, ifStill: stored)
        return url
    }

    /// Caches a converted value (read again without converting) unless the column changed meanwhile or already holds one.
    private func cacheConversion(_ unwrapped: Any, at index: Int, ifStill raw: DatabaseValue) {
        lock.withLock { _ in
            // An unwritten record's values never change: only a written one needs the comparison.
            guard !isMutated || (values.indices.contains(index) && values[index] == raw),
                  cell(at: index)?.hasSwiftValue != true else { return }
            if let extras {
                guard !extras.kept.contains(index) else { return }
                extras.kept.append(index, unwrapped)
            } else {
                extras = Extras(kept: KeptConversions(index: index, value: unwrapped))
            }
            flags.bitwiseOr(Self.keptBit, ordering: .releasing)
        }
    }

    // MARK: Internals for Db and Model

    /// Column names and stored values, in column order.
    var storedColumns: [(name: String, value: DatabaseValue)] {
        lock.withLock { _ in Array(zip(layout.names, values)) }
    }

    /// What an INSERT of this record binds, under one lock: every column but a NULL `key`, the
    /// values, and whether `key` has no value (so the generated one should be written back).
    /// `like` is the shape of the previous snapshot taken with the same `key` (a batch's, a model
    /// class's last save): while the layout is the same, the key's position is too (no lookup).
    func insertSnapshot(key: String?, like previous: InsertShape? = nil) throws -> InsertRow {
        try lock.withLock { _ in
            if let error = firstEncodingErrorLocked { throw error }
            let layout = self.layout
            let keyPosition: Int?
            if let previous, previous.layout === layout {
                keyPosition = previous.keyPosition
                assert(keyPosition == key.flatMap { layout.position(of: $0) }, "a snapshot like one taken with another key")
            } else {
                keyPosition = key.flatMap { layout.position(of: $0) }
            }
            let values = self.values
            let omitted = keyPosition.flatMap { values[$0] == .null ? $0 : nil }
            return InsertRow(shape: InsertShape(layout: layout, keyPosition: keyPosition, omitted: omitted,
                                                keyIsMissing: key != nil && (keyPosition == nil || omitted != nil)),
                             stored: values)
        }
    }

    /// The first cell's encoding error, if any (under the lock).
    private var firstEncodingErrorLocked: ConversionError? {
        guard flags.load(ordering: .relaxed) & Self.mayHoldEncodingErrorBit != 0 else { return nil }
        return cells?.lazy.compactMap(\.encodingError).first
    }

    /// The error of the first value written that could not be encoded (it is held as NULL), if any.
    var firstEncodingError: ConversionError? {
        lock.withLock { _ in firstEncodingErrorLocked }
    }

    /// Every column with its stored and current value, read under one lock.
    var currentColumns: [(name: String, stored: DatabaseValue, current: Any?)] {
        lock.withLock { _ in layout.names.indices.map { (layout.names[$0], values[$0], currentValue(at: $0)) } }
    }

    /// The column names and stored values, read under one lock (live queries compare results by them).
    var storedRow: StoredRow {
        lock.withLock { _ in StoredRow(names: layout.names, values: values.array, invalidTexts: values.invalidTexts) }
    }

    struct StoredRow: Equatable {
        let names: [String]
        let values: [DatabaseValue]
        /// The bytes of TEXT values that are not UTF-8, by position: two such values read as the
        /// same replacement characters, and differ only here.
        let invalidTexts: [Int: Data]?
    }

    /// The stored value of `column`, or nil when there is no such column.
    func storedValue(_ column: String) -> DatabaseValue? {
        lock.withLock { _ in layout.position(of: column).map { values[$0] } }
    }

    /// The stored value of `column` with its bytes when it is TEXT but not UTF-8 (a key to look a
    /// row up by), or nil when there is no such column.
    func storedValueWithBytes(_ column: String) -> StoredValue? {
        lock.withLock { _ in layout.position(of: column).map { StoredValue(values[$0], bytes: values.invalidText(at: $0)) } }
    }

    /// The stored values of `columns` with the bytes of those that are TEXT but not UTF-8, under
    /// one lock; nil for a column the record does not have.
    func storedValues(of columns: [String]) -> [StoredValue?] {
        lock.withLock { _ in
            columns.map { column in layout.position(of: column).map { StoredValue(values[$0], bytes: values.invalidText(at: $0)) } }
        }
    }

    /// Every column with its stored value and the bytes of TEXT that is not UTF-8, in column order.
    var storedColumnsWithBytes: [(name: String, value: DatabaseValue, bytes: Data?)] {
        lock.withLock { _ in layout.names.indices.map { (layout.names[$0], values[$0], values.invalidText(at: $0)) } }
    }

    /// Modified columns with their stored values, throwing the first encoding error.
    func modifiedStoredColumns() throws -> [(name: String, value: DatabaseValue)] {
        try modifiedStoredColumnsWithBytes().map { ($0.name, $0.value) }
    }

    /// `modifiedStoredColumns` with the bytes of TEXT that is not UTF-8 (a column marked modified
    /// again when the transaction that saved it rolled back still holds what was read).
    func modifiedStoredColumnsWithBytes() throws -> [(name: String, value: DatabaseValue, bytes: Data?)] {
        try lock.withLock { _ in
            guard let cells else {
                guard plainCells.modified else { return [] }
                return (Int(plainCells.lower) ..< Int(plainCells.upper)).map { i in (layout.names[i], values[i], values.invalidText(at: i)) }
            }
            return try cells.indices.filter { cells[$0].modified }.map { i in
                if let error = cells[i].encodingError { throw error }
                return (layout.names[i], values[i], values.invalidText(at: i))
            }
        }
    }

    /// The columns a save found modified: positions in `layout` (bits for the first 64, the rest
    /// listed), kept without allocating for the common record.
    struct ModifiedSet {
        var layout: RowLayout
        var bits: UInt64 = 0
        var more: [Int] = []

        var positions: [Int] {
            (0..<64).filter { bits & (1 << UInt64($0)) != 0 } + more
        }
    }

    /// Marks modified again the columns of `set` (a save whose transaction rolled back), by
    /// position when the layout is unchanged, else by name.
    func markModified(_ set: ModifiedSet) {
        lock.withLock { _ in
            let current = layout
            for i in set.positions {
                let position = current === set.layout ? i : set.layout.names.indices.contains(i)
                    ? current.position(of: set.layout.names[i]) : nil
                if let position { markModifiedLocked(at: position) }
            }
        }
    }

    /// Marks `columns` modified again, by name (a model's save from its wrappers rolled back).
    func markModified(columns: [String]) {
        lock.withLock { _ in
            for name in columns {
                if let position = layout.position(of: name) { markModifiedLocked(at: position) }
            }
        }
    }

    /// Marks column `position` modified. With the lock held.
    private func markModifiedLocked(at position: Int) {
        guard position < values.count else { return }
        materializePlainCells()
        if cells == nil { cells = Self.emptyCells(count: values.count) }
        cells![position].modified = true
    }

    /// Clears the modified flags (after a successful save or update); returns which were set.
    @discardableResult
    func clearModified() -> ModifiedSet {
        lock.withLock { _ in clearModifiedLocked() }
    }

    /// `clearModified`, with the lock held.
    private func clearModifiedLocked() -> ModifiedSet {
        var set = ModifiedSet(layout: layout)
        guard cells != nil else {
            if plainCells.modified {
                // The run's columns below 64 as one mask (a bit at a time cost 10 instructions a column).
                let lower = Int(plainCells.lower), upper = Int(plainCells.upper)
                let inBits = Swift.min(upper, 64)
                if lower < inBits {
                    let below: UInt64 = inBits == 64 ? ~0 : (1 << UInt64(inBits)) &- 1
                    set.bits |= below & ~((1 << UInt64(lower)) &- 1)
                }
                for i in Swift.max(lower, 64) ..< Swift.max(upper, 64) { set.more.append(i) }
                plainCells.modified = false
            }
            return set
        }
        cells!.withUnsafeMutableBufferPointer { cells in
            for i in cells.indices where cells[i].modified {
                if i < 64 { set.bits |= 1 << UInt64(i) } else { set.more.append(i) }
                cells[i].modified = false
            }
        }
        return set
    }

    /// Overwrites the stored values in place and forgets converted values (see `Db.eachRecord`).
    /// The caller guarantees that no one else references this record (`isKnownUniquelyReferenced`),
    /// so no other thread can be reading it: no lock is taken.
    @inline(__always)
    func reload(layout newLayout: RowLayout, count: Int, _ value: (Int) -> DatabaseValue) {
        // Dropping the written copy first leaves the base's storage unshared: it is overwritten
        // in place. (The flags go too: the record is a fetched one again, its base read without the lock.)
        if extras != nil { extras = nil }
        if cells != nil { cells = nil }
        if !plainCells.isEmpty { plainCells = PlainCells() }
        baseValues.overwrite(count: count, value)
        if baseLayout !== newLayout { baseLayout = newLayout }
        if flags.load(ordering: .relaxed) != 0 { flags.store(0, ordering: .relaxed) }
    }

    /// Keeps the bytes of the reloaded values' non-UTF-8 TEXT (after `reload`, same caller guarantee).
    func reloaded(invalidTexts: [Int: Data]) {
        baseValues.setInvalidTexts(invalidTexts)
    }

    /// The registry typed reads use.
    var registry: Converters { lock.withLock { _ in layout.registry } }
}

extension Record {
    /// True for a value of a common type, which is not an Optional: no dynamic cast needed
    /// (`as? any OptionalProtocol` looks the conformance up in the runtime's tables).
    @inline(__always)
    static func isPlainValue(_ value: Any) -> Bool {
        let type = ObjectIdentifier(Swift.type(of: value))
        return type == ObjectIdentifier(Int.self) || type == ObjectIdentifier(String.self)
            || type == ObjectIdentifier(Double.self) || type == ObjectIdentifier(Int64.self)
            || type == ObjectIdentifier(Bool.self) || type == ObjectIdentifier(Date.self)
            || type == ObjectIdentifier(Data.self)
    }
}

/// Lets this module see through an `Optional` it only has as `Any` or as a metatype: the value
/// it wraps (`Record.set` keeps that) and the type it wraps (a model's schema declares that).
/// (DicRecordConverters has its own, `OptionalMarker`: a module's internal protocol is its own.)
protocol OptionalProtocol {
    var unwrapped: Any? { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    var unwrapped: Any? { self.flatMap { ($0 as? any OptionalProtocol)?.unwrapped ?? $0 } }
    static var wrappedType: Any.Type { Wrapped.self }
}

/// Which columns of a record an INSERT writes: its layout's, without a key column whose value is
/// NULL (the database generates it). Rows of one shape share one INSERT statement.
struct InsertShape: Sendable {
    let layout: RowLayout
    /// The position in `layout` of the key column, if it is one (NULL or not).
    let keyPosition: Int?
    /// The position in `layout` of the key column left out, if any.
    let omitted: Int?
    /// True when the key is not supplied (left out, or not a column at all).
    let keyIsMissing: Bool

    /// The names of the columns written.
    var names: [String] {
        guard let omitted else { return layout.names }
        var names = layout.names
        names.remove(at: omitted)
        return names
    }

    /// Whether `other` inserts the same columns (one INSERT statement serves both). Records
    /// built alike share their layout, so this rarely compares names.
    func hasColumns(of other: InsertShape) -> Bool {
        (layout === other.layout && omitted == other.omitted) || RowLayout.sameSpelling(names, other.names)
    }
}

/// A record's columns for an INSERT, read under one lock: its shape and its stored values,
/// viewed, not copied (a later write to the record copies them first, as any write to shared
/// values does).
struct InsertRow: Sendable {
    let shape: InsertShape
    /// Every stored value of the record, the omitted key's included.
    let stored: RowValues

    var layout: RowLayout { shape.layout }
    var omitted: Int? { shape.omitted }
    var keyIsMissing: Bool { shape.keyIsMissing }
    var names: [String] { shape.names }

    /// How many values the INSERT binds.
    var count: Int { stored.count - (shape.omitted == nil ? 0 : 1) }

    /// The value bound at `index` (0-based): the stored values, the omitted key skipped.
    @inline(__always)
    func value(at index: Int) -> DatabaseValue {
        guard let omitted = shape.omitted, index >= omitted else { return stored[index] }
        return stored[index + 1]
    }

    /// The values bound, as an array (for an engine that takes one).
    var values: [DatabaseValue] { (0..<count).map(value(at:)) }

    /// The values bound with their columns and the bytes of TEXT that is not UTF-8 (for an engine
    /// that takes an array).
    var storedValues: StoredValues { StoredValues(values: values, columns: names, rawTexts: rawTexts) }

    /// The stored bytes of the bound TEXT values that are not UTF-8, by parameter (0-based): bound
    /// in place of their values (which hold U+FFFD replacements), so a copy writes what was read.
    /// Nil when there is none.
    var rawTexts: [Int: Data]? {
        guard let stored = stored.invalidTexts else { return nil }
        var bound: [Int: Data] = [:]
        for (position, bytes) in stored where position != shape.omitted {
            bound[shape.omitted.map { position > $0 ? position - 1 : position } ?? position] = bytes
        }
        return bound.isEmpty ? nil : bound
    }

    /// `body` given the values bound, read in place: the record's own array as two runs, before
    /// and after the omitted key (the second empty when none is omitted). Nil, without calling
    /// `body`, when the values are a fetch's block: bind them by position with `value(at:)`.
    @inline(__always)
    func withBoundValues<R>(_ body: (UnsafeBufferPointer<DatabaseValue>, UnsafeBufferPointer<DatabaseValue>) throws -> R) rethrows -> R? {
        try stored.withContiguousValues { all in
            // `omitted` is a position in the record's layout, which has one name a value.
            guard let omitted = shape.omitted else { return try body(all, UnsafeBufferPointer(rebasing: all[all.count...])) }
            return try body(UnsafeBufferPointer(rebasing: all[..<omitted]), UnsafeBufferPointer(rebasing: all[(omitted + 1)...]))
        }
    }
}
