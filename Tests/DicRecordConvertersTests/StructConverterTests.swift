import Testing
import Foundation
@testable import DicRecordConverters

// Types private to this file, so no other test can see or register them.
private struct Profile: Codable, Equatable, Sendable {
    var name: String
    var age: Int
    var tags: [String]
    var scores: [String: Int]
}

private enum Level: Int, Sendable {
    case low = 1
    case high = 3
}

private enum Mood: String, Sendable {
    case happy
    case sad = "SAD"
}

private enum Tiny: UInt8, Sendable {
    case small = 1
    case big = 255
}

@Suite("CodableConverter and RawValueConverter")
struct StructConverterTests {
    // MARK: Codable

    private let sampleProfile = Profile(name: "Ann", age: 30, tags: ["x", "y"], scores: ["math": 9, "art": 7])

    @Test("a dictionary stores as JSON TEXT with sorted keys")
    func dictionaryAsSortedJSON() throws {
        let converter = CodableConverter<[String: [Int]]>()
        #expect(converter.storageType == .text)
        let value: [String: [Int]] = ["b": [2, 3], "a": [1], "c": []]
        let stored = DatabaseValue.text(#"{"a":[1],"b":[2,3],"c":[]}"#)
        try expectConverter(converter, stores: value, as: stored)
        #expect(try converter.encode([:]) == .text("{}"))

        let registry = Converters(parent: .shared)
        registry.register(converter)
        try expectStored(value, as: stored, in: registry)
        #expect(registry.storageType(for: [String: [Int]].self) == .text)
    }

    @Test("a struct stores as JSON TEXT with sorted keys, nested keys sorted too")
    func structAsSortedJSON() throws {
        let converter = CodableConverter<Profile>()
        let stored = DatabaseValue.text(#"{"age":30,"name":"Ann","scores":{"art":7,"math":9},"tags":["x","y"]}"#)
        try expectConverter(converter, stores: sampleProfile, as: stored)
        // Equal values always store equal text.
        var reordered = Profile(name: "Ann", age: 30, tags: ["x", "y"], scores: [:])
        reordered.scores["math"] = 9
        reordered.scores["art"] = 7
        #expect(try converter.encode(reordered) == stored)
        // Key order in stored JSON does not matter for decoding.
        #expect(try converter.decode(.text(#"{"tags":["x","y"],"scores":{"math":9,"art":7},"name":"Ann","age":30}"#)) == sampleProfile)

        let registry = Converters(parent: .shared)
        registry.register(converter)
        try expectStored(sampleProfile, as: stored, in: registry)
        #expect(try registry.decode(.null, as: Profile?.self) == nil)
        #expect(try registry.encode(Optional<Profile>.none) == .null)
    }

    @Test("invalid JSON or JSON of the wrong shape throws",
          arguments: ["{", "not json", "", "[1,2]", #"{"a":["x"]}"#, #"{"a":1}"#, "null"])
    func invalidDictionaryJSON(text: String) {
        expectConversionError(.notConvertible, naming: [String: [Int]].self) {
            try CodableConverter<[String: [Int]]>().decode(.text(text))
        }
    }

    @Test("invalid JSON for a struct throws, naming the struct",
          arguments: [DatabaseValue.text("{"), .text(#"{"name":"Ann"}"#), .text(#"{"age":"thirty","name":"Ann","scores":{},"tags":[]}"#),
                      .integer(5), .real(1.5)])
    func invalidStructJSON(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Profile.self) { try CodableConverter<Profile>().decode(stored) }
        let registry = Converters(parent: .shared)
        registry.register(CodableConverter<Profile>())
        expectConversionError(.notConvertible, naming: Profile.self) { try registry.decode(stored, as: Profile.self) }
    }

    // MARK: RawRepresentable

    @Test("an Int enum stores as its INTEGER raw value")
    func intEnum() throws {
        let converter = RawValueConverter<Level>()
        #expect(converter.storageType == .integer)
        try expectConverter(converter, stores: Level.low, as: .integer(1))
        try expectConverter(converter, stores: Level.high, as: .integer(3))
        // The raw value decodes leniently, like the Int it is.
        #expect(try converter.decode(.text("3")) == .high)
        #expect(try converter.decode(.real(1.0)) == .low)

        let registry = Converters(parent: .shared)
        registry.register(converter)
        #expect(registry.storageType(for: Level.self) == .integer)
        try expectStored(Level.high, as: .integer(3), in: registry)
        #expect(try registry.decode(.null, as: Level?.self) == nil)
    }

    @Test("a String enum stores as its TEXT raw value")
    func stringEnum() throws {
        let converter = RawValueConverter<Mood>()
        #expect(converter.storageType == .text)
        try expectConverter(converter, stores: Mood.happy, as: .text("happy"))
        try expectConverter(converter, stores: Mood.sad, as: .text("SAD"))

        let registry = Converters(parent: .shared)
        registry.register(converter)
        try expectStored(Mood.sad, as: .text("SAD"), in: registry)
    }

    @Test("an unknown raw value throws, naming the enum",
          arguments: [DatabaseValue.integer(2), .integer(0), .integer(-1), .integer(Int64.max)])
    func unknownIntRawValue(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Level.self) { try RawValueConverter<Level>().decode(stored) }
    }

    @Test("an unknown String raw value throws (raw values are case-sensitive)", arguments: ["sad", "Happy", "", "angry"])
    func unknownStringRawValue(text: String) {
        expectConversionError(.notConvertible, naming: Mood.self) { try RawValueConverter<Mood>().decode(.text(text)) }
        let registry = Converters(parent: .shared)
        registry.register(RawValueConverter<Mood>())
        expectConversionError(.notConvertible, naming: Mood.self) { try registry.decode(.text(text), as: Mood.self) }
    }

    @Test("a stored value that is not even a raw value throws, naming the enum",
          arguments: [DatabaseValue.text("abc"), .blob(Data([1])), .real(1.5), .integer(256)])
    func notARawValue(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Level.self) { try RawValueConverter<Level>().decode(stored) }
        expectConversionError(.notConvertible, naming: Tiny.self) { try RawValueConverter<Tiny>().decode(stored) }
    }

    @Test("a UInt8 enum stores as INTEGER")
    func uint8Enum() throws {
        #expect(RawValueConverter<Tiny>().storageType == .integer)
        try expectConverter(RawValueConverter<Tiny>(), stores: Tiny.big, as: .integer(255))
        try expectConverter(RawValueConverter<Tiny>(), stores: Tiny.small, as: .integer(1))
    }
}
