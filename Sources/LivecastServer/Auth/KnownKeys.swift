import Crypto
import Foundation
import Synchronization

/// The keys that have authenticated in this process and not failed since, by the SHA-256 of the whole key (never
/// the key itself): such a key is never refused for failures counted against its client's address. A key that
/// fails (a revoked one, or a guess at its secret) is forgotten, so it is treated like any unknown key.
final class KnownKeys: Sendable {
    /// Beyond this many, the set starts again empty (each key is then looked up before it is let past a refused
    /// address once more).
    static let capacity = 100_000

    private let digests = Mutex<Set<SHA256.Digest>>([])

    func contains(_ key: String) -> Bool {
        let digest = Self.digest(key)
        return self.digests.withLock { $0.contains(digest) }
    }

    func insert(_ key: String) {
        let digest = Self.digest(key)
        self.digests.withLock { digests in
            if digests.count >= Self.capacity { digests.removeAll() }
            digests.insert(digest)
        }
    }

    func remove(_ key: String) {
        let digest = Self.digest(key)
        _ = self.digests.withLock { $0.remove(digest) }
    }

    private static func digest(_ key: String) -> SHA256.Digest {
        SHA256.hash(data: Data(key.utf8))
    }
}
