import Testing

@testable import LivecastServer

/// The token bucket, on a clock the test moves by hand.
@Suite struct RateLimiterTests {
    let start = ContinuousClock.now

    @Test func aBurstIsAllowedThenRefillsAtTheRate() {
        let limiter = RateLimiter<Int64>(configuration: .init(ratePerSecond: 0.5, burst: 3))
        for _ in 0..<3 {
            #expect(limiter.take(for: 1, at: self.start) == .allowed)
        }
        // Empty: one token takes 1 / 0.5 = 2 s.
        #expect(limiter.take(for: 1, at: self.start) == .limited(retryAfter: 2))
        // Half a token after 1 s: the other half takes one more second.
        #expect(limiter.take(for: 1, at: self.start + .seconds(1)) == .limited(retryAfter: 1))
        #expect(limiter.take(for: 1, at: self.start + .seconds(2)) == .allowed)
        #expect(limiter.take(for: 1, at: self.start + .seconds(2)) == .limited(retryAfter: 2))
    }

    @Test func aQuietSpellRefillsNoMoreThanTheBurst() {
        let limiter = RateLimiter<Int64>(configuration: .init(ratePerSecond: 10, burst: 2))
        #expect(limiter.take(for: 1, at: self.start) == .allowed)
        let later = self.start + .seconds(3600)
        #expect(limiter.take(for: 1, at: later) == .allowed)
        #expect(limiter.take(for: 1, at: later) == .allowed)
        #expect(limiter.take(for: 1, at: later) == .limited(retryAfter: 1))
    }

    @Test func eachKeyHasItsOwnBucket() {
        let limiter = RateLimiter<Int64>(configuration: .init(ratePerSecond: 1, burst: 1))
        #expect(limiter.take(for: 1, at: self.start) == .allowed)
        #expect(limiter.take(for: 1, at: self.start) == .limited(retryAfter: 1))
        #expect(limiter.take(for: 2, at: self.start) == .allowed)
    }

    @Test func checkingTakesNothing() {
        let limiter = RateLimiter<String>(configuration: .init(ratePerSecond: 1, burst: 1))
        #expect(limiter.check("10.0.0.1", at: self.start) == .allowed)
        #expect(limiter.check("10.0.0.1", at: self.start) == .allowed)
        #expect(limiter.take(for: "10.0.0.1", at: self.start) == .allowed)
        #expect(limiter.check("10.0.0.1", at: self.start) == .limited(retryAfter: 1))
    }

    @Test func fullBucketsAreDroppedOnceThereAreMany() {
        let limiter = RateLimiter<Int>(configuration: .init(ratePerSecond: 1, burst: 5))
        let count = RateLimiter<Int>.minimumPruneSize
        for key in 0..<count { _ = limiter.take(for: key, at: self.start) }
        // Each still misses a token, so none is dropped.
        #expect(limiter.bucketCount == count)
        let later = self.start + .seconds(60)
        for key in count..<(3 * count) { _ = limiter.take(for: key, at: later) }
        // The first ones refilled and were dropped; the later ones are kept.
        #expect(limiter.bucketCount == 2 * count)
        #expect(limiter.take(for: count, at: later) == .allowed)
    }
}
