extension RawJSON {
    /// Whether decoding this text, which a JSON parser accepted, as a ``JSONValue`` could still fail. Swift's decoder
    /// refuses only two things a parser accepts: a number beyond a `Double`'s range (which takes an exponent or more
    /// than 308 digits) and a `\u` escape of half a surrogate pair (`\uD800`–`\uDFFF`). Text with neither decodes;
    /// text with a number with an exponent, a number of over 300 characters, or such an escape may not.
    ///
    /// In valid JSON a backslash only appears in strings, where it starts an escape, and a letter `e` outside them only
    /// after a digit when it is an exponent (in `true` and `false` it follows a letter): the walk needs no more state
    /// than where it is and how long the number it is in has run.
    var mayNotDecode: Bool {
        let bytes = Array(self.text.utf8)
        var index = 0
        var numberLength = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                numberLength = 0
                index += 1
                while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                    guard bytes[index] == UInt8(ascii: "\\") else {
                        index += 1
                        continue
                    }
                    if index + 3 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"), Self.startsHalfSurrogate(bytes[index + 2], bytes[index + 3]) {
                        return true
                    }
                    index += 2
                }
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                if index > 0, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index - 1]) { return true }
                numberLength = 0
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
                numberLength += 1
                if numberLength > 300 { return true }
            default:
                numberLength = 0
            }
            index += 1
        }
        return false
    }

    /// Whether a `\u` escape whose first two hex digits are these lies in D800–DFFF: `d`, then 8, 9 or a–f (either case).
    private static func startsHalfSurrogate(_ first: UInt8, _ second: UInt8) -> Bool {
        first | 0x20 == UInt8(ascii: "d") && (second == UInt8(ascii: "8") || second == UInt8(ascii: "9") || second | 0x20 >= UInt8(ascii: "a"))
    }
}
