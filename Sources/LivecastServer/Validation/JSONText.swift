/// Facts about JSON text that a parser does not report.
enum JSONText {
    /// Whether the text, which a JSON parser accepted, spells U+0000 in a string (`\u0000`). A raw NUL byte is not
    /// valid JSON, and in valid JSON a backslash only appears in strings, where it starts a two-byte escape or a
    /// `\uXXXX` one: so a walk that takes each escape whole finds every NUL, and `\\u0000` (a backslash, then text)
    /// is not one.
    static func holdsEscapedNUL(_ bytes: some Collection<UInt8>) -> Bool {
        let bytes = Array(bytes)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "\\") else {
                index += 1
                continue
            }
            if index + 5 < bytes.count, bytes[index + 1] == UInt8(ascii: "u"),
                bytes[(index + 2)...(index + 5)].allSatisfy({ $0 == UInt8(ascii: "0") })
            {
                return true
            }
            index += 2
        }
        return false
    }
}
