import Testing

@testable import LivecastKit

/// Backoff, jitter and `Retry-After`: no network. Which answers are retried is in `ReportVerdictTests`.
@Suite struct RetryPolicyTests {
    private let policy = RetryPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(60), maximumRetryAfter: .seconds(120))

    @Test func theBackoffDoublesWithEqualJitterUpToItsMaximum() {
        #expect(self.policy.delay(afterFailures: 1, random: 1) == .seconds(1))
        #expect(self.policy.delay(afterFailures: 1, random: 0) == .milliseconds(500))
        #expect(self.policy.delay(afterFailures: 2, random: 1) == .seconds(2))
        #expect(self.policy.delay(afterFailures: 4, random: 0.5) == .seconds(6))
        #expect(self.policy.delay(afterFailures: 7, random: 1) == .seconds(60))
        #expect(self.policy.delay(afterFailures: 1_000, random: 1) == .seconds(60))
        for _ in 0..<100 {
            let delay = self.policy.delay(afterFailures: 3)
            #expect(delay >= .seconds(2) && delay <= .seconds(4))
        }
    }

    @Test func retryAfterIsNeverUndercutAndIsCapped() {
        #expect(self.policy.delay(afterFailures: 1, retryAfter: .seconds(30), random: 1) == .seconds(30))
        #expect(self.policy.delay(afterFailures: 7, retryAfter: .seconds(2), random: 1) == .seconds(60))
        #expect(self.policy.delay(afterFailures: 1, retryAfter: .seconds(86_400), random: 1) == .seconds(120))
    }

    @Test func retryAfterIsReadInSeconds() {
        #expect(HTTPTransport.retryAfter("7") == .seconds(7))
        #expect(HTTPTransport.retryAfter(" 2 ") == .seconds(2))
        #expect(HTTPTransport.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
        #expect(HTTPTransport.retryAfter(nil) == nil)
    }
}
