/// The columns of a result set: names in SELECT order and a case-insensitive index. One layout
/// is shared by every record a statement produces, so a row costs its values and nothing more.
@usableFromInline
final class RowLayout: Sendable {
    let names: [String]
    /// Lowercased name to the leftmost column of that name.
    private let index: [String: Int]
    /// The converters typed reads use: the context's registry for fetched rows.
    let registry: Converters
    /// True when two columns share a name in some spelling (`select a.id, b.id`).
    private let hasDuplicates: Bool

    init(names: [String], registry: Converters) {
        self.names = names
        self.registry = registry
        var index: [String: Int] = [:]
        for (i, name) in names.enumerated() where index[name.lowercased()] == nil {
            index[name.lowercased()] = i
        }
        self.index = index
        hasDuplicates = index.count < names.count
    }

    /// The position of `name`, compared case-insensitively as SQLite does; the leftmost wins.
    @usableFromInline
    func position(of name: String) -> Int? {
        // Callers usually spell the name as the SELECT did: an exact scan avoids lowercasing.
        // With duplicate names an exact match may not be the leftmost one, so only the index serves.
        if names.count <= 16 && !hasDuplicates {
            for i in names.indices where names[i] == name { return i }
        }
        return index[name.lowercased()]
    }

    func appending(_ name: String) -> RowLayout {
        RowLayout(names: names + [name], registry: registry)
    }

    func removing(at positions: Set<Int>) -> RowLayout {
        RowLayout(names: names.enumerated().filter { !positions.contains($0.offset) }.map(\.element), registry: registry)
    }
}
