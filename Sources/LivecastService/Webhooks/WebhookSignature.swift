import Crypto
import Foundation
package import LivecastStore

/// The `Livecast-Signature` header of a delivery: `t=<unix seconds>,v1=<hex>`, each `v1` an HMAC-SHA256 over
/// `"<t>.<body>"` keyed by a secret's UTF-8 bytes; a second `v1` by the previous secret during a rotation. A receiver
/// accepts the request when any `v1` matches one of its secrets and `t` is recent.
package enum WebhookSignature {
    /// The header's value for `body` sent at `timestamp`, signed by each of `secrets` in turn.
    package static func header(body: String, timestamp: Int64, secrets: [WebhookSecret]) -> String {
        (["t=\(timestamp)"] + secrets.map { "v1=" + self.code(body: body, timestamp: timestamp, secret: $0) }).joined(separator: ",")
    }

    /// The hex HMAC-SHA256 of `"<timestamp>.<body>"` keyed by `secret`'s UTF-8 bytes.
    package static func code(body: String, timestamp: Int64, secret: WebhookSecret) -> String {
        let key = SymmetricKey(data: Data(secret.text.utf8))
        let mac = HMAC<SHA256>.authenticationCode(for: Data("\(timestamp).\(body)".utf8), using: key)
        return mac.map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}
