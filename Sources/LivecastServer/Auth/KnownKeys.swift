import Crypto
import Synchronization

/// The keys that have authenticated in this process and not failed since, by the SHA-256 of the whole key (never
/// the key itself): such a key is never refused for failures counted against its client's address. A key that
/// fails (a revoked one, or a guess at its secret) is forgotten, so it is treated like any unknown key.
final class KnownKeys: Sendable {
    /// Beyond this many, the set starts again empty (each key is then looked up before it is let past a refused
    /// address once more).
    static let capacity = 100_000

    private let digests = Mutex<Set<SHA256.Digest>>([])

    func contains(_ key: PresentedKey) -> Bool {
        self.digests.withLock { $0.contains(key.digest) }
    }

    func insert(_ key: PresentedKey) {
        self.digests.withLock { digests in
            if digests.count >= Self.capacity { digests.removeAll() }
            digests.insert(key.digest)
        }
    }

    func remove(_ key: PresentedKey) {
        _ = self.digests.withLock { $0.remove(key.digest) }
    }
}
