// SQLite: the SQLite connection as the engine seam sees it (Engine/Engine.swift).
import Foundation

extension Connection: EngineConnection {
    /// The outermost BEGIN: IMMEDIATE takes the write lock at once, so a transaction never fails
    /// half-way for want of it.
    package var beginStatement: String { "BEGIN IMMEDIATE" }

    @discardableResult
    package func execute(_ sql: String, _ arguments: EncodedArguments,
                         row: ((_ columns: [String], _ values: [DatabaseValue]) throws -> Bool)?) throws -> (columns: [String], changes: Int) {
        let bound: Arguments = switch arguments {
        case .positional(let values): .values(values)
        case .named(let values): .named(values.mapValues { $0 as DatabaseArgument })
        }
        guard let row else { return ([], try run(sql, bound)) }
        return try withStatement(sql, bound) { statement in
            let columns = statement.columnNames()
            while try step(statement, bound) {
                guard try row(columns, (0..<statement.columnCount).map { statement.value(at: $0) }) else { break }
            }
            return (columns, 0)
        }
    }

    package func executeRollback(_ sql: String) throws {
        try runRollback(sql)
    }
}
