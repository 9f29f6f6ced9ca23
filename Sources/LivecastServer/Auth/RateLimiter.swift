import Foundation
import Synchronization

/// A token bucket per API key: `burst` requests at once, refilled at `ratePerSecond`.
public final class RateLimiter: Sendable {
    /// How fast and how bursty one key may call.
    public struct Configuration: Sendable, Hashable {
        /// Sustained requests per second. Defaults to 50.
        public var ratePerSecond: Double
        /// Requests allowed at once after a quiet spell. Defaults to 100.
        public var burst: Double

        public init(ratePerSecond: Double = 50, burst: Double = 100) {
            self.ratePerSecond = ratePerSecond
            self.burst = burst
        }
    }

    /// Whether a request may go ahead.
    enum Decision: Hashable {
        case allowed
        /// Refused; a token is available after this many whole seconds.
        case limited(retryAfter: Int)
    }

    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let configuration: Configuration
    private let buckets = Mutex<[Int64: Bucket]>([:])

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// Takes a token from a key's bucket, if it has one, as of `now` (the current time unless a test says).
    func take(for keyID: Int64, at now: ContinuousClock.Instant = ContinuousClock.now) -> Decision {
        let (rate, burst) = (self.configuration.ratePerSecond, self.configuration.burst)
        return self.buckets.withLock { buckets in
            var bucket = buckets[keyID] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + seconds * rate)
            bucket.updated = now
            defer { buckets[keyID] = bucket }
            guard bucket.tokens >= 1 else {
                return .limited(retryAfter: max(1, Int(((1 - bucket.tokens) / rate).rounded(.up))))
            }
            bucket.tokens -= 1
            return .allowed
        }
    }
}
