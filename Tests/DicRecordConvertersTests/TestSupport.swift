import Testing
import Foundation
@testable import DicRecordConverters

// Shared helpers for the converter tests. Nothing here registers anything: `Converters.shared`
// is process-global and the tests run in parallel.

/// Runs `body` and expects it to throw a `ConversionError` of `kind` whose description names `type`.
///
/// "Names the type" is checked strictly: `targetType` must be the type's full or short name
/// (so `Swift.Int` is not accepted for `Int64` by a substring match) and the description must contain it.
@discardableResult
func expectConversionError<R>(
    _ kind: ConversionError.Kind,
    naming type: Any.Type,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> R
) -> ConversionError? {
    let error = #expect(throws: ConversionError.self, sourceLocation: sourceLocation) {
        _ = try body()
    }
    guard let error else { return nil }
    #expect(error.kind == kind, "wrong kind in: \(error)", sourceLocation: sourceLocation)
    let names = [String(reflecting: type), String(describing: type)]
    #expect(names.contains(error.targetType),
            "the error names \(error.targetType), expected \(names[0]): \(error)",
            sourceLocation: sourceLocation)
    #expect(error.description.contains(error.targetType), "\(error)", sourceLocation: sourceLocation)
    return error
}

/// `value` encodes to exactly `stored` through `registry`, and `stored` decodes back to `value`.
func expectStored<T: Equatable>(
    _ value: T, as stored: DatabaseValue, in registry: Converters = .shared,
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(try registry.encode(value) == stored, sourceLocation: sourceLocation)
    #expect(try registry.decode(stored, as: T.self) == value, sourceLocation: sourceLocation)
}

/// The same check, calling the converter struct directly.
func expectConverter<C: TypeConverter>(
    _ converter: C, stores value: C.Value, as stored: DatabaseValue,
    sourceLocation: SourceLocation = #_sourceLocation
) throws where C.Value: Equatable {
    #expect(try converter.encode(value) == stored, sourceLocation: sourceLocation)
    #expect(try converter.decode(stored) == value, sourceLocation: sourceLocation)
}

/// The stored Double of a `.real`, or nil.
func realValue(_ value: DatabaseValue) -> Double? {
    if case .real(let d) = value { return d }
    return nil
}

/// The bytes of a `.blob`, or nil.
func blobBytes(_ value: DatabaseValue) -> [UInt8]? {
    if case .blob(let d) = value { return [UInt8](d) }
    return nil
}

/// A Gregorian calendar in UTC, used to compute expected dates independently of the date parser under test.
let utcCalendar: Calendar = {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    return calendar
}()

/// Seconds since 1970 of a UTC wall-clock time, from `Calendar` (not from the code under test).
func utcSeconds(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Double {
    let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
    return utcCalendar.date(from: components)!.timeIntervalSince1970
}
