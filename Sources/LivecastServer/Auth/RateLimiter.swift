import Foundation
import Synchronization

/// A token bucket per key (an API key's id, or a client's address): `burst` requests at once, refilled at
/// `ratePerSecond`. Buckets that have refilled completely are dropped once there are many, so a flood of
/// distinct keys cannot grow it without end.
package final class RateLimiter<Key: Hashable & Sendable>: Sendable {
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

    private struct State {
        var buckets: [Key: Bucket] = [:]
        /// The size at which full buckets are next dropped.
        var pruneAt: Int
    }

    private let configuration: RateLimit
    private let state: Mutex<State>

    package init(configuration: RateLimit) {
        self.configuration = configuration
        self.state = Mutex(State(pruneAt: Self.minimumPruneSize))
    }

    /// How many keys have a bucket.
    var bucketCount: Int { self.state.withLock { $0.buckets.count } }

    /// Below this many buckets, none is dropped.
    static var minimumPruneSize: Int { 10_000 }

    /// Takes a token from a key's bucket, if it has one, as of `now` (the current time unless a test says).
    func take(for key: Key, at now: ContinuousClock.Instant = ContinuousClock.now) -> Decision {
        self.state.withLock { state in
            var bucket = self.refilled(state.buckets[key], at: now)
            defer {
                state.buckets[key] = bucket
                if state.buckets.count >= state.pruneAt { self.prune(&state, at: now) }
            }
            guard bucket.tokens >= 1 else { return self.limited(bucket) }
            bucket.tokens -= 1
            return .allowed
        }
    }

    /// Whether a key's bucket is empty as of `now`, without taking from it.
    func check(_ key: Key, at now: ContinuousClock.Instant = ContinuousClock.now) -> Decision {
        self.state.withLock { state in
            let bucket = self.refilled(state.buckets[key], at: now)
            return bucket.tokens >= 1 ? .allowed : self.limited(bucket)
        }
    }

    private func refilled(_ bucket: Bucket?, at now: ContinuousClock.Instant) -> Bucket {
        guard let bucket else { return Bucket(tokens: self.configuration.burst, updated: now) }
        let elapsed = now - bucket.updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return Bucket(tokens: min(self.configuration.burst, bucket.tokens + seconds * self.configuration.ratePerSecond), updated: now)
    }

    private func limited(_ bucket: Bucket) -> Decision {
        .limited(retryAfter: max(1, Int(((1 - bucket.tokens) / self.configuration.ratePerSecond).rounded(.up))))
    }

    /// Drops the buckets that have refilled completely (they are the same as no bucket).
    private func prune(_ state: inout State, at now: ContinuousClock.Instant) {
        state.buckets = state.buckets.filter { self.refilled($0.value, at: now).tokens < self.configuration.burst }
        state.pruneAt = max(Self.minimumPruneSize, state.buckets.count * 2)
    }
}

/// How fast and how bursty one key may call.
package struct RateLimit: Sendable, Hashable {
    /// Sustained requests per second.
    package var ratePerSecond: Double
    /// Requests allowed at once after a quiet spell.
    package var burst: Double

    package init(ratePerSecond: Double, burst: Double) {
        self.ratePerSecond = ratePerSecond
        self.burst = burst
    }

    /// An API key's default: 50 requests a second, bursts of 100.
    package static let perKey = RateLimit(ratePerSecond: 50, burst: 100)
    /// A client address's failed authentications: 20 at once, then one a second.
    package static let failedAuthentications = RateLimit(ratePerSecond: 1, burst: 20)
}
