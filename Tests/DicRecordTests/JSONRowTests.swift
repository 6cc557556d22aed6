import Foundation
import Testing
import DicRecord

/// `JSONRow.rows(json:)`: a JSON array of objects read as stored values, exactly (the `dicrecord`
/// tool's `import` reads through it; its round trip with `export` is in CLITests).
@Suite("JSONRowTests")
struct JSONRowTests {
    private func rows(_ text: String) throws -> [JSONRow] {
        try JSONRow.rows(json: Data(text.utf8))
    }

    private func values(_ text: String) throws -> [DatabaseValue] {
        try rows("[{\"v\": \(text)}]")[0].values
    }

    @Test func integersStayIntegersAndEveryOtherNumberIsReal() throws {
        #expect(try values("1") == [.integer(1)])
        #expect(try values("1.0") == [.real(1)])
        #expect(try values("1e2") == [.real(100)])
        #expect(try values("-0") == [.integer(0)])
        #expect(try values("9223372036854775807") == [.integer(.max)])
        #expect(try values("-9223372036854775808") == [.integer(.min)])
        // Past 64 bits: REAL, as SQLite reads such a literal.
        #expect(try values("9223372036854775808") == [.real(9223372036854775808)])
        // sqlite3 -json writes infinities as ±1e999.
        #expect(try values("1e999") == [.real(.infinity)])
        #expect(try values("-1e999") == [.real(-.infinity)])
        guard case .real(let negativeZero) = try values("-0.0")[0] else { Issue.record("-0.0 is not REAL"); return }
        #expect(negativeZero == 0 && negativeZero.sign == .minus)
    }

    /// What Swift's description of a double writes reads back as the same bits.
    @Test(arguments: [0.1, 1e-7, 1e300, -0.25, .leastNonzeroMagnitude, .pi, 1.7976931348623157e308, 123456789.123456789])
    func realsReadBackAsTheSameDouble(_ real: Double) throws {
        guard case .real(let read) = try values("\(real)")[0] else { Issue.record("\(real) is not REAL"); return }
        #expect(read.bitPattern == real.bitPattern)
    }

    @Test func membersKeepFileOrderRepeatsAndTheirStoredForm() throws {
        let text = #"[{"z": "张三", "a": true, "m": false, "n": null, "a": "\ud83d\ude00\u00e9\n", "o": {"k": [1, 2]}, "l": [1, "x"]}]"#
        let row = try #require(try rows(text).first)
        #expect(row.columns == ["z", "a", "m", "n", "a", "o", "l"])
        #expect(row.values == [.text("张三"), .integer(1), .integer(0), .null, .text("😀é\n"), .text(#"{"k": [1, 2]}"#), .text(#"[1, "x"]"#)])
    }

    @Test func aBase64ObjectIsABlobAndAnyOtherObjectItsText() throws {
        #expect(try values(#"{"base64": "AQI="}"#) == [.blob(Data([1, 2]))])
        #expect(try values(#"{ "base64" : "" }"#) == [.blob(Data())])
        #expect(try values(#"{"base64": "AQI=", "more": 1}"#) == [.text(#"{"base64": "AQI=", "more": 1}"#)])
        #expect(try values(#"{"base64": 1}"#) == [.text(#"{"base64": 1}"#)])
        // A string that looks like one is text.
        #expect(try values(#""{\"base64\": \"AQI=\"}""#) == [.text(#"{"base64": "AQI="}"#)])
        let error = try #require(throws: DicRecordError.self) { try values(#"{"base64": "not base64!"}"#) }
        #expect(error.kind == .invalidJSON && error.message.contains("invalid base64"))
    }

    @Test func rowsKnowTheLineTheyStartOnAndAByteOrderMarkIsSkipped() throws {
        let read = try JSONRow.rows(json: Data([0xEF, 0xBB, 0xBF]) + Data("[{\"a\": 1},\n{\"a\": \"x\\ny\"}, {},\n\n  {\"b\": 2}]".utf8))
        #expect(read.map(\.line) == [1, 2, 2, 4])
        #expect(read[2].columns.isEmpty && read[2].values.isEmpty)
        #expect(try rows(" [ ] ").isEmpty)
    }

    @Test(arguments: [
        ("", "byte 0: expected an array of objects"),
        (#"{"a": 1}"#, "array of objects"),
        ("[1]", "each element of the array must be an object"),
        (#"[{"a": 1}] []"#, "unexpected text after the array"),
        (#"[{"a": 1} {"a": 2}]"#, "expected ',' or ']' after an object"),
        ("[{\"a\": 1},\n{\"a\": 2,\n", "line 3 (byte 20): expected a member name in quotes"),
        ("[{\"a\": 1},\n{\"a\": 01}]", "line 2 (byte 17): expected a number"),
        (#"[{"a": "\ud800"}]"#, "lone surrogate"),
        (#"[{a: 1}]"#, "expected a member name in quotes"),
        (#"[{"a": tru}]"#, "unknown literal"),
    ])
    func malformedJSONThrowsNamingWhereReadingStopped(_ text: String, _ message: String) throws {
        let error = try #require(throws: DicRecordError.self) { try rows(text) }
        #expect(error.kind == .invalidJSON)
        #expect(error.message.contains(message), "\(error.message)")
    }

    /// The same parser reads one object for `Record(json:)`, with that initializer's own rules:
    /// infinities throw (`toJSON` could not write them) and objects stay JSON text.
    @Test func recordJSONKeepsItsOwnRules() throws {
        let error = try #require(throws: DicRecordError.self) { try Record(json: #"{"v": 1e999}"#) }
        #expect(error.kind == .invalidJSON)
        let record = try Record(json: #"{"v": {"base64": "AQI="}}"#)
        #expect(try record.get("v", as: DatabaseValue.self) == .text(#"{"base64": "AQI="}"#))
    }

    /// Truncated and mutated texts: rows or `.invalidJSON`, never a crash; nesting stays bounded.
    @Test func generatedTextsReadOrThrow() throws {
        let sample = Array(#"[{"a": 1, "b": -0.5e-3, "c": "\u00e9\ud83c\udf89", "d": {"base64": "AQI="}, "e": [true, {"f": null}]}]"#.utf8)
        let alphabet = Array("{}[]\",:\\u0123456789eE+-.tfnrul \n".utf8) + [0xFF, 0xEF]
        var read = 0
        for iteration in 0..<2_000 {
            var bytes = sample
            if iteration % 2 == 0 {
                bytes = Array(bytes.prefix(iteration % (bytes.count + 1)))
            } else {
                bytes[(iteration * 7919) % bytes.count] = alphabet[iteration % alphabet.count]
            }
            do {
                _ = try JSONRow.rows(json: Data(bytes))
                read += 1
            } catch let error as DicRecordError {
                #expect(error.kind == .invalidJSON, "\(String(decoding: bytes, as: UTF8.self).debugDescription)")
            }
        }
        #expect(read > 100)
        let deep = "[{\"a\": " + String(repeating: "[", count: 200_000) + String(repeating: "]", count: 200_000) + "}]"
        #expect(throws: DicRecordError.self) { try rows(deep) }
    }
}
