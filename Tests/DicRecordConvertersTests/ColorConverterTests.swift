import Testing
import Foundation
@testable import DicRecordConverters

@Suite("Color converter")
struct ColorConverterTests {
    @Test("Color stores as INTEGER a<<24 + r<<16 + g<<8 + b",
          arguments: [([16, 32, 48, 255], Int64(0xFF10_2030)), ([16, 32, 48, 0], 0x0010_2030), ([255, 0, 0, 255], 0xFFFF_0000),
                      ([0, 0, 0, 0], 0), ([255, 255, 255, 255], 0xFFFF_FFFF), ([1, 2, 3, 128], 0x8001_0203)] as [([UInt8], Int64)])
    func argbLayout(rgba: [UInt8], argb: Int64) throws {
        let color = Color(red: rgba[0], green: rgba[1], blue: rgba[2], alpha: rgba[3])
        #expect(ColorConverter().storageType == .integer)
        #expect(Converters.shared.storageType(for: Color.self) == .integer)
        try expectStored(color, as: .integer(argb))
        try expectConverter(ColorConverter(), stores: color, as: .integer(argb))
        #expect(Int64(color.argb) == argb)
        #expect(Color(argb: UInt32(argb)) == color)
    }

    @Test("(16, 32, 48, 255) is 0xFF102030 = 4279246896; alpha defaults to 255")
    func worked() throws {
        #expect(try Converters.shared.encode(Color(red: 16, green: 32, blue: 48, alpha: 255)) == .integer(4_279_246_896))
        #expect(try Converters.shared.encode(Color(red: 16, green: 32, blue: 48)) == .integer(4_279_246_896))
        #expect(try Converters.shared.encode(Color(red: 16, green: 32, blue: 48, alpha: 0)) == .integer(1_056_816))
        let decoded = try Converters.shared.decode(.integer(4_279_246_896), as: Color.self)
        #expect(decoded.red == 16 && decoded.green == 32 && decoded.blue == 48 && decoded.alpha == 255)
    }

    @Test("an INTEGER outside 0...0xFFFFFFFF throws, never truncates",
          arguments: [Int64(0x1_0000_0000), -1, Int64.min, Int64.max, 0x1_FF10_2030])
    func outOfRangeThrows(raw: Int64) {
        expectConversionError(.notConvertible, naming: Color.self) { try Converters.shared.decode(.integer(raw), as: Color.self) }
        expectConversionError(.notConvertible, naming: Color.self) { try ColorConverter().decode(.integer(raw)) }
    }

    @Test("TEXT that is not a number, BLOB and NULL throw, naming Color",
          arguments: [DatabaseValue.text("red"), .text("#FF102030"), .blob(Data([0xFF, 0x10, 0x20, 0x30])), .real(1.5), .null])
    func badInputThrows(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Color.self) { try Converters.shared.decode(stored, as: Color.self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: Color.self) { try ColorConverter().decode(stored) }
        }
    }
}
