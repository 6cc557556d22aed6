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

    /// The names of a layer above that appear in `folder`'s code (doc comments and `//` comments aside).
    static func upwardNames(in folder: String, _ names: [String]) throws -> [String] {
        var found: [String] = []
        for file in swiftFiles(under: folder) {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
            for name in names {
                let pattern = try Regex("\\b\(name)\\b")
                if code.contains(where: { $0.contains(pattern) }) { found.append("\(file): \(name)") }
            }
        }
        return found
    }

    @Test func theSQLiteLayerNamesNoRecordDbOrModelType() throws {
        let found = try Self.upwardNames(in: "Sources/DicRecord/SQLite",
            ["Record", "RowLayout", "RowValues", "RollbackUndo", "ReadReporter", "Db", "DbContext", "Model", "ModelSchema"])
        #expect(found.isEmpty, "the SQLite layer names types above it: \(found)")
        // The scan does see names in code: the layer's own types are found.
        #expect(try Self.upwardNames(in: "Sources/DicRecord/SQLite", ["Connection", "Statement"]).count >= 2)
    }

    @Test func theContextNamesNoModelOrSchemaType() throws {
        let found = try Self.upwardNames(in: "Sources/DicRecord/Context",
            ["Model", "ModelSchema", "SchemaUpkeep", "Dao", "ModelDeclaration", "ColumnInfo"])
        #expect(found.isEmpty, "the context names model types: \(found)")
    }

    @Test func recordsNameNoConnection() throws {
        let found = try Self.upwardNames(in: "Sources/DicRecord/Record",
            ["Connection", "Statement", "ConnectionPool", "DbContext", "Model"])
        #expect(found.isEmpty, "records name connections: \(found)")
    }
}
