/// APNs device tokens (push-to-start and per-activity update tokens) as hex text.
public enum DeviceToken {
    /// The most hex digits a token may have: 100 bytes. Apple says not to assume a length (tokens are 32 bytes
    /// today), so the cap leaves room to grow while keeping a token well inside a PostgreSQL index entry.
    public static let maximumHexDigits = 200

    /// The token in lowercase, or `nil` unless it is hex of even length (whole bytes), 2 to
    /// ``maximumHexDigits`` digits.
    ///
    /// Byte by byte, and inlinable so that callers get a version specialised for their string type: the generic one
    /// walked the text through protocol witnesses, a visible share of a bulk import's time (thousands of tokens a
    /// request) and of the APNs emulator's per push.
    @inlinable
    public static func normalized(_ text: some StringProtocol) -> String? {
        let utf8 = text.utf8
        guard !utf8.isEmpty, utf8.count <= Self.maximumHexDigits, utf8.count % 2 == 0 else { return nil }
        var isLowercase = true
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): continue
            case UInt8(ascii: "A")...UInt8(ascii: "F"): isLowercase = false
            default: return nil
            }
        }
        guard !isLowercase else { return String(text) }
        return String(decoding: utf8.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "F") ? $0 + 32 : $0 }, as: UTF8.self)
    }
}
