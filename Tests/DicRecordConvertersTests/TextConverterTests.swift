import Testing
import Foundation
@testable import DicRecordConverters

private let uuidText = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
/// The same UUID's 16 bytes, written out by hand.
private let uuidBytes: [UInt8] = [0xE6, 0x21, 0xE1, 0xF8, 0xC3, 0x6C, 0x49, 0x5A,
                                  0x93, 0xFC, 0x0C, 0x24, 0x7A, 0x3E, 0x6E, 0x5F]

@Suite("String, Data, [UInt8], URL and UUID converters")
struct TextConverterTests {
    // MARK: String

    @Test("String stores as exactly that TEXT",
          arguments: ["", "a\u{0}b", "\u{0}", "😀𝄞", "中文字符串：张三", "it's \"quoted\"", "line\nbreak\r\n\ttab", "e\u{301}"])
    func stringRoundTrips(text: String) throws {
        #expect(StringConverter().storageType == .text)
        #expect(Converters.shared.storageType(for: String.self) == .text)
        try expectStored(text, as: .text(text))
        try expectConverter(StringConverter(), stores: text, as: .text(text))
        // String == is canonical equivalence; the stored scalars must be the very same.
        let decoded = try Converters.shared.decode(.text(text), as: String.self)
        #expect(Array(decoded.unicodeScalars) == Array(text.unicodeScalars))
    }

    @Test("embedded NUL survives: all three bytes come back")
    func embeddedNul() throws {
        let decoded = try Converters.shared.decode(try Converters.shared.encode("a\u{0}b"), as: String.self)
        #expect(Array(decoded.utf8) == [0x61, 0x00, 0x62])
    }

    @Test("INTEGER and REAL decode to their decimal text",
          arguments: [(DatabaseValue.integer(42), "42"), (.integer(-9_223_372_036_854_775_808), "-9223372036854775808"),
                      (.integer(0), "0"), (.real(2.5), "2.5"), (.real(-0.5), "-0.5")])
    func numbersDecodeToText(stored: DatabaseValue, expected: String) throws {
        #expect(try Converters.shared.decode(stored, as: String.self) == expected)
        #expect(try StringConverter().decode(stored) == expected)
    }

    @Test("a BLOB of valid UTF-8 decodes to String")
    func utf8BlobDecodes() throws {
        let text = "héllo 😀 中文"
        #expect(try Converters.shared.decode(.blob(Data(text.utf8)), as: String.self) == text)
        #expect(try StringConverter().decode(.blob(Data())) == "")
    }

    @Test("a BLOB of invalid UTF-8 throws",
          arguments: [[0xFF, 0xFE], [0x61, 0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF]] as [[UInt8]])
    func invalidUTF8Throws(bytes: [UInt8]) {
        expectConversionError(.notConvertible, naming: String.self) { try Converters.shared.decode(.blob(Data(bytes)), as: String.self) }
        expectConversionError(.notConvertible, naming: String.self) { try StringConverter().decode(.blob(Data(bytes))) }
    }

    @Test("NULL into String throws, into String? is nil")
    func stringNull() throws {
        expectConversionError(.notConvertible, naming: String.self) { try Converters.shared.decode(.null, as: String.self) }
        #expect(try Converters.shared.decode(.null, as: String?.self) == nil)
    }

    // MARK: Data and [UInt8]

    @Test("an empty Data or [UInt8] stores as an empty BLOB, not NULL")
    func emptyBlobIsNotNull() throws {
        #expect(DataConverter().storageType == .blob)
        #expect(BytesConverter().storageType == .blob)
        #expect(Converters.shared.storageType(for: Data.self) == .blob)
        #expect(Converters.shared.storageType(for: [UInt8].self) == .blob)
        for stored in [try Converters.shared.encode(Data()), try DataConverter().encode(Data()),
                       try Converters.shared.encode([UInt8]()), try BytesConverter().encode([])] {
            #expect(stored == .blob(Data()))
            #expect(!stored.isNull)
        }
        #expect(try Converters.shared.decode(.blob(Data()), as: Data.self) == Data())
        #expect(try Converters.shared.decode(.blob(Data()), as: [UInt8].self) == [])
    }

    @Test("a 1 MiB blob round-trips byte for byte")
    func largeBlob() throws {
        let bytes = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let data = Data(bytes)
        try expectStored(data, as: .blob(data))
        try expectConverter(DataConverter(), stores: data, as: .blob(data))
        try expectStored(bytes, as: .blob(data))
        try expectConverter(BytesConverter(), stores: bytes, as: .blob(data))
    }

    @Test("TEXT decodes to its UTF-8 bytes")
    func textDecodesToBytes() throws {
        let text = "a\u{0}é😀"
        let utf8: [UInt8] = [0x61, 0x00, 0xC3, 0xA9, 0xF0, 0x9F, 0x98, 0x80]
        #expect(try Converters.shared.decode(.text(text), as: Data.self) == Data(utf8))
        #expect(try DataConverter().decode(.text(text)) == Data(utf8))
        #expect(try Converters.shared.decode(.text(text), as: [UInt8].self) == utf8)
        #expect(try BytesConverter().decode(.text("")) == [])
    }

    @Test("INTEGER, REAL and NULL throw for Data", arguments: [DatabaseValue.integer(1), .real(1.5), .null])
    func dataBadInput(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: Data.self) { try Converters.shared.decode(stored, as: Data.self) }
    }

    @Test("INTEGER, REAL and NULL throw for [UInt8], naming [UInt8]", arguments: [DatabaseValue.integer(1), .real(1.5), .null])
    func bytesBadInput(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: [UInt8].self) { try Converters.shared.decode(stored, as: [UInt8].self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: [UInt8].self) { try BytesConverter().decode(stored) }
        }
    }

    // MARK: URL

    @Test("URL stores as its absoluteString",
          arguments: ["https://example.com/a/b?x=1&y=2#frag", "mailto:someone@example.com", "file:///tmp/a%20b", "urn:isbn:0451450523",
                      "relative/path"])
    func asciiURLRoundTrips(text: String) throws {
        let url = try #require(URL(string: text))
        #expect(URLConverter().storageType == .text)
        #expect(Converters.shared.storageType(for: URL.self) == .text)
        try expectStored(url, as: .text(text))
        try expectConverter(URLConverter(), stores: url, as: .text(text))
    }

    @Test("a URL with non-ASCII host, path and query round-trips to an equal URL")
    func nonASCIIURL() throws {
        // Whatever URL(string:) makes of it (punycode host, percent-encoded path), the stored text
        // is its absoluteString and decoding gives an equal URL.
        let url = try #require(URL(string: "https://例子.测试/路径?q=名"))
        let stored = try Converters.shared.encode(url)
        #expect(stored == .text(url.absoluteString))
        #expect(try Converters.shared.decode(stored, as: URL.self) == url)
        #expect(try URLConverter().decode(URLConverter().encode(url)) == url)
        let file = URL(fileURLWithPath: "/tmp/目录 with space/ファイル.txt")
        #expect(try Converters.shared.decode(try Converters.shared.encode(file), as: URL.self) == file)
    }

    @Test("empty or invalid TEXT, INTEGER, BLOB and NULL throw for URL",
          arguments: [DatabaseValue.text(""), .text("http://[::1"), .text("http://a b"), .integer(42), .blob(Data("https://a.b".utf8)), .null])
    func urlBadInput(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: URL.self) { try Converters.shared.decode(stored, as: URL.self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: URL.self) { try URLConverter().decode(stored) }
        }
    }

    // MARK: UUID

    @Test("UUID stores as its uppercase uuidString")
    func uuidEncodesUppercase() throws {
        let uuid = try #require(UUID(uuidString: uuidText))
        #expect(UUIDConverter().storageType == .text)
        #expect(Converters.shared.storageType(for: UUID.self) == .text)
        try expectStored(uuid, as: .text(uuidText))
        try expectConverter(UUIDConverter(), stores: uuid, as: .text(uuidText))
        let random = UUID()
        guard case .text(let text) = try Converters.shared.encode(random) else {
            Issue.record("a UUID must store as TEXT")
            return
        }
        #expect(text == text.uppercased())
        #expect(text.count == 36)
    }

    @Test("lowercase or mixed-case TEXT and a 16-byte BLOB decode",
          arguments: [DatabaseValue.text("e621e1f8-c36c-495a-93fc-0c247a3e6e5f"), .text("E621e1f8-C36C-495a-93FC-0c247a3e6e5f"),
                      .text(uuidText), .blob(Data(uuidBytes))])
    func uuidLenientDecode(stored: DatabaseValue) throws {
        let expected = try #require(UUID(uuidString: uuidText))
        #expect(try Converters.shared.decode(stored, as: UUID.self) == expected)
        #expect(try UUIDConverter().decode(stored) == expected)
    }

    @Test("bad UUID input throws",
          arguments: [DatabaseValue.blob(Data(uuidBytes.dropLast())), .blob(Data(uuidBytes + [0])), .blob(Data()), .text("xyz"), .text(""),
                      .text("E621E1F8C36C495A93FC0C247A3E6E5F0"), .text("G621E1F8-C36C-495A-93FC-0C247A3E6E5F"), .integer(1), .real(1), .null])
    func uuidBadInput(stored: DatabaseValue) {
        expectConversionError(.notConvertible, naming: UUID.self) { try Converters.shared.decode(stored, as: UUID.self) }
        if !stored.isNull {
            expectConversionError(.notConvertible, naming: UUID.self) { try UUIDConverter().decode(stored) }
        }
    }
}
