import Testing
import Foundation
@testable import DicRecordConverters

// Expected bytes are written by hand: each field is an IEEE 754 double (Int64 for NSRange), little-endian.
//  1.0 = 0x3FF0000000000000   2.0 = 0x4000000000000000   3.0 = 0x4008000000000000   4.0 = 0x4010000000000000
//  1.5 = 0x3FF8000000000000  -2.0 = 0xC000000000000000   0.5 = 0x3FE0000000000000  0.25 = 0x3FD0000000000000
// -1.0 = 0xBFF0000000000000 100.0 = 0x4059000000000000   0.0 = 0x0000000000000000
private let one: [UInt8] = [0, 0, 0, 0, 0, 0, 0xF0, 0x3F]
private let two: [UInt8] = [0, 0, 0, 0, 0, 0, 0x00, 0x40]
private let three: [UInt8] = [0, 0, 0, 0, 0, 0, 0x08, 0x40]
private let four: [UInt8] = [0, 0, 0, 0, 0, 0, 0x10, 0x40]
private let onePointFive: [UInt8] = [0, 0, 0, 0, 0, 0, 0xF8, 0x3F]
private let minusTwo: [UInt8] = [0, 0, 0, 0, 0, 0, 0x00, 0xC0]
private let half: [UInt8] = [0, 0, 0, 0, 0, 0, 0xE0, 0x3F]
private let quarter: [UInt8] = [0, 0, 0, 0, 0, 0, 0xD0, 0x3F]
private let minusOne: [UInt8] = [0, 0, 0, 0, 0, 0, 0xF0, 0xBF]
private let hundred: [UInt8] = [0, 0, 0, 0, 0, 0, 0x59, 0x40]
private let zero: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0]

@Suite("CGPoint, CGSize, CGRect, NSRange and EdgeInsets converters")
struct GeometryConverterTests {
    @Test("all geometry types store as BLOB")
    func storageTypes() {
        #expect(PackedConverter<CGPoint>().storageType == .blob)
        #expect(PackedConverter<CGSize>().storageType == .blob)
        #expect(PackedConverter<CGRect>().storageType == .blob)
        #expect(PackedConverter<EdgeInsets>().storageType == .blob)
        #expect(NSRangeConverter().storageType == .blob)
        for type in [CGPoint.self, CGSize.self, CGRect.self, EdgeInsets.self, NSRange.self] as [Any.Type] {
            #expect(Converters.shared.storageType(for: type) == .blob, "\(type)")
        }
    }

    // MARK: Exact bytes

    @Test("CGPoint(1.5, -2) is x then y, little-endian Float64")
    func pointBytes() throws {
        let point = CGPoint(x: 1.5, y: -2)
        let stored = DatabaseValue.blob(Data(onePointFive + minusTwo))
        try expectStored(point, as: stored)
        try expectConverter(PackedConverter<CGPoint>(), stores: point, as: stored)
    }

    @Test("CGSize(0.5, 3) is width then height")
    func sizeBytes() throws {
        let size = CGSize(width: 0.5, height: 3)
        let stored = DatabaseValue.blob(Data(half + three))
        try expectStored(size, as: stored)
        try expectConverter(PackedConverter<CGSize>(), stores: size, as: stored)
    }

    @Test("CGRect(1, 2, 3, 4) is x, y, width, height")
    func rectBytes() throws {
        let rect = CGRect(x: 1, y: 2, width: 3, height: 4)
        let stored = DatabaseValue.blob(Data(one + two + three + four))
        try expectStored(rect, as: stored)
        try expectConverter(PackedConverter<CGRect>(), stores: rect, as: stored)
    }

    @Test("EdgeInsets(-1, 0, 0.25, 100) is top, left, bottom, right")
    func insetsBytes() throws {
        let insets = EdgeInsets(top: -1, left: 0, bottom: 0.25, right: 100)
        let stored = DatabaseValue.blob(Data(minusOne + zero + quarter + hundred))
        try expectStored(insets, as: stored)
        try expectConverter(PackedConverter<EdgeInsets>(), stores: insets, as: stored)
    }

    @Test("NSRange(5, 258) is location then length, little-endian Int64")
    func rangeBytes() throws {
        let range = NSRange(location: 5, length: 258)
        let stored = DatabaseValue.blob(Data([5, 0, 0, 0, 0, 0, 0, 0, 0x02, 0x01, 0, 0, 0, 0, 0, 0]))
        try expectStored(range, as: stored)
        try expectConverter(NSRangeConverter(), stores: range, as: stored)
        // NSNotFound (Int.max) is 0x7FFFFFFFFFFFFFFF.
        let notFound = NSRange(location: NSNotFound, length: 0)
        try expectStored(notFound, as: .blob(Data([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F] + zero)))
    }

    // MARK: Round trips

    @Test("geometry values round-trip", arguments: [0.0, -0.0, Double.leastNormalMagnitude / 4, -123.456, 1e300, .greatestFiniteMagnitude, .infinity])
    func roundTrips(v: Double) throws {
        let point = CGPoint(x: v, y: -v)
        #expect(try Converters.shared.decode(try Converters.shared.encode(point), as: CGPoint.self) == point)
        let size = CGSize(width: v, height: 2 * v)
        #expect(try Converters.shared.decode(try Converters.shared.encode(size), as: CGSize.self) == size)
        let rect = CGRect(x: v, y: 1, width: -v, height: 0.5)
        let decodedRect = try Converters.shared.decode(try Converters.shared.encode(rect), as: CGRect.self)
        // CGRect == standardizes; compare the stored fields themselves.
        #expect(Double(decodedRect.origin.x).bitPattern == Double(rect.origin.x).bitPattern)
        #expect(decodedRect.origin.y == 1 && decodedRect.size.height == 0.5)
        #expect(Double(decodedRect.size.width).bitPattern == Double(rect.size.width).bitPattern)
        let insets = EdgeInsets(top: v, left: -v, bottom: 7, right: v / 3)
        #expect(try Converters.shared.decode(try Converters.shared.encode(insets), as: EdgeInsets.self) == insets)
        #expect(try PackedConverter<EdgeInsets>().decode(PackedConverter<EdgeInsets>().encode(insets)) == insets)
        let decodedPoint = try PackedConverter<CGPoint>().decode(PackedConverter<CGPoint>().encode(point))
        #expect(Double(decodedPoint.x).bitPattern == Double(point.x).bitPattern && Double(decodedPoint.y).bitPattern == Double(point.y).bitPattern)
    }

    @Test("NSRange round-trips", arguments: [(0, 0), (-5, 10), (Int.max, Int.max), (Int.min, 1)])
    func rangeRoundTrips(location: Int, length: Int) throws {
        let range = NSRange(location: location, length: length)
        #expect(try Converters.shared.decode(try Converters.shared.encode(range), as: NSRange.self) == range)
        #expect(try NSRangeConverter().decode(NSRangeConverter().encode(range)) == range)
    }

    // MARK: Bad input

    @Test("a BLOB of the wrong length throws", arguments: [0, 8, 15, 17, 24, 31, 33, 64])
    func wrongLengthThrows(count: Int) {
        let blob = DatabaseValue.blob(Data(repeating: 0x3F, count: count))
        if count != 16 {
            expectConversionError(.notConvertible, naming: CGPoint.self) { try Converters.shared.decode(blob, as: CGPoint.self) }
            expectConversionError(.notConvertible, naming: CGSize.self) { try PackedConverter<CGSize>().decode(blob) }
            expectConversionError(.notConvertible, naming: NSRange.self) { try Converters.shared.decode(blob, as: NSRange.self) }
            expectConversionError(.notConvertible, naming: NSRange.self) { try NSRangeConverter().decode(blob) }
        }
        if count != 32 {
            expectConversionError(.notConvertible, naming: CGRect.self) { try Converters.shared.decode(blob, as: CGRect.self) }
            expectConversionError(.notConvertible, naming: EdgeInsets.self) { try Converters.shared.decode(blob, as: EdgeInsets.self) }
            expectConversionError(.notConvertible, naming: EdgeInsets.self) { try PackedConverter<EdgeInsets>().decode(blob) }
        }
    }

    @Test("TEXT, INTEGER, REAL and NULL throw", arguments: [DatabaseValue.text("{1, 2}"), .integer(16), .real(1.5), .null])
    func nonBlobThrows(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: CGPoint.self) { try Converters.shared.decode(stored, as: CGPoint.self) }
        expectConversionError(.notConvertible, naming: CGSize.self) { try Converters.shared.decode(stored, as: CGSize.self) }
        expectConversionError(.notConvertible, naming: CGRect.self) { try Converters.shared.decode(stored, as: CGRect.self) }
        expectConversionError(.notConvertible, naming: EdgeInsets.self) { try Converters.shared.decode(stored, as: EdgeInsets.self) }
        expectConversionError(.notConvertible, naming: NSRange.self) { try Converters.shared.decode(stored, as: NSRange.self) }
    }
}

#if canImport(CoreGraphics)
import CoreGraphics

/// CGVector and CGAffineTransform have built-in converters only where CoreGraphics exists.
@Suite("CGVector and CGAffineTransform converters (Apple platforms)")
struct CoreGraphicsConverterTests {
    @Test("CGVector(1, 2) is dx then dy")
    func vectorBytes() throws {
        let vector = CGVector(dx: 1, dy: 2)
        let stored = DatabaseValue.blob(Data(one + two))
        #expect(try Converters.shared.encode(vector) == stored)
        let decoded = try Converters.shared.decode(stored, as: CGVector.self)
        #expect(decoded.dx == 1 && decoded.dy == 2)
        expectConversionError(.notConvertible, naming: CGVector.self) { try Converters.shared.decode(.blob(Data(one)), as: CGVector.self) }
    }

    @Test("CGAffineTransform(1, 2, 3, 4, -1, 0.5) is a, b, c, d, tx, ty")
    func transformBytes() throws {
        let transform = CGAffineTransform(a: 1, b: 2, c: 3, d: 4, tx: -1, ty: 0.5)
        let stored = DatabaseValue.blob(Data(one + two + three + four + minusOne + half))
        #expect(try Converters.shared.encode(transform) == stored)
        let decoded = try Converters.shared.decode(stored, as: CGAffineTransform.self)
        #expect([decoded.a, decoded.b, decoded.c, decoded.d, decoded.tx, decoded.ty] == [1, 2, 3, 4, -1, 0.5])
        expectConversionError(.notConvertible, naming: CGAffineTransform.self) {
            try Converters.shared.decode(.blob(Data(one + two)), as: CGAffineTransform.self)
        }
    }
}
#endif
