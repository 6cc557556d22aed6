import Foundation

/// An RGBA color with 8-bit components, stored as INTEGER ARGB (PSDicRecord's color format).
///
/// ```swift
/// let red = Color(red: 255, green: 0, blue: 0)         // alpha defaults to 255
/// red.argb                                            // 0xFFFF0000
/// ```
public struct Color: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8
    public var alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// `alpha << 24 + red << 16 + green << 8 + blue`.
    public var argb: UInt32 {
        UInt32(alpha) << 24 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue)
    }

    public init(argb: UInt32) {
        self.init(red: UInt8(truncatingIfNeeded: argb >> 16), green: UInt8(truncatingIfNeeded: argb >> 8),
                  blue: UInt8(truncatingIfNeeded: argb), alpha: UInt8(truncatingIfNeeded: argb >> 24))
    }
}

/// ``Color`` as INTEGER ARGB, alpha in the top byte; a value outside 0...0xFFFFFFFF throws on decode.
public struct ColorConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .integer }

    public func encode(_ value: Color) throws -> DatabaseValue { .integer(Int64(value.argb)) }

    public func decode(_ value: DatabaseValue) throws -> Color {
        let raw: Int64
        do {
            raw = try IntegerConverter<Int64>().decode(value)
        } catch let error as ConversionError {
            throw error.retargeted(to: Color.self)
        }
        guard let argb = UInt32(exactly: raw) else {
            throw ConversionError.cannotDecode(value, to: Color.self, "not a 32-bit ARGB value")
        }
        return Color(argb: argb)
    }
}

#if canImport(UIKit)
import UIKit

/// UIColor as INTEGER ARGB, through ``Color``.
public struct UIColorConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .integer }

    public func encode(_ value: UIColor) throws -> DatabaseValue {
        var r: CGFloat = 0, g: CGFloat = 0, b: CGFloat = 0, a: CGFloat = 0
        guard value.getRed(&r, green: &g, blue: &b, alpha: &a) else {
            throw ConversionError.cannotEncode(value, "not convertible to RGB")
        }
        return try ColorConverter().encode(Color(red: component(r), green: component(g), blue: component(b), alpha: component(a)))
    }

    public func decode(_ value: DatabaseValue) throws -> UIColor {
        let c = try ColorConverter().decode(value)
        return UIColor(red: CGFloat(c.red) / 255, green: CGFloat(c.green) / 255, blue: CGFloat(c.blue) / 255, alpha: CGFloat(c.alpha) / 255)
    }

    private func component(_ x: CGFloat) -> UInt8 { UInt8(max(0, min(255, (x * 255).rounded()))) }
}
#elseif canImport(AppKit)
import AppKit

/// NSColor as INTEGER ARGB, through ``Color`` (converted to sRGB first).
public struct NSColorConverter: TypeConverter {
    public init() {}
    public var storageType: StorageType { .integer }

    public func encode(_ value: NSColor) throws -> DatabaseValue {
        guard let rgb = value.usingColorSpace(.sRGB) else {
            throw ConversionError.cannotEncode(value, "not convertible to sRGB")
        }
        return try ColorConverter().encode(Color(red: component(rgb.redComponent), green: component(rgb.greenComponent),
                                                 blue: component(rgb.blueComponent), alpha: component(rgb.alphaComponent)))
    }

    public func decode(_ value: DatabaseValue) throws -> NSColor {
        let c = try ColorConverter().decode(value)
        return NSColor(srgbRed: CGFloat(c.red) / 255, green: CGFloat(c.green) / 255, blue: CGFloat(c.blue) / 255, alpha: CGFloat(c.alpha) / 255)
    }

    private func component(_ x: CGFloat) -> UInt8 { UInt8(max(0, min(255, (x * 255).rounded()))) }
}
#endif
