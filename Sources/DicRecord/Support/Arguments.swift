// Support: the arguments of one statement as Db receives them, before an engine binds them.
import Foundation

/// The arguments of one statement: positional (`?`, `?NNN`) or named (`:name`, `@name`, `$name`).
enum Arguments: Sendable {
    case positional([DatabaseArgument])
    case named([String: DatabaseArgument])
    /// Values already encoded (the library's own INSERT/UPDATE): bound as they are.
    case values([DatabaseValue])

    static let none = Arguments.positional([])

    var isEmpty: Bool {
        switch self {
        case .positional(let values): values.isEmpty
        case .named(let values): values.isEmpty
        case .values(let values): values.isEmpty
        }
    }
}

extension Arguments {
    /// Every argument encoded through `registry` (for engines that take values, not Swift objects);
    /// a value without a converter throws, naming the argument.
    package func encoded(_ registry: Converters, sql: String, configName: String?) throws -> EncodedArguments {
        func encode(_ argument: DatabaseArgument, _ name: String) throws -> DatabaseValue {
            do {
                return try registry.encode(argument: argument)
            } catch let error as ConversionError {
                throw DicRecordError(.unsupportedArgument, "argument \(name): \(error)", sql: sql, configName: configName)
            }
        }
        switch self {
        case .positional(let values):
            return .positional(try values.enumerated().map { try encode($0.element, String($0.offset + 1)) })
        case .named(let values):
            var encoded: [String: DatabaseValue] = [:]
            for (key, value) in values { encoded[key] = try encode(value, key) }
            return .named(encoded)
        case .values(let values):
            return .positional(values)
        }
    }
}

/// Arguments encoded as values: what an engine other than SQLite binds.
package enum EncodedArguments: Sendable {
    case positional([DatabaseValue])
    /// By name, as given (`name` or `:name`).
    case named([String: DatabaseValue])
}
