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
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerData = Data(base64URLEncoded: parts[0]),
            let claimsData = Data(base64URLEncoded: parts[1]),
            let signatureData = Data(base64URLEncoded: parts[2]),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData),
            let claims = try? JSONDecoder().decode([String: JSONValue].self, from: claimsData)
        else { throw invalid }
        // `iat` must be a JSON number of whole seconds: a quoted number is invalid.
        guard header["alg"] == .string("ES256"),
            let keyID = header["kid"]?.stringValue,
            let teamID = claims["iss"]?.stringValue,
            case .int(let issuedAt) = claims["iat"]
        else { throw invalid }
        guard let key = trustedKeys[Self.keyName(teamID: teamID, keyID: keyID)],
            let signature = try? P256.Signing.ECDSASignature(rawRepresentation: signatureData),
            key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8))
        else { throw invalid }
        return ProviderToken(teamID: teamID, keyID: keyID, issuedAt: issuedAt)
    }

    /// The lookup name of a trusted key.
    static func keyName(teamID: String, keyID: String) -> String {
        "\(teamID):\(keyID)"
    }

}

extension Data {
    /// Decodes unpadded base64url, as used by JWTs.
    init?(base64URLEncoded text: Substring) {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        self.init(base64Encoded: base64)
    }
}
