import ArgumentParser
import DicRecord
import Foundation

/// A runtime failure: reported on stderr, exit code 1.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Runs a command's body; any error it throws is printed on stderr and the process exits 1.
/// ArgumentParser's own errors (usage, 64) never reach here: they are thrown before `run()`.
/// `sql` is the statement the user typed and `sent` what of it the tool ran (a part of it), for
/// pointing at SQLite's error position.
func reportingErrors(sql: String? = nil, sent: String? = nil, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let exit as ExitCode {
        throw exit
    } catch {
        Terminal.standardError.write("Error: \(ErrorText.describe(error, userSQL: sql, sent: sent))\n")
        throw ExitCode.failure
    }
}

/// Turns library errors into what a command-line user needs: SQLite's message and, for SQL the
/// user typed, where SQLite says the error is.
enum ErrorText {
    static func describe(_ error: any Error, userSQL: String?, sent: String? = nil) -> String {
        switch error {
        case let error as DatabaseError:
            return describe(error, userSQL: userSQL, sent: sent ?? userSQL)
        case let error as DicRecordError:
            if let databaseError = error.databaseError { return describe(databaseError, userSQL: userSQL, sent: sent ?? userSQL) }
            return error.message
        case let error as ToolError:
            return error.description
        default:
            return String(describing: error)
        }
    }

    private static func describe(_ error: DatabaseError, userSQL: String?, sent: String?) -> String {
        var text = error.message
        if let position = error.batchPosition { text += " (\(position))" }
        guard let userSQL, let sent, let sentOffset = offset(of: error, in: sent) else { return text }
        // `sent` is part of what the user typed (leading comments, a trailing semicolon dropped).
        guard let start = Array(userSQL.utf8).firstRange(of: Array(sent.utf8))?.lowerBound else { return text }
        let offset = start + sentOffset
        // Show the line SQLite blames with a caret under the offending spot.
        let bytes = Array(userSQL.utf8)
        let lineStart = bytes[..<offset].lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let lineEnd = bytes[offset...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
        let line = String(decoding: bytes[lineStart..<lineEnd], as: UTF8.self)
        let before = String(decoding: bytes[lineStart..<offset], as: UTF8.self)
        let lineNumber = bytes[..<lineStart].filter { $0 == UInt8(ascii: "\n") }.count + 1
        let column = before.count + 1
        text += " (line \(lineNumber), column \(column))\n  \(TextCell.printable(line))\n  "
            + String(repeating: " ", count: DisplayWidth.of(TextCell.printable(before))) + "^"
        return text
    }

    /// SQLite's error offset, relative to `sent` (the tool may have wrapped it in more SQL).
    private static func offset(of error: DatabaseError, in sent: String) -> Int? {
        guard let offset = error.errorOffset, let sql = error.sql else { return nil }
        let needle = Array(sent.utf8)
        guard !needle.isEmpty, let start = Array(sql.utf8).firstRange(of: needle)?.lowerBound else { return nil }
        let relative = offset - start
        return (0...needle.count).contains(relative) ? relative : nil
    }
}
