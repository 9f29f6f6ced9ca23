import Crypto
import Foundation

/// The key that seals apps' `.p8` signing keys at rest (AES-256-GCM). Given as 32 bytes in base64 in a file, named by
/// `--master-key-file` (`LIVECAST_MASTER_KEY_FILE`); never by value (`MasterKey(reader:)` refuses
/// `LIVECAST_MASTER_KEY`). Its description never shows it.
package struct MasterKey: Sendable, CustomStringConvertible {
    let key: SymmetricKey

    /// Reads a base64 master key.
    /// - Throws: ``StoreError`` `invalid` unless the text decodes to exactly 32 bytes.
    package init(base64 text: String) throws(StoreError) {
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32 else {
            throw StoreError(.invalid, "the master key must be 32 bytes in base64 (openssl rand -base64 32)", field: "masterKey")
        }
        self.key = SymmetricKey(data: bytes)
    }

    /// Reads the master key from a file holding it in base64.
    package init(file path: String) throws(StoreError) {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw StoreError(.invalid, "cannot read the master key file \(path)", field: "masterKeyFile")
        }
        try self.init(base64: text)
    }

    /// A new random master key (for tests and first-time setup).
    package static func random() -> MasterKey {
        // 32 random bytes always make a valid key.
        try! MasterKey(base64: SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() })
    }

    /// Seals a secret, bound to `context` (for example the app it belongs to): nonce, ciphertext and tag.
    func seal(_ secret: Data, context: String) -> Data {
        // AES-GCM with a random nonce does not fail for inputs of this size.
        try! AES.GCM.seal(secret, using: self.key, authenticating: Data(context.utf8)).combined!
    }

    /// Opens what ``seal(_:context:)`` made with the same key and context.
    func open(_ sealed: Data, context: String) throws(StoreError) -> Data {
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let secret = try? AES.GCM.open(box, using: self.key, authenticating: Data(context.utf8))
        else {
            throw StoreError(.invalid, "the signing key cannot be opened with this master key", field: "masterKey")
        }
        return secret
    }

    package var description: String { "MasterKey(<redacted>)" }
}
