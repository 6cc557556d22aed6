import Foundation

// Text compared as SQLite and PostgreSQL compare it: by its bytes. Swift's `==` and hashing take
// canonically equivalent text as equal ("é" and "e" + U+0301, the Kelvin sign and "K"), so two
// SQL strings that differ only so (a string literal, a quoted name) would share one prepared
// statement, and two column names would be one column.

extension String {
    /// Whether `other` is spelled with the same UTF-8 bytes.
    @inline(__always)
    package func hasSameBytes(as other: String) -> Bool {
        // The same representation is the same text: a small string's bytes are its
        // representation, and a larger one's is its (immutable while shared) storage and count.
        // Names written again and again (`r.name = …` in a loop, a literal's keys) are such copies.
        if hasSameRepresentation(as: other) { return true }
        // Lengths first (stored in a native string): most texts compared unequal differ in length,
        // and are told apart without reaching their bytes (which retains both).
        if utf8.count != other.utf8.count { return false }
        var a = self, b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                // A column name is short: compared in place (a call to memcmp costs more).
                if x.count <= 16 {
                    for i in 0..<x.count where x[i] != y[i] { return false }
                    return true
                }
                // A buffer of more than 16 bytes has a base address.
                return memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
            }
        }
    }

    /// Whether the two values' bits are equal (read in place; nothing about their layout assumed):
    /// if so they are the same text, byte for byte; if not, they may still be.
    @inline(__always)
    func hasSameRepresentation(as other: String) -> Bool {
        withUnsafeBytes(of: self) { x in
            withUnsafeBytes(of: other) { y in
                if x.count == 16 {
                    return x.loadUnaligned(as: UInt64.self) == y.loadUnaligned(as: UInt64.self)
                        && x.loadUnaligned(fromByteOffset: 8, as: UInt64.self) == y.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                }
                return x.elementsEqual(y)
            }
        }
    }
}

/// A dictionary key of text equal only to the same bytes (its hash is the String's: text with
/// the same bytes is canonically equivalent, so it hashes alike).
package struct ExactText: Hashable, Sendable {
    package let text: String

    @inline(__always)
    package init(_ text: String) { self.text = text }

    package static func == (lhs: ExactText, rhs: ExactText) -> Bool { lhs.text.hasSameBytes(as: rhs.text) }

    package func hash(into hasher: inout Hasher) { hasher.combine(text) }
}
