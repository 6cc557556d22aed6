import Testing
import Foundation
import Synchronization
@testable import DicRecordConverters

// Every type below is private to this file. `Converters.shared` is process-global and the
// tests run in parallel: only these private types are ever registered on it.

/// Registered on child registries only, never on `.shared`.
private struct Money: Equatable, Sendable { var cents: Int64 }

private struct MoneyConverter: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: Money) throws -> DatabaseValue { .integer(value.cents) }
    func decode(_ value: DatabaseValue) throws -> Money {
        guard case .integer(let cents) = value else {
            throw ConversionError.cannotDecode(value, to: Money.self, "expected INTEGER cents")
        }
        return Money(cents: cents)
    }
}

/// A second converter for Money, to check that a later registration replaces an earlier one.
private struct MoneyAsTextConverter: TypeConverter {
    var storageType: StorageType { .text }
    func encode(_ value: Money) throws -> DatabaseValue { .text("\(value.cents)c") }
    func decode(_ value: DatabaseValue) throws -> Money {
        guard case .text(let text) = value, text.hasSuffix("c"), let cents = Int64(text.dropLast()) else {
            throw ConversionError.cannotDecode(value, to: Money.self, "expected '<cents>c'")
        }
        return Money(cents: cents)
    }
}

/// Registered on `.shared` by `globalRegistration` (and nowhere else).
private struct Coupon: Equatable, Sendable { var code: String }

private struct CouponConverter: TypeConverter {
    var storageType: StorageType { .text }
    func encode(_ value: Coupon) throws -> DatabaseValue { .text("coupon:" + value.code) }
    func decode(_ value: DatabaseValue) throws -> Coupon {
        guard case .text(let text) = value, text.hasPrefix("coupon:") else {
            throw ConversionError.cannotDecode(value, to: Coupon.self, "expected 'coupon:...'")
        }
        return Coupon(code: String(text.dropFirst("coupon:".count)))
    }
}

/// Never registered anywhere.
private struct Unregistered: Equatable, Sendable {}

/// Replaces the built-in String converter in a child registry: marks what it stores, shouts what it reads.
private struct ShoutingStringConverter: TypeConverter {
    var storageType: StorageType { .text }
    func encode(_ value: String) throws -> DatabaseValue { .text("<" + value + ">") }
    func decode(_ value: DatabaseValue) throws -> String {
        guard case .text(let text) = value else {
            throw ConversionError.cannotDecode(value, to: String.self, "shouting converter wants TEXT")
        }
        return text.uppercased()
    }
}

/// Replaces the built-in Int converter in a child registry: stores Int as TEXT.
private struct IntAsTextConverter: TypeConverter {
    var storageType: StorageType { .text }
    func encode(_ value: Int) throws -> DatabaseValue { .text("#\(value)") }
    func decode(_ value: DatabaseValue) throws -> Int {
        guard case .text(let text) = value, text.hasPrefix("#"), let int = Int(text.dropFirst()) else {
            throw ConversionError.cannotDecode(value, to: Int.self, "expected '#<n>'")
        }
        return int
    }
}

// MARK: Types for the concurrency test: 8 child-registry types and 8 global ones.

private enum Tag0 {}
private enum Tag1 {}
private enum Tag2 {}
private enum Tag3 {}
private enum Tag4 {}
private enum Tag5 {}
private enum Tag6 {}
private enum Tag7 {}
private enum Global<Tag> {}

private struct Tagged<Tag>: Equatable, Sendable { var value: Int64 }

private struct TaggedConverter<Tag>: TypeConverter {
    var storageType: StorageType { .integer }
    func encode(_ value: Tagged<Tag>) throws -> DatabaseValue { .integer(value.value) }
    func decode(_ value: DatabaseValue) throws -> Tagged<Tag> {
        guard case .integer(let v) = value else {
            throw ConversionError.cannotDecode(value, to: Tagged<Tag>.self, "expected INTEGER")
        }
        return Tagged(value: v)
    }
}

/// How to register `Tagged<Tag>` and how to round-trip a value of it through a registry.
private struct TaggedEntry: Sendable {
    let register: @Sendable (Converters) -> Void
    let roundTrip: @Sendable (Converters, Int64) throws -> Int64

    init<Tag>(_: Tag.Type) {
        register = { $0.register(TaggedConverter<Tag>()) }
        roundTrip = { registry, n in
            try registry.decode(try registry.encode(Tagged<Tag>(value: n)), as: Tagged<Tag>.self).value
        }
    }
}

private let childEntries = [TaggedEntry(Tag0.self), TaggedEntry(Tag1.self), TaggedEntry(Tag2.self), TaggedEntry(Tag3.self),
                            TaggedEntry(Tag4.self), TaggedEntry(Tag5.self), TaggedEntry(Tag6.self), TaggedEntry(Tag7.self)]
private let globalEntries = [TaggedEntry(Global<Tag0>.self), TaggedEntry(Global<Tag1>.self), TaggedEntry(Global<Tag2>.self),
                             TaggedEntry(Global<Tag3>.self), TaggedEntry(Global<Tag4>.self), TaggedEntry(Global<Tag5>.self),
                             TaggedEntry(Global<Tag6>.self), TaggedEntry(Global<Tag7>.self)]

@Suite("Converters registry")
struct RegistryTests {
    @Test("the shared registry has every built-in converter with its storage type")
    func builtIns() {
        let expected: [(Any.Type, StorageType)] = [
            (Int.self, .integer), (Int8.self, .integer), (Int16.self, .integer), (Int32.self, .integer), (Int64.self, .integer),
            (UInt.self, .integer), (UInt8.self, .integer), (UInt16.self, .integer), (UInt32.self, .integer), (UInt64.self, .integer),
            (Bool.self, .integer), (Double.self, .real), (Float.self, .real), (String.self, .text), (Data.self, .blob),
            ([UInt8].self, .blob), (Date.self, .real), (URL.self, .text), (UUID.self, .text), (Decimal.self, .text),
            (Color.self, .integer), (CGPoint.self, .blob), (CGSize.self, .blob), (CGRect.self, .blob), (NSRange.self, .blob),
            (EdgeInsets.self, .blob),
        ]
        for (type, storage) in expected {
            #expect(Converters.shared.storageType(for: type) == storage, "\(type)")
            #expect(Converters.shared.converter(for: type)?.typeName == String(reflecting: type))
        }
        #expect(Converters.shared.storageType(for: Unregistered.self) == nil)
        #expect(Converters.shared.converter(for: Unregistered.self) == nil)
    }

    @Test("an unregistered type throws .noConverter naming the type, on encode and decode")
    func unregisteredType() {
        let child = Converters(parent: .shared)
        for registry in [Converters.shared, child] {
            expectConversionError(.noConverter, naming: Unregistered.self) { try registry.encode(Unregistered()) }
            expectConversionError(.noConverter, naming: Unregistered.self) { try registry.encode(Optional(Unregistered())) }
            expectConversionError(.noConverter, naming: Unregistered.self) { try registry.decode(.integer(1), as: Unregistered.self) }
            expectConversionError(.noConverter, naming: Unregistered.self) { try registry.decode(.text("x"), as: Unregistered?.self) }
            expectConversionError(.noConverter, naming: [Unregistered].self) { try registry.encode([Unregistered()]) }
        }
        // The description names the type by its name, so a user can find it.
        let error = expectConversionError(.noConverter, naming: Unregistered.self) { try Converters.shared.encode(Unregistered()) }
        #expect(error?.description.contains("Unregistered") == true)
    }

    @Test("a converter registered on a child is found there and not in .shared")
    func childOnly() throws {
        let child = Converters(parent: .shared)
        child.register(MoneyConverter())
        #expect(child.storageType(for: Money.self) == .integer)
        #expect(child.storageType(for: Money?.self) == .integer)
        try expectStored(Money(cents: 1999), as: .integer(1999), in: child)
        #expect(try child.decode(.null, as: Money?.self) == nil)
        expectConversionError(.notConvertible, naming: Money.self) { try child.decode(.text("12"), as: Money.self) }

        #expect(Converters.shared.converter(for: Money.self) == nil)
        expectConversionError(.noConverter, naming: Money.self) { try Converters.shared.encode(Money(cents: 1)) }
        expectConversionError(.noConverter, naming: Money.self) { try Converters.shared.decode(.integer(1), as: Money.self) }
        // A sibling does not see it either; a grandchild does.
        #expect(Converters(parent: .shared).converter(for: Money.self) == nil)
        try expectStored(Money(cents: -5), as: .integer(-5), in: Converters(parent: child))
        // The child still has every built-in through its parent.
        try expectStored(Date(timeIntervalSince1970: 86_400), as: .real(86_400), in: child)
        try expectStored(Int8(-128), as: .integer(-128), in: child)
    }

    @Test("a later registration replaces the earlier one for the same type, immediately, even after use")
    func replacement() throws {
        let child = Converters(parent: .shared)
        expectConversionError(.noConverter, naming: Money.self) { try child.encode(Money(cents: 1)) }
        child.register(MoneyConverter())
        try expectStored(Money(cents: 250), as: .integer(250), in: child)
        child.register(MoneyAsTextConverter())
        #expect(child.storageType(for: Money.self) == .text)
        try expectStored(Money(cents: 250), as: .text("250c"), in: child)
        expectConversionError(.notConvertible, naming: Money.self) { try child.decode(.integer(250), as: Money.self) }
        child.register(MoneyConverter())
        try expectStored(Money(cents: 250), as: .integer(250), in: child)
    }

    @Test("a child's converter for a built-in type wins in the child only")
    func childOverridesBuiltIn() throws {
        let child = Converters(parent: .shared)
        child.register(MoneyConverter())
        child.register(TaggedConverter<Date>())   // unrelated type: does not touch Date
        #expect(try child.encode(Date(timeIntervalSince1970: 2)) == .real(2))
        child.register(IntAsTextConverter())
        #expect(child.storageType(for: Int.self) == .text)
        try expectStored(42, as: .text("#42"), in: child)
        #expect(try child.encode(Optional(42)) == .text("#42"))
        #expect(try child.decode(.text("#7"), as: Int?.self) == 7)
        expectConversionError(.notConvertible, naming: Int.self) { try child.decode(.integer(42), as: Int.self) }
        // Other fast-path types are unaffected in the child.
        try expectStored(Int64(42), as: .integer(42), in: child)
        try expectStored("abc", as: .text("abc"), in: child)
        // .shared is unaffected.
        try expectStored(42, as: .integer(42))
        #expect(Converters.shared.storageType(for: Int.self) == .integer)
    }

    @Test("a child's String converter wins there only and turns off the fast path there")
    func childOverridesString() throws {
        let child = Converters(parent: .shared)
        #expect(child.fastPathEnabled)
        // First use, through the fast path.
        #expect(try child.decode(.text("abc"), as: String.self) == "abc")
        #expect(try child.encode("abc") == .text("abc"))

        child.register(ShoutingStringConverter())
        #expect(!child.fastPathEnabled)
        #expect(!child.isCheap(String.self))
        // Decode and encode now go through the registered converter, optionals too.
        #expect(try child.decode(.text("abc"), as: String.self) == "ABC")
        #expect(try child.decode(.text("abc"), as: String?.self) == "ABC")
        #expect(try child.encode("abc") == .text("<abc>"))
        #expect(try child.encode(Optional("abc")) == .text("<abc>"))
        #expect(try child.decode(.null, as: String?.self) == nil)
        expectConversionError(.notConvertible, naming: String.self) { try child.decode(.integer(1), as: String.self) }
        // The other fast-path types still convert exactly as the built-ins do.
        try expectStored(7, as: .integer(7), in: child)
        try expectStored(Int64.min, as: .integer(Int64.min), in: child)
        try expectStored(2.5, as: .real(2.5), in: child)
        try expectStored(true, as: .integer(1), in: child)
        try expectStored(Data([1, 2]), as: .blob(Data([1, 2])), in: child)
        expectConversionError(.invalidValue, naming: Double.self) { try child.encode(Double.nan) }
        expectConversionError(.notConvertible, naming: Int.self) { try child.decode(.text("abc"), as: Int.self) }

        // A grandchild inherits the override and the disabled fast path.
        let grandchild = Converters(parent: child)
        #expect(!grandchild.fastPathEnabled)
        #expect(try grandchild.decode(.text("abc"), as: String.self) == "ABC")
        #expect(try grandchild.encode("abc") == .text("<abc>"))

        // .shared and a sibling are untouched.
        #expect(Converters.shared.fastPathEnabled)
        #expect(Converters.shared.isCheap(String.self))
        #expect(try Converters.shared.decode(.text("abc"), as: String.self) == "abc")
        #expect(try Converters.shared.encode("abc") == .text("abc"))
        let sibling = Converters(parent: .shared)
        #expect(sibling.fastPathEnabled)
        #expect(try sibling.decode(.text("abc"), as: String.self) == "abc")
    }

    @Test("registering a non-fast-path type keeps the fast path on")
    func fastPathStaysOn() {
        let child = Converters(parent: .shared)
        child.register(MoneyConverter())
        child.register(TaggedConverter<Tag0>())
        #expect(child.fastPathEnabled)
        #expect(child.isCheap(Int.self) && child.isCheap(String.self))
        #expect(!child.isCheap(Date.self))
    }

    @Test("Converters.register registers globally and takes effect immediately")
    func globalRegistration() throws {
        expectConversionError(.noConverter, naming: Coupon.self) { try Converters.shared.encode(Coupon(code: "X")) }
        let childCreatedBefore = Converters(parent: .shared)
        Converters.register(CouponConverter())
        #expect(Converters.shared.storageType(for: Coupon.self) == .text)
        try expectStored(Coupon(code: "SAVE10"), as: .text("coupon:SAVE10"))
        // A child created before the registration sees it through its parent.
        try expectStored(Coupon(code: "A"), as: .text("coupon:A"), in: childCreatedBefore)
        // Registering a global type does not turn off the fast path.
        #expect(Converters.shared.fastPathEnabled)
    }

    @Test("registering from 8 threads while others look up: no crash, every registration visible")
    func concurrentRegistration() throws {
        let child = Converters(parent: .shared)
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            if i < 8 {
                for _ in 0..<200 {
                    childEntries[i].register(child)
                    globalEntries[i].register(.shared)
                }
            } else {
                for round in 0..<200 {
                    let n = Int64(round * 16 + i)
                    for entry in childEntries + globalEntries {
                        // Before its registration a type throws .noConverter; after it, it must round-trip.
                        do {
                            if try entry.roundTrip(child, n) != n { mismatches.add(1, ordering: .relaxed) }
                        } catch let error as ConversionError where error.kind == .noConverter {
                        } catch {
                            mismatches.add(1, ordering: .relaxed)
                        }
                    }
                    // Built-ins and the fast path keep working while the tables change.
                    if (try? child.decode(.integer(n), as: Int.self)) != Int(n) { mismatches.add(1, ordering: .relaxed) }
                    if (try? Converters.shared.decode(.text("s\(n)"), as: String.self)) != "s\(n)" { mismatches.add(1, ordering: .relaxed) }
                    if child.converter(for: Date.self) == nil { mismatches.add(1, ordering: .relaxed) }
                }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
        for (i, entry) in childEntries.enumerated() {
            #expect(try entry.roundTrip(child, Int64(i) - 100) == Int64(i) - 100)
        }
        for (i, entry) in globalEntries.enumerated() {
            #expect(try entry.roundTrip(.shared, Int64(i) + 100) == Int64(i) + 100)
            #expect(try entry.roundTrip(child, Int64(i)) == Int64(i))
        }
        #expect(child.fastPathEnabled)
        // The child-only registrations did not leak into .shared.
        #expect(Converters.shared.converter(for: Tagged<Tag3>.self) == nil)
    }

    @Test("a ConversionError placed in a column names the column")
    func columnInMessage() {
        let error = ConversionError.cannotDecode(.text("abc"), to: Date.self, "not a date").inColumn("born")
        #expect(error.column == "born")
        #expect(error.description.contains("in column \"born\""))
        #expect(error.description.contains("Date"))
        #expect(error.description.contains("'abc'"))
    }

    @Test("a type-erased converter refuses a value of another type with .invalidValue")
    func erasedConverterWrongType() throws {
        let converter = try #require(Converters.shared.converter(for: Int8.self))
        #expect(converter.typeName == "Swift.Int8")
        #expect(try converter.encode(Int8(-1)) == .integer(-1))
        let error = #expect(throws: ConversionError.self) { try converter.encode("not an Int8") }
        #expect(error?.kind == .invalidValue)
        #expect(try converter.decode(.integer(5)) as? Int8 == 5)
    }
}
