import Crypto
package import Foundation

/// A webhook endpoint's signing secret, `whsec_` and 32 random bytes in base64url: shown once when made, stored
/// only sealed under the master key, bound to its endpoint. Deliveries sign with HMAC-SHA256 keyed by the whole
/// secret's UTF-8 bytes.
package struct WebhookSecret: Sendable, Hashable, CustomStringConvertible {
    /// The secret as the operator copies it.
    package let text: String

    /// A new random secret.
    package static func random() -> WebhookSecret {
        let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
        let base64url = bytes.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return WebhookSecret(text: "whsec_" + base64url)
    }

    package init(text: String) {
        self.text = text
    }

    /// The secret sealed for `endpointID` under `masterKey`.
    package func sealed(for endpointID: UUID, with masterKey: MasterKey) -> Data {
        masterKey.seal(Data(self.text.utf8), context: Self.context(endpointID))
    }

    /// Opens a secret ``sealed(for:with:)`` made. - Throws: ``StoreError`` when the master key is not the one that
    /// sealed it.
    package static func open(_ sealed: Data, for endpointID: UUID, with masterKey: MasterKey) throws(StoreError) -> WebhookSecret {
        WebhookSecret(text: String(decoding: try masterKey.open(sealed, context: Self.context(endpointID)), as: UTF8.self))
    }

    private static func context(_ endpointID: UUID) -> String {
        "webhook:" + endpointID.uuidString.lowercased()
    }

    package var description: String { "WebhookSecret(<redacted>)" }
}
