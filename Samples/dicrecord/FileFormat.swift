import ArgumentParser

/// The file formats of `export` and `import`.
enum FileFormat: String, ExpressibleByArgument, CaseIterable {
    case json, csv

    /// The format a file name's extension names (`.json`, `.csv`, any case), if any.
    init?(fileName: String) {
        guard let dot = fileName.lastIndex(of: "."),
              let format = FileFormat(rawValue: fileName[fileName.index(after: dot)...].lowercased()) else { return nil }
        self = format
    }
}
