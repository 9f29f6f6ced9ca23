import Foundation
import HTTPTypes
import Hummingbird

/// The reverse proxies whose `X-Forwarded-For` is believed (`--trusted-proxies`): a client's address is the peer's,
/// unless the peer is one of them; then it is the right-most forwarded address that is not itself a trusted proxy.
///
/// A client can write any `X-Forwarded-For` it likes, so the header is read only from a trusted peer, and only
/// from the right, where each trusted proxy appended the address it saw.
package struct TrustedProxies: Sendable, Hashable {
    private let blocks: [AddressBlock]

    /// Trusts no proxy: the client's address is always the peer's.
    package static let none = TrustedProxies(blocks: [])

    private init(blocks: [AddressBlock]) {
        self.blocks = blocks
    }

    /// Reads a comma-separated list of CIDR blocks or addresses, such as `10.0.0.0/8, 192.0.2.7, fd00::/8`.
    /// - Throws: ``TrustedProxiesError`` naming an entry that is neither.
    package init(parsing list: String) throws(TrustedProxiesError) {
        var blocks: [AddressBlock] = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !entry.isEmpty {
            guard let block = AddressBlock(entry) else { throw TrustedProxiesError(entry: entry) }
            blocks.append(block)
        }
        self.init(blocks: blocks)
    }

    /// Whether an address belongs to a trusted proxy.
    func contains(_ address: some StringProtocol) -> Bool {
        self.blocks.contains { $0.contains(address) }
    }

    /// Whether the client used https: the request came over TLS, or through a trusted proxy whose
    /// `X-Forwarded-Proto` says so.
    func isHTTPS(_ request: Request, peer: String?) -> Bool {
        if request.head.scheme == "https" { return true }
        guard let peer, self.contains(peer) else { return false }
        return request.headers[.xForwardedProto]?.lowercased() == "https"
    }

    /// The key a client is rate-limited under (``AddressBlock/rateLimitKey(of:)``, an IPv6 address's /64): its
    /// address, as ``clientAddress(peer:headers:)`` finds it.
    func rateLimitKey(peer: String?, headers: HTTPFields) -> String? {
        self.clientAddress(peer: peer, headers: headers).map(AddressBlock.rateLimitKey(of:))
    }

    /// The client's address: the peer's, or, when the peer is a trusted proxy, the right-most `X-Forwarded-For`
    /// address that is not a trusted proxy (the left-most when all are).
    /// - Parameters:
    ///   - peer: The socket's remote address.
    ///   - headers: The request's headers, every `X-Forwarded-For` field in order.
    func clientAddress(peer: String?, headers: HTTPFields) -> String? {
        guard let peer, self.contains(peer) else { return peer }
        let forwarded = headers[values: .xForwardedFor]
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
        guard !forwarded.isEmpty else { return peer }
        return forwarded.last { !self.contains($0) } ?? forwarded.first
    }
}

/// A `--trusted-proxies` entry that is neither an address nor a CIDR block.
package struct TrustedProxiesError: Error, CustomStringConvertible {
    /// The entry.
    package let entry: String
    package var description: String { "\(self.entry) is not an IP address or CIDR block (such as 10.0.0.0/8)" }
}

extension HTTPField.Name {
    /// `X-Forwarded-For`: the addresses a request came through, appended by each proxy.
    static let xForwardedFor = HTTPField.Name("X-Forwarded-For")!
}
