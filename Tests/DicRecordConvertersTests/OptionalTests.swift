import Testing
import Foundation
@testable import DicRecordConverters

@Suite("Optional values and DatabaseValue pass-through")
struct OptionalTests {
    @Test("NULL decodes to nil for any optional type")
    func nullIsNil() throws {
        #expect(try Converters.shared.decode(.null, as: Int?.self) == nil)
        #expect(try Converters.shared.decode(.null, as: String?.self) == nil)
        #expect(try Converters.shared.decode(.null, as: Date?.self) == nil)
        #expect(try Converters.shared.decode(.null, as: Data?.self) == nil)
        #expect(try Converters.shared.decode(.null, as: Color?.self) == nil)
        #expect(try Converters.shared.decode(.null, as: CGPoint?.self) == nil)
    }

    @Test("a non-NULL value decodes to the wrapped value")
    func someDecodes() throws {
        #expect(try Converters.shared.decode(.integer(5), as: Int?.self) == 5)
        #expect(try Converters.shared.decode(.text("x"), as: String?.self) == "x")
        #expect(try Converters.shared.decode(.integer(0xFF10_2030), as: Color?.self) == Color(red: 16, green: 32, blue: 48))
        #expect(try Converters.shared.decode(.real(1.5), as: Date?.self) == Date(timeIntervalSince1970: 1.5))
        #expect(try Converters.shared.decode(.integer(5), as: Int??.self) == .some(.some(5)))
    }

    @Test("a bad non-NULL value still throws for an optional type, it does not become nil")
    func badValueThrows() {
        expectConversionError(.notConvertible, naming: UInt8.self) { try Converters.shared.decode(.integer(300), as: UInt8?.self) }
        expectConversionError(.notConvertible, naming: Int.self) { try Converters.shared.decode(.text("abc"), as: Int?.self) }
        expectConversionError(.notConvertible, naming: Date.self) { try Converters.shared.decode(.text("abc"), as: Date?.self) }
    }

    @Test("nil encodes to NULL; a wrapped value encodes as the value")
    func encodeOptional() throws {
        #expect(try Converters.shared.encode(Optional<Int>.none) == .null)
        #expect(try Converters.shared.encode(Optional(5)) == .integer(5))
        #expect(try Converters.shared.encode(Optional<Date>.none) == .null)
        #expect(try Converters.shared.encode(Optional(Int8(-3))) == .integer(-3))
        #expect(try Converters.shared.encode(Optional(Color(red: 16, green: 32, blue: 48, alpha: 0))) == .integer(0x0010_2030))
        #expect(try Converters.shared.encode(nil) == .null)
    }

    @Test("optionals hidden inside Any encode by their wrapped value")
    func encodeBoxedOptional() throws {
        let none = Optional<Int>.none as Any
        let some = Optional(5) as Any
        let nested = Optional(Optional(UInt16(7))) as Any
        let nestedNone = Optional<Optional<String>>.some(nil) as Any
        #expect(try Converters.shared.encode(none) == .null)
        #expect(try Converters.shared.encode(some) == .integer(5))
        #expect(try Converters.shared.encode(nested) == .integer(7))
        #expect(try Converters.shared.encode(nestedNone) == .null)
    }

    @Test("an optional type has its wrapped type's storage")
    func optionalStorageType() {
        #expect(Converters.shared.storageType(for: Int?.self) == .integer)
        #expect(Converters.shared.storageType(for: Date?.self) == .real)
        #expect(Converters.shared.storageType(for: String?.self) == .text)
        #expect(Converters.shared.storageType(for: Data??.self) == .blob)
    }

    @Test("a DatabaseValue passes through encode and decode unchanged",
          arguments: [DatabaseValue.null, .integer(-1), .real(2.5), .text("a\u{0}b"), .blob(Data([0, 1, 2]))])
    func passThrough(value: DatabaseValue) throws {
        #expect(try Converters.shared.encode(value) == value)
        #expect(try Converters.shared.decode(value, as: DatabaseValue.self) == value)
        #expect(try Converters.shared.encode(Optional(value)) == value)
    }
}
