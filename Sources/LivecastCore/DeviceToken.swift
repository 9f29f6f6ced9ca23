/// APNs device tokens (push-to-start and per-activity update tokens) as hex text.
public enum DeviceToken {
    /// The token in lowercase, or `nil` when it is not non-empty hex of even length (whole bytes).
    /// Apple says not to assume a length, so none is checked.
    public static func normalized(_ text: some StringProtocol) -> String? {
        guard !text.isEmpty, text.utf8.count % 2 == 0, text.utf8.allSatisfy(\.isASCIIHexDigit) else { return nil }
        return text.lowercased()
    }
}

extension UInt8 {
    fileprivate var isASCIIHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
