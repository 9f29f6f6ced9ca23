extension RawJSON {
    /// Whether decoding this text, which a JSON parser accepted, as a ``JSONValue`` could still fail. Swift's decoder
    /// refuses only two things a parser accepts: a number beyond a `Double`'s range (which takes an exponent or more
    /// than 308 digits) and a `\u` escape of half a surrogate pair (`\uD800`–`\uDFFF`). Text with neither decodes;
    /// text with a number with an exponent, a number of over 300 characters, or such an escape may not.
    var mayNotDecode: Bool {
        var risks = DecodingRisks()
        return self.text.utf8.contains { risks.read($0) }
    }
}

/// Reads JSON text a byte at a time, telling where a number or an escape could keep it from decoding.
private struct DecodingRisks {
    private var isInString = false
    private var isEscaped = false
    /// After `\u`: how many of its hex digits have been read (0 or 1).
    private var unicodeDigitsRead: Int?
    private var firstUnicodeDigit: UInt8 = 0
    /// The characters of the number being read so far.
    private var numberLength = 0
    private var previous: UInt8 = 0

    /// Reads `byte`; `true` when it makes the text one that may not decode.
    mutating func read(_ byte: UInt8) -> Bool {
        defer { self.previous = byte }
        if self.isInString { return self.readInString(byte) }
        switch byte {
        case UInt8(ascii: "\""):
            self.isInString = true
            self.numberLength = 0
        case UInt8(ascii: "e"), UInt8(ascii: "E"):
            // An exponent follows a digit; the `e` of `true` and `false` follows a letter.
            if Self.isDigit(self.previous) { return true }
            self.numberLength = 0
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
            self.numberLength += 1
            if self.numberLength > 300 { return true }
        default:
            self.numberLength = 0
        }
        return false
    }

    private mutating func readInString(_ byte: UInt8) -> Bool {
        if let read = self.unicodeDigitsRead {
            guard read == 1 else {
                self.firstUnicodeDigit = byte
                self.unicodeDigitsRead = 1
                return false
            }
            self.unicodeDigitsRead = nil
            // D800–DFFF: `d`, then one of 8, 9 and a–f (hex digits in either case).
            return self.firstUnicodeDigit | 0x20 == UInt8(ascii: "d")
                && (byte == UInt8(ascii: "8") || byte == UInt8(ascii: "9") || byte | 0x20 >= UInt8(ascii: "a"))
        }
        if self.isEscaped {
            self.isEscaped = false
            if byte == UInt8(ascii: "u") { self.unicodeDigitsRead = 0 }
        } else if byte == UInt8(ascii: "\\") {
            self.isEscaped = true
        } else if byte == UInt8(ascii: "\"") {
            self.isInString = false
        }
        return false
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
