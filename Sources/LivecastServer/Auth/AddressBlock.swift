import Foundation
import Glibc

/// An IP address block in CIDR form (`10.0.0.0/8`, `2001:db8::/32`), or a single address (`192.0.2.7`, `::1`).
struct AddressBlock: Sendable, Hashable {
    /// The block's address bytes: 4 for IPv4, 16 for IPv6.
    private let bytes: [UInt8]
    /// How many leading bits an address must share with ``bytes``.
    private let prefixLength: Int

    /// Reads `ADDRESS` or `ADDRESS/BITS`; `nil` when it is neither.
    init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let bytes = Self.addressBytes(String(parts[0])) else { return nil }
        let maximum = bytes.count * 8
        if parts.count == 2 {
            guard let length = Int(parts[1]), (0...maximum).contains(length) else { return nil }
            self.prefixLength = length
        } else {
            self.prefixLength = maximum
        }
        self.bytes = bytes
    }

    /// Whether an address (text, as a socket or `X-Forwarded-For` gives it) lies in the block. IPv4 addresses
    /// mapped into IPv6 (`::ffff:192.0.2.7`) count as IPv4.
    func contains(_ address: some StringProtocol) -> Bool {
        guard let other = Self.addressBytes(String(address)), other.count == self.bytes.count else { return false }
        var remaining = self.prefixLength
        for (mine, theirs) in zip(self.bytes, other) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            guard mine & mask == theirs & mask else { return false }
            remaining -= bits
        }
        return true
    }

    /// The key an address is rate-limited under: an IPv4 address itself, an IPv6 address by its /64, the block
    /// one subscriber (a home, a phone) is given, so a client cannot pick a fresh address for each request.
    /// Text that is no address is its own key.
    static func rateLimitKey(of address: String) -> String {
        guard let bytes = Self.addressBytes(address) else { return address }
        guard bytes.count == 16 else { return bytes.map(String.init).joined(separator: ".") }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }

    /// The bytes of an IPv4 or IPv6 address (brackets and an IPv6 zone allowed), IPv4-mapped IPv6 as IPv4.
    static func addressBytes(_ text: String) -> [UInt8]? {
        var text = text.trimmingCharacters(in: CharacterSet(charactersIn: "[] "))
        if let zone = text.firstIndex(of: "%") { text = String(text[..<zone]) }
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, text, &bytes) == 1 else { return nil }
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        return Array(bytes.prefix(12)) == mappedPrefix ? Array(bytes.suffix(4)) : bytes
    }
}
