public import Crypto
import Foundation

/// A provider-token signing key the emulator accepts: team id and key id, and the key's public half.
public struct TrustedKey: Sendable {
    /// The 10-character team id (`iss`).
    public var teamID: String
    /// The 10-character key id (`kid`).
    public var keyID: String
    /// The public key that verifies the token's signature.
    public var publicKey: P256.Signing.PublicKey
    /// The one environment (`sandbox` or `production`) the key is for; on the other, its tokens are answered
    /// `403 BadEnvironmentKeyIdInToken`. `nil`: both. Defaults to `nil`.
    public var environment: String?

    /// Creates a trusted key from its public key.
    /// - Parameters:
    ///   - teamID: The team id tokens carry as `iss`.
    ///   - keyID: The key id tokens carry as `kid`.
    ///   - publicKey: The public key.
    ///   - environment: The one environment the key is for. Defaults to both.
    public init(teamID: String, keyID: String, publicKey: P256.Signing.PublicKey, environment: String? = nil) {
        self.teamID = teamID
        self.keyID = keyID
        self.publicKey = publicKey
        self.environment = environment
    }

    /// Creates a trusted key from PEM text: a `.p8` private key (PKCS#8) or a public key.
    /// - Parameters:
    ///   - teamID: The team id tokens carry as `iss`.
    ///   - keyID: The key id tokens carry as `kid`.
    ///   - pem: The PEM text.
    /// - Throws: ``TrustedKey/LoadError`` when the text is neither kind of P-256 key.
    public init(teamID: String, keyID: String, pem: String) throws(LoadError) {
        if let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            self.init(teamID: teamID, keyID: keyID, publicKey: privateKey.publicKey)
        } else if let publicKey = try? P256.Signing.PublicKey(pemRepresentation: pem) {
            self.init(teamID: teamID, keyID: keyID, publicKey: publicKey)
        } else {
            throw LoadError(message: "not a P-256 private key (.p8) or public key in PEM form")
        }
    }

    /// Parses the command-line form `TEAMID:KEYID:PATH` and reads the key file.
    /// - Parameter specification: `TEAMID:KEYID:PATH`.
    /// - Throws: ``TrustedKey/LoadError`` naming what is wrong.
    public init(specification: String) throws(LoadError) {
        let parts = specification.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else {
            throw LoadError(message: "expected TEAMID:KEYID:PATH, got '\(specification)'")
        }
        let path = String(parts[2])
        guard let pem = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw LoadError(message: "cannot read key file '\(path)'")
        }
        do {
            try self.init(teamID: String(parts[0]), keyID: String(parts[1]), pem: pem)
        } catch {
            throw LoadError(message: "\(path): \(error.message)")
        }
    }

    /// A key that cannot be loaded.
    public struct LoadError: Error, CustomStringConvertible {
        /// What is wrong.
        public let message: String
        public var description: String { self.message }
    }
}
