import Crypto
import Foundation
import LivecastCore

/// A provider token (ES256 JWT) whose signature checked out against a trusted key.
struct ProviderToken: Hashable {
    /// `iss`: the team id.
    var teamID: String
    /// `kid`: the key id.
    var keyID: String
    /// `iat`: when the token was issued, in seconds since 1970.
    var issuedAt: Int

    /// Checks a JWT's structure and signature, in APNs' order of reasons.
    /// - Returns: The token's claims.
    /// - Throws: `InvalidProviderToken` (403) for any structural or signature fault.
    static func verify(_ jwt: String, trustedKeys: [String: TrustedKey]) throws(APNsFailure) -> ProviderToken {
        let invalid = APNsFailure(403, "InvalidProviderToken")
        guard let token = CompactJWT(jwt) else { throw invalid }
        // `iat` must be a JSON number of whole seconds: a quoted number is invalid.
        guard token.header["alg"] == .string("ES256"),
            let keyID = token.header["kid"]?.stringValue,
            let teamID = token.claims["iss"]?.stringValue,
            case .int(let issuedAt) = token.claims["iat"]
        else { throw invalid }
        guard let key = trustedKeys[Self.keyName(teamID: teamID, keyID: keyID)],
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: token.signature),
            key.publicKey.isValidSignature(signature, for: token.signingInput)
        else { throw invalid }
        return ProviderToken(teamID: teamID, keyID: keyID, issuedAt: issuedAt)
    }

    /// The lookup name of a trusted key.
    static func keyName(teamID: String, keyID: String) -> String {
        "\(teamID):\(keyID)"
    }
}
