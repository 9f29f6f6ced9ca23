/// APNs device tokens (push-to-start and per-activity update tokens) as hex text.
public enum DeviceToken {
    /// The most hex digits a token may have: 100 bytes. Apple says not to assume a length (tokens are 32 bytes
    /// today), so the cap leaves room to grow while keeping a token well inside a PostgreSQL index entry.
    public static let maximumHexDigits = 200

    /// The token in lowercase, or `nil` unless it is hex of even length (whole bytes), 2 to
    /// ``maximumHexDigits`` digits.
    /// Inlinable so that callers get a version specialised for their string type (the generic one walks the text
    /// through protocol witnesses, a visible share of the APNs emulator's time per push).
    @inlinable
    public static func normalized(_ text: some StringProtocol) -> String? {
        guard !text.isEmpty, text.utf8.count <= Self.maximumHexDigits, text.utf8.count % 2 == 0,
            text.utf8.allSatisfy(\.isASCIIHexDigit)
        else { return nil }
        return text.lowercased()
    }
}

extension UInt8 {
    @usableFromInline
    var isASCIIHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
