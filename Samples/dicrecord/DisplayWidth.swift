/// How many terminal columns text takes: East Asian wide and fullwidth characters (Chinese,
/// Japanese, Korean, fullwidth forms) and emoji take 2, combining marks and format characters 0,
/// everything else 1 (what `wcwidth` says, per grapheme cluster).
enum DisplayWidth {
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    static func of(_ character: Character) -> Int {
        var width = 0
        var emoji = false
        for scalar in character.unicodeScalars {
            // VS16 asks for emoji presentation; an emoji's first scalar says it by itself.
            if scalar.value == 0xFE0F || scalar.properties.isEmojiPresentation { emoji = true }
            // The first scalar with a width decides (a base and its combining marks, a ZWJ sequence).
            if width == 0 { width = of(scalar) }
        }
        return emoji ? 2 : width
    }

    static func of(_ scalar: Unicode.Scalar) -> Int {
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        let v = scalar.value
        if (0x1160...0x11FF).contains(v) { return 0 }    // Hangul medial vowels and final consonants join the syllable
        return isWide(v) ? 2 : 1
    }

    /// East Asian Width W and F (Unicode 15), the blocks that matter in practice.
    private static func isWide(_ v: UInt32) -> Bool {
        switch v {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF,
             0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF,
             0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4,
             0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F200...0x1F2FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }
}
