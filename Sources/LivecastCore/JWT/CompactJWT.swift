package import Foundation

/// A JSON Web Token in compact serialisation (`header.claims.signature`, each unpadded base64url), taken apart but
/// not yet trusted: whoever reads it checks ``signature`` over ``signingInput`` with the key the header names.
///
/// The APNs emulator reads provider tokens this way, and the server the identity assertions an app's backend signs.
package struct CompactJWT: Sendable {
    /// The JOSE header's members (`alg`, `kid`, …).
    package var header: [String: JSONValue]
    /// The claims (`iss`, `sub`, `aud`, `exp`, …).
    package var claims: [String: JSONValue]
    /// The signature's bytes (for ES256, the raw 64-byte `r‖s`).
    package var signature: Data
    /// What the signature signs: the first two parts as sent, with their dot.
    package var signingInput: Data

    /// Takes a token apart; `nil` unless it has three parts of unpadded base64url, the first two JSON objects.
    package init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URLEncoded: parts[0]),
            let claimsData = Data(base64URLEncoded: parts[1]),
            let signature = Data(base64URLEncoded: parts[2]),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: claimsData)
        else { return nil }
        self.header = header
        self.claims = claims
        self.signature = signature
        self.signingInput = Data("\(parts[0]).\(parts[1])".utf8)
    }
}

extension Data {
    /// Decodes unpadded base64url, as used by JWTs; `nil` for padded or other text.
    package init?(base64URLEncoded text: some StringProtocol) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
