import Crypto
import Foundation

/// An API key as a request presented it, with the SHA-256 of the whole key that this process's caches know keys by
/// (``KnownKeys``, ``KeyCache``): never the key itself. The digest is taken once a request.
struct PresentedKey: Sendable {
    /// The key as presented.
    let text: String
    /// Its SHA-256.
    let digest: SHA256.Digest

    init(_ text: String) {
        self.text = text
        self.digest = SHA256.hash(data: Data(text.utf8))
    }
}
