import Foundation
import Testing

/// The layers point one way (ARCHITECTURE.md): only the SQLite layer talks to SQLite's C API.
@Suite struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Every Swift file under `folder`, relative to the repository root.
    static func swiftFiles(under folder: String) -> [String] {
        let base = root.appendingPathComponent(folder)
        var found: [String] = []
        let files = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil)
        while let file = files?.nextObject() as? URL {
            guard file.pathExtension == "swift" else { continue }
            found.append(folder + "/" + file.path.dropFirst(base.path.count + 1))
        }
        return found
    }

    @Test func onlyTheSQLiteLayerImportsCSQLite() throws {
        let files = ["Sources", "Converters", "Samples"].flatMap(Self.swiftFiles(under:))
        #expect(files.count > 60)
        var importers: [String] = []
        for file in files {
            let text = try String(contentsOf: Self.root.appendingPathComponent(file), encoding: .utf8)
            let imports = text.split(separator: "\n").contains { line in
                line.trimmingCharacters(in: .whitespaces).hasPrefix("import CSQLite")
            }
            if imports { importers.append(file) }
        }
        #expect(!importers.isEmpty)
        let outside = importers.filter { !$0.hasPrefix("Sources/DicRecord/SQLite/") }
        #expect(outside.isEmpty, "CSQLite imported outside Sources/DicRecord/SQLite/: \(outside)")
    }
}
