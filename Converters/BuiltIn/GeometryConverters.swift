import Foundation

/// Edge insets (top, left, bottom, right), stored like the geometry types: a BLOB of four Float64.
public struct EdgeInsets: Sendable, Hashable {
    public var top: Double
    public var left: Double
    public var bottom: Double
    public var right: Double

    public init(top: Double, left: Double, bottom: Double, right: Double) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }
}

/// A geometry value as a portable BLOB: its fields in declaration order, each a little-endian
/// Float64 (Int64 for NSRange). Never NSKeyedArchiver.
public struct PackedConverter<Value>: TypeConverter {
    let fieldCount: Int
    let integerFields: Bool
    let pack: @Sendable (Value) -> [Double]
    let unpack: @Sendable ([Double]) -> Value

    public var storageType: StorageType { .blob }

    public func encode(_ value: Value) throws -> DatabaseValue {
        var data = Data(capacity: fieldCount * 8)
        for field in pack(value) {
            let bits = integerFields ? UInt64(bitPattern: Int64(field)) : field.bitPattern
            withUnsafeBytes(of: bits.littleEndian) { data.append(contentsOf: $0) }
        }
        return .blob(data)
    }

    public func decode(_ value: DatabaseValue) throws -> Value {
        guard case .blob(let data) = value, data.count == fieldCount * 8 else {
            throw ConversionError.cannotDecode(value, to: Value.self, "expected a BLOB of \(fieldCount * 8) bytes")
        }
        let bytes = [UInt8](data)
        var fields: [Double] = []
        fields.reserveCapacity(fieldCount)
        for i in 0..<fieldCount {
            var bits: UInt64 = 0
            for j in (0..<8).reversed() { bits = bits << 8 | UInt64(bytes[i * 8 + j]) }
            fields.append(integerFields ? Double(Int64(bitPattern: bits)) : Double(bitPattern: bits))
        }
        return unpack(fields)
    }
}

extension PackedConverter where Value == CGPoint {
    public init() {
        self.init(fieldCount: 2, integerFields: false, pack: { [Double($0.x), Double($0.y)] },
                  unpack: { CGPoint(x: $0[0], y: $0[1]) })
    }
}

extension PackedConverter where Value == CGSize {
    public init() {
        self.init(fieldCount: 2, integerFields: false, pack: { [Double($0.width), Double($0.height)] },
                  unpack: { CGSize(width: $0[0], height: $0[1]) })
    }
}

extension PackedConverter where Value == CGRect {
    public init() {
        self.init(fieldCount: 4, integerFields: false,
                  pack: { [Double($0.origin.x), Double($0.origin.y), Double($0.size.width), Double($0.size.height)] },
                  unpack: { CGRect(x: $0[0], y: $0[1], width: $0[2], height: $0[3]) })
    }
}

extension PackedConverter where Value == EdgeInsets {
    public init() {
        self.init(fieldCount: 4, integerFields: false, pack: { [$0.top, $0.left, $0.bottom, $0.right] },
                  unpack: { EdgeInsets(top: $0[0], left: $0[1], bottom: $0[2], right: $0[3]) })
    }
}

#if canImport(CoreGraphics)
import CoreGraphics

extension PackedConverter where Value == CGVector {
    public init() {
        self.init(fieldCount: 2, integerFields: false, pack: { [Double($0.dx), Double($0.dy)] },
                  unpack: { CGVector(dx: $0[0], dy: $0[1]) })
    }
}

extension PackedConverter where Value == CGAffineTransform {
    public init() {
        self.init(fieldCount: 6, integerFields: false,
                  pack: { [Double($0.a), Double($0.b), Double($0.c), Double($0.d), Double($0.tx), Double($0.ty)] },
                  unpack: { CGAffineTransform(a: $0[0], b: $0[1], c: $0[2], d: $0[3], tx: $0[4], ty: $0[5]) })
    }
}
#endif

/// NSRange as a BLOB of two little-endian Int64 (location, length).
public struct NSRangeConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .blob }

    public func encode(_ value: NSRange) throws -> DatabaseValue {
        var data = Data(capacity: 16)
        for field in [Int64(value.location), Int64(value.length)] {
            withUnsafeBytes(of: field.littleEndian) { data.append(contentsOf: $0) }
        }
        return .blob(data)
    }

    public func decode(_ value: DatabaseValue) throws -> NSRange {
        guard case .blob(let data) = value, data.count == 16 else {
            throw ConversionError.cannotDecode(value, to: NSRange.self, "expected a BLOB of 16 bytes")
        }
        let bytes = [UInt8](data)
        func field(_ i: Int) -> Int64 {
            var bits: UInt64 = 0
            for j in (0..<8).reversed() { bits = bits << 8 | UInt64(bytes[i * 8 + j]) }
            return Int64(bitPattern: bits)
        }
        guard let location = Int(exactly: field(0)), let length = Int(exactly: field(1)) else {
            throw ConversionError.cannotDecode(value, to: NSRange.self, "out of range")
        }
        return NSRange(location: location, length: length)
    }
}
