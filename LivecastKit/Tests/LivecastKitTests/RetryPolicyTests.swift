import Testing

@testable import LivecastKit

/// Backoff, jitter, `Retry-After` and which answers are retried: no network.
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

    @Test func onlyNetworkErrorsThrottlingAndServerErrorsAreRetried() {
        let token = LivecastReport(.pushToStartToken(attributesType: "GameAttributes", token: "ab", frequentUpdatesEnabled: nil, osVersion: nil))
        let ended = LivecastReport(.activityEnded(id: "A1"))
        func verdict(_ status: Int, _ report: LivecastReport, retryAfter: Duration? = nil) -> RetryPolicy.Verdict {
            RetryPolicy.verdict(for: .answered(status: status, retryAfter: retryAfter, code: "x", message: "m"), of: report)
        }
        #expect(verdict(201, token) == .delivered(status: 201))
        #expect(verdict(200, token) == .delivered(status: 200))
        #expect(verdict(429, token, retryAfter: .seconds(3)) == .retry(after: .seconds(3), status: 429, message: "m"))
        #expect(verdict(503, token) == .retry(after: nil, status: 503, message: "m"))
        #expect(verdict(500, token) == .retry(after: nil, status: 500, message: "m"))
        #expect(verdict(401, token) == .refused(status: 401, code: "x", message: "m"))
        #expect(verdict(403, token) == .refused(status: 403, code: "x", message: "m"))
        #expect(verdict(422, token) == .refused(status: 422, code: "x", message: "m"))
        #expect(verdict(404, token) == .refused(status: 404, code: "x", message: "m"))
        #expect(verdict(404, ended) == .delivered(status: 404), "a removal of what Livecast no longer has is done")
        #expect(RetryPolicy.verdict(for: .unreachable(message: "refused"), of: token) == .retry(after: nil, status: nil, message: "refused"))
    }

    @Test func retryAfterIsReadInSeconds() {
        #expect(HTTPTransport.retryAfter("7") == .seconds(7))
        #expect(HTTPTransport.retryAfter(" 2 ") == .seconds(2))
        #expect(HTTPTransport.retryAfter("Wed, 21 Oct 2015 07:28:00 GMT") == nil)
        #expect(HTTPTransport.retryAfter(nil) == nil)
    }
}
