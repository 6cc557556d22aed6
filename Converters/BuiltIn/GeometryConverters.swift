import Foundation

/// Edge insets (top, left, bottom, right), stored like the geometry types: a BLOB of four Float64.
/// ```swift
/// try Db.update("update view set padding = ? where id = ?", EdgeInsets(top: 8, left: 16, bottom: 8, right: 16), 1)   // a 32-byte BLOB
/// ```
public struct EdgeInsets: Sendable, Hashable {
    /// The inset from the top edge.
    /// ```swift
    /// EdgeInsets(top: 8, left: 16, bottom: 4, right: 2).top      // 8.0
    /// ```
    public var top: Double
    /// The inset from the left edge.
    /// ```swift
    /// EdgeInsets(top: 8, left: 16, bottom: 4, right: 2).left     // 16.0
    /// ```
    public var left: Double
    /// The inset from the bottom edge.
    /// ```swift
    /// EdgeInsets(top: 8, left: 16, bottom: 4, right: 2).bottom   // 4.0
    /// ```
    public var bottom: Double
    /// The inset from the right edge.
    /// ```swift
    /// EdgeInsets(top: 8, left: 16, bottom: 4, right: 2).right    // 2.0
    /// ```
    public var right: Double

    /// Insets from the four edges, in the order they are stored.
    /// ```swift
    /// let padding = EdgeInsets(top: 8, left: 16, bottom: 8, right: 16)
    /// ```
    public init(top: Double, left: Double, bottom: Double, right: Double) {
        self.top = top
        self.left = left
        self.bottom = bottom
        self.right = right
    }
}

/// A geometry value as a portable BLOB: its fields in declaration order, each a little-endian
/// Float64 (Int64 for NSRange). Never NSKeyedArchiver.
/// ```swift
/// try Db.update("update shape set origin = ? where id = ?", CGPoint(x: 1, y: 2), 1)   // a 16-byte BLOB: 1.0, 2.0
/// ```
public struct PackedConverter<Value>: TypeConverter {
    let fieldCount: Int
    let integerFields: Bool
    let pack: @Sendable (Value) -> [Double]
    let unpack: @Sendable ([Double]) -> Value

    /// BLOB, the column type for the packed geometry types.
    /// ```swift
    /// PackedConverter<CGRect>().storageType   // .blob
    /// ```
    public var storageType: StorageType { .blob }

    /// Packs the value's fields, in declaration order, as little-endian Float64, 8 bytes each.
    /// ```swift
    /// try PackedConverter<CGSize>().encode(CGSize(width: 3, height: 4))   // .blob of 16 bytes: 3.0, 4.0
    /// ```
    public func encode(_ value: Value) throws -> DatabaseValue {
        var data = Data(capacity: fieldCount * 8)
        for field in pack(value) {
            let bits = integerFields ? UInt64(bitPattern: Int64(field)) : field.bitPattern
            withUnsafeBytes(of: bits.littleEndian) { data.append(contentsOf: $0) }
        }
        return .blob(data)
    }

    /// Reads a BLOB of exactly 8 bytes per field back into the value; any other value or size throws ``ConversionError``.
    /// ```swift
    /// try PackedConverter<CGPoint>().decode(.blob(Data(count: 16)))   // CGPoint(x: 0, y: 0)
    /// ```
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
    /// The converter for `CGPoint`: x and y, a 16-byte BLOB; registered in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(PackedConverter<CGPoint>())   // puts the built-in back after another CGPoint converter
    /// ```
    public init() {
        self.init(fieldCount: 2, integerFields: false, pack: { [Double($0.x), Double($0.y)] },
                  unpack: { CGPoint(x: $0[0], y: $0[1]) })
    }
}

extension PackedConverter where Value == CGSize {
    /// The converter for `CGSize`: width and height, a 16-byte BLOB; registered in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(PackedConverter<CGSize>())   // puts the built-in back after another CGSize converter
    /// ```
    public init() {
        self.init(fieldCount: 2, integerFields: false, pack: { [Double($0.width), Double($0.height)] },
                  unpack: { CGSize(width: $0[0], height: $0[1]) })
    }
}

extension PackedConverter where Value == CGRect {
    /// The converter for `CGRect`: origin x and y, width and height, a 32-byte BLOB; registered in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(PackedConverter<CGRect>())   // puts the built-in back after another CGRect converter
    /// ```
    public init() {
        self.init(fieldCount: 4, integerFields: false,
                  pack: { [Double($0.origin.x), Double($0.origin.y), Double($0.size.width), Double($0.size.height)] },
                  unpack: { CGRect(x: $0[0], y: $0[1], width: $0[2], height: $0[3]) })
    }
}

extension PackedConverter where Value == EdgeInsets {
    /// The converter for ``EdgeInsets``: top, left, bottom and right, a 32-byte BLOB; registered in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(PackedConverter<EdgeInsets>())   // puts the built-in back after another EdgeInsets converter
    /// ```
    public init() {
        self.init(fieldCount: 4, integerFields: false, pack: { [$0.top, $0.left, $0.bottom, $0.right] },
                  unpack: { EdgeInsets(top: $0[0], left: $0[1], bottom: $0[2], right: $0[3]) })
    }
}

#if canImport(CoreGraphics)
import CoreGraphics

extension PackedConverter where Value == CGVector {
    /// The converter for `CGVector`: dx and dy, a 16-byte BLOB; registered in `Converters.shared` from the start where CoreGraphics exists.
    /// ```swift
    /// Converters.register(PackedConverter<CGVector>())   // puts the built-in back after another CGVector converter
    /// ```
    public init() {
        self.init(fieldCount: 2, integerFields: false, pack: { [Double($0.dx), Double($0.dy)] },
                  unpack: { CGVector(dx: $0[0], dy: $0[1]) })
    }
}

extension PackedConverter where Value == CGAffineTransform {
    /// The converter for `CGAffineTransform`: a, b, c, d, tx and ty, a 48-byte BLOB; registered in `Converters.shared` from the start where CoreGraphics exists.
    /// ```swift
    /// Converters.register(PackedConverter<CGAffineTransform>())   // puts the built-in back after another converter
    /// ```
    public init() {
        self.init(fieldCount: 6, integerFields: false,
                  pack: { [Double($0.a), Double($0.b), Double($0.c), Double($0.d), Double($0.tx), Double($0.ty)] },
                  unpack: { CGAffineTransform(a: $0[0], b: $0[1], c: $0[2], d: $0[3], tx: $0[4], ty: $0[5]) })
    }
}
#endif

/// NSRange as a BLOB of two little-endian Int64 (location, length).
/// ```swift
/// try Db.update("update doc set selection = ? where id = ?", NSRange(location: 2, length: 5), 1)   // a 16-byte BLOB: 2, 5
/// ```
public struct NSRangeConverter: TypeConverter {
    /// Creates the converter; it is registered for `NSRange` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(NSRangeConverter())   // puts the built-in back after another NSRange converter
    /// ```
    public init() {}
    /// BLOB, the column type for `NSRange` properties.
    /// ```swift
    /// NSRangeConverter().storageType   // .blob
    /// ```
    public var storageType: StorageType { .blob }

    /// Packs the location, then the length, as little-endian Int64: 16 bytes.
    /// ```swift
    /// try NSRangeConverter().encode(NSRange(location: 2, length: 5))   // .blob of 16 bytes: 2, 5
    /// ```
    public func encode(_ value: NSRange) throws -> DatabaseValue {
        var data = Data(capacity: 16)
        for field in [Int64(value.location), Int64(value.length)] {
            withUnsafeBytes(of: field.littleEndian) { data.append(contentsOf: $0) }
        }
        return .blob(data)
    }

    /// Reads a 16-byte BLOB as location and length; any other value or size, or a field beyond `Int`'s range, throws ``ConversionError``.
    /// ```swift
    /// try NSRangeConverter().decode(.blob(Data(count: 16)))   // NSRange(location: 0, length: 0)
    /// ```
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
