#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which IP addresses a webhook may be delivered to: the public internet only, never this host, the private
/// network, link-local addresses (the cloud metadata service at 169.254.169.254) or carrier-grade NAT, unless the
/// operator allows it. Both the registration of an endpoint and each delivery ask.
package enum WebhookAddress {
    /// Whether `address`, an IPv4 or IPv6 literal (`203.0.113.7`, `2001:db8::1`, `[::1]`), is a public unicast
    /// address.
    ///
    /// - Returns: `nil` when `address` is not an IP literal (a host name, say); `false` for loopback, private
    ///   (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10), unspecified, "this network"
    ///   (0/8), CGNAT (100.64/10), multicast, broadcast and reserved addresses, and for the IPv4-mapped (and
    ///   IPv4-compatible, NAT64 well-known prefix) IPv6 forms of those; `true` otherwise.
    package static func isPublic(_ address: String) -> Bool? {
        let literal = unbracketed(address)
        if let v4 = ipv4(literal) {
            return isPublicIPv4(v4)
        }
        if let v6 = ipv6(literal) {
            return isPublicIPv6(v6)
        }
        return nil
    }

    /// Whether `address` names this host: an address in 127/8, `::1` (or its IPv4-mapped form of 127/8), or the
    /// host name `localhost` (any case, with or without a trailing dot).
    package static func isLoopback(_ address: String) -> Bool {
        let literal = unbracketed(address)
        let name = literal.lowercased()
        if name == "localhost" || name == "localhost." {
            return true
        }
        if let v4 = ipv4(literal) {
            return v4.0 == 127
        }
        if let v6 = ipv6(literal) {
            if v6.dropLast().allSatisfy({ $0 == 0 }) && v6[15] == 1 {
                return true
            }
            if let mapped = embeddedIPv4(v6) {
                return mapped.0 == 127
            }
        }
        return false
    }

    private typealias IPv4 = (UInt8, UInt8, UInt8, UInt8)

    private static func unbracketed(_ address: String) -> String {
        if address.hasPrefix("[") && address.hasSuffix("]") && address.count >= 2 {
            return String(address.dropFirst().dropLast())
        }
        return address
    }

    /// The four bytes of a dotted-quad IPv4 literal (inet_pton's strict form: no octal, no short forms).
    private static func ipv4(_ text: String) -> IPv4? {
        var storage = in_addr()
        guard inet_pton(AF_INET, text, &storage) == 1 else {
            return nil
        }
        return withUnsafeBytes(of: &storage) { ($0[0], $0[1], $0[2], $0[3]) }
    }

    /// The sixteen bytes of an IPv6 literal; a zone (`fe80::1%eth0`) is ignored.
    private static func ipv6(_ text: String) -> [UInt8]? {
        let withoutZone = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? text
        var storage = in6_addr()
        guard inet_pton(AF_INET6, withoutZone, &storage) == 1 else {
            return nil
        }
        return withUnsafeBytes(of: &storage) { Array($0) }
    }

    private static func isPublicIPv4(_ a: IPv4) -> Bool {
        switch (a.0, a.1) {
        case (0, _): false  // "this network", including the unspecified 0.0.0.0
        case (10, _): false  // private
        case (100, 64...127): false  // carrier-grade NAT
        case (127, _): false  // loopback
        case (169, 254): false  // link-local, the metadata service
        case (172, 16...31): false  // private
        case (192, 0) where a.2 == 0: false  // IETF protocol assignments
        case (192, 168): false  // private
        case (198, 18...19): false  // benchmarking
        case (224...255, _): false  // multicast, reserved, broadcast
        default: true
        }
    }

    private static func isPublicIPv6(_ b: [UInt8]) -> Bool {
        if let v4 = embeddedIPv4(b) {
            return isPublicIPv4(v4)
        }
        if b.allSatisfy({ $0 == 0 }) {
            return false  // unspecified
        }
        if b.dropLast().allSatisfy({ $0 == 0 }) && b[15] == 1 {
            return false  // loopback
        }
        if b[0] & 0xfe == 0xfc {
            return false  // unique local, fc00::/7
        }
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 {
            return false  // link-local, fe80::/10
        }
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 {
            return false  // deprecated site-local, fec0::/10
        }
        if b[0] == 0xff {
            return false  // multicast
        }
        return true
    }

    /// The IPv4 address an IPv6 address carries: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d, but not
    /// :: or ::1) or the NAT64 well-known prefix (64:ff9b::a.b.c.d).
    private static func embeddedIPv4(_ b: [UInt8]) -> IPv4? {
        let tail = (b[12], b[13], b[14], b[15])
        let firstTen = b[0..<10].allSatisfy { $0 == 0 }
        if firstTen && b[10] == 0xff && b[11] == 0xff {
            return tail
        }
        if firstTen && b[10] == 0 && b[11] == 0 && !(b[12] == 0 && b[13] == 0 && b[14] == 0) {
            return tail
        }
        if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4..<12].allSatisfy({ $0 == 0 }) {
            return tail
        }
        return nil
    }
}
