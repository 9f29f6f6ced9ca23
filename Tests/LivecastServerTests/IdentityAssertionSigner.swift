import Crypto
import Foundation

/// What an app's backend does to bind a user: signs a short-lived ES256 JWT with its identity key.
struct IdentityAssertionSigner {
    let keyID: String
    let key = P256.Signing.PrivateKey()

    /// The public key's PEM, as the admin registers it.
    var publicKeyPEM: String { self.key.publicKey.pemRepresentation }

    /// An assertion with these claims (numbers as JSON numbers).
    func sign(_ claims: [String: Any], keyID: String? = nil) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "typ": "JWT", "kid": keyID ?? self.keyID], options: [.sortedKeys])
        let body = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = "\(Self.base64URL(header)).\(Self.base64URL(body))"
        let signature = try self.key.signature(for: Data(input.utf8))
        return "\(input).\(Self.base64URL(signature.rawRepresentation))"
    }

    /// The usual claims: `sub`, `aud`, `deviceId` (none when `nil`), `exp` a few minutes ahead.
    func sign(
        user: String,
        device: String?,
        audience: String = "com.example.game",
        expiresIn seconds: Int = 300,
        extra: [String: Any] = [:]
    ) throws -> String {
        var claims: [String: Any] = ["sub": user, "aud": audience, "exp": Int(Date().timeIntervalSince1970) + seconds]
        if let device { claims["deviceId"] = device }
        claims.merge(extra) { _, new in new }
        return try self.sign(claims)
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
