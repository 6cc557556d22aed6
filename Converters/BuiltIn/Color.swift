import Foundation

/// An RGBA color with 8-bit components, stored as INTEGER ARGB (PSDicRecord's color format).
///
/// ```swift
/// let red = Color(red: 255, green: 0, blue: 0)         // alpha defaults to 255
/// red.argb                                            // 0xFFFF0000
/// ```
public struct Color: Sendable, Hashable {
    /// The red component, 0 (none) to 255 (full).
    /// ```swift
    /// Color(argb: 0xFF336699).red     // 0x33
    /// ```
    public var red: UInt8
    /// The green component, 0 (none) to 255 (full).
    /// ```swift
    /// Color(argb: 0xFF336699).green   // 0x66
    /// ```
    public var green: UInt8
    /// The blue component, 0 (none) to 255 (full).
    /// ```swift
    /// Color(argb: 0xFF336699).blue    // 0x99
    /// ```
    public var blue: UInt8
    /// The opacity, 0 (transparent) to 255 (opaque).
    /// ```swift
    /// Color(argb: 0x80336699).alpha   // 0x80
    /// ```
    public var alpha: UInt8

    /// A color from its four components; `alpha` defaults to 255 (opaque).
    /// ```swift
    /// let translucentBlue = Color(red: 0, green: 0, blue: 255, alpha: 128)
    /// ```
    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    /// The color as one 32-bit ARGB number, `alpha << 24 | red << 16 | green << 8 | blue`: what ``ColorConverter`` stores.
    /// ```swift
    /// Color(red: 255, green: 0, blue: 0).argb   // 0xFFFF0000
    /// ```
    public var argb: UInt32 {
        UInt32(alpha) << 24 | UInt32(red) << 16 | UInt32(green) << 8 | UInt32(blue)
    }

    /// A color from a packed ARGB number, alpha in the top byte (the inverse of ``Color/argb``).
    /// ```swift
    /// let teal = Color(argb: 0xFF008080)   // red 0, green 0x80, blue 0x80, alpha 0xFF
    /// ```
    public init(argb: UInt32) {
        self.init(red: UInt8(truncatingIfNeeded: argb >> 16), green: UInt8(truncatingIfNeeded: argb >> 8),
                  blue: UInt8(truncatingIfNeeded: argb), alpha: UInt8(truncatingIfNeeded: argb >> 24))
    }
}

/// ``Color`` as INTEGER ARGB, alpha in the top byte; a value outside 0...0xFFFFFFFF throws on decode.
/// ```swift
/// try Db.update("update note set tint = ? where id = ?", Color(red: 255, green: 0, blue: 0), 1)   // stored as INTEGER 4294901760 (0xFFFF0000)
/// ```
public struct ColorConverter: TypeConverter {
    /// Creates the converter; it is registered for ``Color`` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(ColorConverter())   // puts the built-in back after another Color converter
    /// ```
    public init() {}
    /// INTEGER, the column type for ``Color`` properties.
    /// ```swift
    /// ColorConverter().storageType   // .integer
    /// ```
    public var storageType: StorageType { .integer }

    /// Stores the color as its ``Color/argb`` number.
    /// ```swift
    /// try ColorConverter().encode(Color(red: 255, green: 0, blue: 0))   // .integer(4294901760)
    /// ```
    public func encode(_ value: Color) throws -> DatabaseValue { .integer(Int64(value.argb)) }

    /// Reads an integer in 0...0xFFFFFFFF (INTEGER, or a whole REAL or numeric TEXT, read as `Int64` is) as an ARGB color; anything else throws ``ConversionError``.
    /// ```swift
    /// try ColorConverter().decode(.integer(0xFFFF0000))   // Color(red: 255, green: 0, blue: 0, alpha: 255)
    /// try ColorConverter().decode(.integer(-1))           // throws: not a 32-bit ARGB value
    /// ```
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
/// ```swift
/// try Db.update("update note set tint = ? where id = ?", UIColor.red, 1)   // stored as INTEGER 4294901760 (0xFFFF0000)
/// ```
public struct UIColorConverter: TypeConverter {
    /// Creates the converter; on UIKit platforms it is registered for `UIColor` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(UIColorConverter())   // puts the built-in back after another UIColor converter
    /// ```
    public init() {}
    /// INTEGER, the column type for `UIColor` properties.
    /// ```swift
    /// UIColorConverter().storageType   // .integer
    /// ```
    public var storageType: StorageType { .integer }

    /// Stores the color's RGBA components, each scaled to 0...255, rounded and clamped, as an ARGB integer; a color with no RGB form (`getRed(_:green:blue:alpha:)` fails) throws ``ConversionError``.
    /// ```swift
    /// try UIColorConverter().encode(.red)   // .integer(4294901760)
    /// ```
    public func encode(_ value: UIColor) throws -> DatabaseValue {
        var r: CGFloat = 0, g: CGFloat = 0, b: CGFloat = 0, a: CGFloat = 0
        guard value.getRed(&r, green: &g, blue: &b, alpha: &a) else {
            throw ConversionError.cannotEncode(value, "not convertible to RGB")
        }
        return try ColorConverter().encode(Color(red: component(r), green: component(g), blue: component(b), alpha: component(a)))
    }

    /// Reads an ARGB integer, as ``ColorConverter`` does, as a `UIColor` whose components are the stored bytes divided by 255.
    /// ```swift
    /// try UIColorConverter().decode(.integer(0xFF00FF00))   // UIColor(red: 0, green: 1, blue: 0, alpha: 1)
    /// ```
    public func decode(_ value: DatabaseValue) throws -> UIColor {
        let c = try ColorConverter().decode(value)
        return UIColor(red: CGFloat(c.red) / 255, green: CGFloat(c.green) / 255, blue: CGFloat(c.blue) / 255, alpha: CGFloat(c.alpha) / 255)
    }

    private func component(_ x: CGFloat) -> UInt8 { UInt8(max(0, min(255, (x * 255).rounded()))) }
}
#elseif canImport(AppKit)
import AppKit

/// NSColor as INTEGER ARGB, through ``Color`` (converted to sRGB first).
/// ```swift
/// try Db.update("update note set tint = ? where id = ?", NSColor.red, 1)   // stored as INTEGER 4294901760 (0xFFFF0000)
/// ```
public struct NSColorConverter: TypeConverter {
    /// Creates the converter; on AppKit platforms it is registered for `NSColor` in `Converters.shared` from the start.
    /// ```swift
    /// Converters.register(NSColorConverter())   // puts the built-in back after another NSColor converter
    /// ```
    public init() {}
    /// INTEGER, the column type for `NSColor` properties.
    /// ```swift
    /// NSColorConverter().storageType   // .integer
    /// ```
    public var storageType: StorageType { .integer }

    /// Converts the color to sRGB and stores its components, each scaled to 0...255, rounded and clamped, as an ARGB integer; a color with no sRGB form (a pattern color) throws ``ConversionError``.
    /// ```swift
    /// try NSColorConverter().encode(.red)   // .integer(4294901760)
    /// ```
    public func encode(_ value: NSColor) throws -> DatabaseValue {
        guard let rgb = value.usingColorSpace(.sRGB) else {
            throw ConversionError.cannotEncode(value, "not convertible to sRGB")
        }
        return try ColorConverter().encode(Color(red: component(rgb.redComponent), green: component(rgb.greenComponent),
                                                 blue: component(rgb.blueComponent), alpha: component(rgb.alphaComponent)))
    }

    /// Reads an ARGB integer, as ``ColorConverter`` does, as an sRGB `NSColor` whose components are the stored bytes divided by 255.
    /// ```swift
    /// try NSColorConverter().decode(.integer(0xFF00FF00))   // NSColor(srgbRed: 0, green: 1, blue: 0, alpha: 1)
    /// ```
    public func decode(_ value: DatabaseValue) throws -> NSColor {
        let c = try ColorConverter().decode(value)
        return NSColor(srgbRed: CGFloat(c.red) / 255, green: CGFloat(c.green) / 255, blue: CGFloat(c.blue) / 255, alpha: CGFloat(c.alpha) / 255)
    }

    private func component(_ x: CGFloat) -> UInt8 { UInt8(max(0, min(255, (x * 255).rounded()))) }
}
#endif
