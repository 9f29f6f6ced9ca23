public import Crypto
import Foundation

/// What signs provider tokens: the team id, the key id and the `.p8` signing key from Apple's developer portal.
///
/// The key never leaves this value: its description is redacted, and nothing logs it.
public struct APNsCredentials: Sendable, CustomStringConvertible {
    /// The 10-character team id (`iss`).
    public let teamID: String
    /// The 10-character key id (`kid`).
    public let keyID: String
    let privateKey: P256.Signing.PrivateKey

    /// Creates credentials from a `.p8` key's PEM text (PKCS#8).
    /// - Parameters:
    ///   - teamID: The team id.
    ///   - keyID: The key id.
    ///   - p8: The PEM text of the key.
    /// - Throws: ``APNsCredentials/KeyError`` when the text is not a P-256 private key.
    public init(teamID: String, keyID: String, p8: String) throws(KeyError) {
        guard let key = try? P256.Signing.PrivateKey(pemRepresentation: p8) else {
            throw KeyError(message: "not a P-256 private key in PEM (.p8) form")
        }
        self.init(teamID: teamID, keyID: keyID, privateKey: key)
    }

    /// Creates credentials from a `.p8` file.
    /// - Throws: ``APNsCredentials/KeyError`` when the file cannot be read or holds no P-256 key.
    public init(teamID: String, keyID: String, p8File path: String) throws(KeyError) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw KeyError(message: "cannot read key file \(path)")
        }
        do {
            try self.init(teamID: teamID, keyID: keyID, p8: text)
        } catch {
            throw KeyError(message: "\(path): \(error.message)")
        }
    }

    /// Creates credentials from a key already in memory.
    public init(teamID: String, keyID: String, privateKey: P256.Signing.PrivateKey) {
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
    }

    public var description: String {
        "APNsCredentials(teamID: \(self.teamID), keyID: \(self.keyID), key: <redacted>)"
    }

    /// A key that cannot be used.
    public struct KeyError: Error, CustomStringConvertible {
        /// What is wrong.
        public let message: String
        public var description: String { self.message }
    }
}
