import Foundation

/// The converters `Converters.shared` starts with.
enum BuiltInConverters {
    static var all: [ObjectIdentifier: AnyTypeConverter] {
        var table: [ObjectIdentifier: AnyTypeConverter] = [:]
        func add<C: TypeConverter>(_ converter: C) {
            table[ObjectIdentifier(C.Value.self)] = AnyTypeConverter(converter)
        }
        add(IntegerConverter<Int>())
        add(IntegerConverter<Int8>())
        add(IntegerConverter<Int16>())
        add(IntegerConverter<Int32>())
        add(IntegerConverter<Int64>())
        add(IntegerConverter<UInt>())
        add(IntegerConverter<UInt8>())
        add(IntegerConverter<UInt16>())
        add(IntegerConverter<UInt32>())
        add(IntegerConverter<UInt64>())
        add(BoolConverter())
        add(DoubleConverter())
        add(FloatConverter())
        add(DecimalConverter())
        add(StringConverter())
        add(DataConverter())
        add(BytesConverter())
        add(DateConverter())
        add(URLConverter())
        add(UUIDConverter())
        add(ColorConverter())
        add(PackedConverter<CGPoint>())
        add(PackedConverter<CGSize>())
        add(PackedConverter<CGRect>())
        add(PackedConverter<EdgeInsets>())
        add(NSRangeConverter())
        #if canImport(CoreGraphics)
        add(PackedConverter<CGVector>())
        add(PackedConverter<CGAffineTransform>())
        #endif
        #if canImport(UIKit)
        add(UIColorConverter())
        #elseif canImport(AppKit)
        add(NSColorConverter())
        #endif
        return table
    }
}
