import Foundation

/// Where a webhook endpoint's deliveries are POSTed, checked when an operator names it: an absolute URL of at most
/// 2,048 characters, `https` (or `http` to this host only), with no user information, whose host is not an address
/// of this host, the private network or the link-local range (the cloud metadata service at 169.254.169.254) unless
/// the operator allows private addresses (`webhook-allow-private`). A host name is checked again when each delivery
/// resolves it (``WebhookAddress``).
package struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    /// The longest URL accepted, in characters (Unicode scalars, as JSON Schema's `maxLength` counts).
    package static let maximumLength = 2048

    /// The URL as the operator gave it.
    package let text: String

    /// Checks `text`.
    /// - Parameter allowPrivate: Accept hosts that are addresses of this host, the private network or the link-local
    ///   range (and `localhost`).
    /// - Throws: ``StoreError`` `invalid`, field `url`, saying what is wrong.
    package init(_ text: String, allowPrivate: Bool) throws(StoreError) {
        guard !text.isEmpty else { throw Self.refusal("url must not be empty") }
        guard text.unicodeScalars.count <= Self.maximumLength else { throw Self.refusal("url is longer than \(Self.maximumLength) characters") }
        guard !text.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F }) else {
            throw Self.refusal("url must not hold white space or control characters")
        }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw Self.refusal("url must be an absolute URL, such as https://example.com/livecast")
        }
        guard scheme == "https" || scheme == "http" else { throw Self.refusal("url must be https (not \(scheme))") }
        guard components.user == nil, components.password == nil else {
            throw Self.refusal("url must not hold a user name or password: put a credential in the path or check the signature")
        }
        guard let host = components.host, !host.isEmpty else { throw Self.refusal("url must name a host") }
        let address = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        let isLoopback = WebhookAddress.isLoopback(address)
        if Self.isNumericHost(address), WebhookAddress.isPublic(address) == nil {
            throw Self.refusal("url's host \(host) is not a host name nor a dotted-quad IPv4 or IPv6 address")
        }
        if isLoopback || WebhookAddress.isPublic(address) == false, !allowPrivate {
            throw Self.refusal(
                "url's host \(host) is an address of this host, the private network or the link-local range; such hosts are refused unless webhook-allow-private is set"
            )
        }
        guard scheme == "https" || isLoopback else {
            throw Self.refusal("url must be https: plain http is accepted only to this host (localhost, 127.0.0.1, [::1])")
        }
        self.text = text
    }

    package var description: String { self.text }

    /// A host whose last label is all digits, or `0x…`: an IPv4 address in some form (`2130706433`, `0x7f.1`,
    /// `127.1`) that resolvers read as one; only the dotted quad is accepted, so the check above sees the address.
    private static func isNumericHost(_ host: String) -> Bool {
        guard !host.contains(":") else { return true }
        let label = host.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return !label.isEmpty && (label.allSatisfy(\.isNumber) || label.hasPrefix("0x"))
    }

    private static func refusal(_ message: String) -> StoreError {
        StoreError(.invalid, message, field: "url")
    }
}
