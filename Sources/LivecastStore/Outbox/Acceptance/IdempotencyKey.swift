import Crypto
import Foundation

/// A request's `Idempotency-Key`, scoped to the route and target it was sent to, with a fingerprint of its body.
///
/// The same key sent to another route or target is another key. Sent again to the same one, it replays the first
/// answer when the body is the same, and is refused (``StoreError/Code/idempotencyKeyReused``) when it is not.
package struct IdempotencyKey: Sendable, Hashable {
    /// The key as the client sent it.
    package var key: String
    /// The route and target: the request's method and path, such as `POST /v1/apps/com.example/feeds/game/updates`.
    package var scope: String
    /// The SHA-256 of the request's body, in hex.
    package var fingerprint: String

    /// - Parameters:
    ///   - key: The `Idempotency-Key` header.
    ///   - scope: The request's method and path.
    ///   - body: The request's body, fingerprinted.
    package init(key: String, scope: String, body: some Sequence<UInt8>) {
        self.key = key
        self.scope = scope
        self.fingerprint = SHA256.hash(data: Array(body)).map { String(format: "%02x", $0) }.joined()
    }

    /// Refuses a kept request under this key whose body was another.
    /// - Parameter kept: The fingerprint stored with the first request (`nil` for one kept before fingerprints).
    /// - Throws: ``StoreError`` `idempotencyKeyReused` when the fingerprints differ.
    func checkSameRequest(as kept: String?) throws {
        guard let kept, kept != self.fingerprint else { return }
        throw StoreError(
            .idempotencyKeyReused,
            "this Idempotency-Key was used for a request with another body; use a new key for a new request",
            field: "Idempotency-Key"
        )
    }
}
