import Testing
import Foundation
@testable import DicRecordConverters

@Suite("Bool converter")
struct BoolConverterTests {
    @Test("true/false store as INTEGER 1/0")
    func encodesZeroOne() throws {
        #expect(BoolConverter().storageType == .integer)
        #expect(Converters.shared.storageType(for: Bool.self) == .integer)
        try expectStored(true, as: .integer(1))
        try expectStored(false, as: .integer(0))
        try expectConverter(BoolConverter(), stores: true, as: .integer(1))
        try expectConverter(BoolConverter(), stores: false, as: .integer(0))
    }

    @Test("TEXT true/false/yes/no/1/0 decode in any case",
          arguments: [("true", true), ("TRUE", true), ("True", true), ("yes", true), ("YES", true), ("yEs", true), ("1", true),
                      ("false", false), ("FALSE", false), ("False", false), ("no", false), ("NO", false), ("nO", false), ("0", false)])
    func textDecodes(text: String, expected: Bool) throws {
        #expect(try Converters.shared.decode(.text(text), as: Bool.self) == expected)
        #expect(try BoolConverter().decode(.text(text)) == expected)
        #expect(try Converters.shared.decode(.text(text), as: Bool?.self) == expected)
    }

    @Test("other TEXT throws", arguments: ["maybe", "", "tru", "y", "2", "0.5", "nope", "truefalse"])
    func otherTextThrows(text: String) {
        expectConversionError(.notConvertible, naming: Bool.self) { try Converters.shared.decode(.text(text), as: Bool.self) }
        expectConversionError(.notConvertible, naming: Bool.self) { try BoolConverter().decode(.text(text)) }
    }

    @Test("BLOB and NULL throw; NULL into Bool? is nil")
    func blobAndNull() throws {
        expectConversionError(.notConvertible, naming: Bool.self) { try Converters.shared.decode(.blob(Data([1])), as: Bool.self) }
        expectConversionError(.notConvertible, naming: Bool.self) { try BoolConverter().decode(.blob(Data([1]))) }
        expectConversionError(.notConvertible, naming: Bool.self) { try Converters.shared.decode(.null, as: Bool.self) }
        #expect(try Converters.shared.decode(.null, as: Bool?.self) == nil)
    }
}
