/// When a ``LivecastClient`` tries a report again: after a network error, `408`, `429`, a `5xx` or a registration
/// that raced another (`409` without a `field`), with exponential backoff and jitter, never sooner than Livecast's
/// `Retry-After`, and until the report is older than ``reportLifetime``. A report Livecast holds back until something
/// changes (``LivecastEvent/Kind/held``) is tried again after ``maximumDelay``. An answer that can never succeed is
/// not retried (``LivecastEvent/DropReason``).
public struct RetryPolicy: Sendable, Hashable {
    /// The wait after the first failed try, doubled after each further one. Defaults to 1 second.
    public var initialDelay: Duration = .seconds(1)
    /// The longest wait between two tries, `Retry-After` aside. Defaults to 5 minutes.
    public var maximumDelay: Duration = .seconds(300)
    /// The longest `Retry-After` that is obeyed as given; a longer one waits this long. Defaults to 1 hour.
    public var maximumRetryAfter: Duration = .seconds(3600)
    /// How long an undelivered report is kept trying, across launches, before it is dropped. Defaults to 24 hours:
    /// an activity lasts at most 12 (8 running, 4 on the Lock Screen), and a push-to-start token that is still
    /// current is reported again by the next launch's observation.
    public var reportLifetime: Duration = .seconds(24 * 3600)

    /// The defaults.
    public init() {}

    /// A policy with other waits.
    public init(
        initialDelay: Duration,
        maximumDelay: Duration,
        maximumRetryAfter: Duration = .seconds(3600),
        reportLifetime: Duration = .seconds(24 * 3600)
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.reportLifetime = reportLifetime
    }

    /// The wait before the next try.
    /// - Parameters:
    ///   - failures: How many tries have failed so far, at least 1.
    ///   - retryAfter: Livecast's `Retry-After`, if it sent one.
    ///   - random: A number in `0...1`: the backoff is `base/2 + random × base/2` ("equal jitter"), where `base` is
    ///     `initialDelay × 2^(failures − 1)`, at most `maximumDelay`.
    /// - Returns: The jittered backoff, or `Retry-After` (at most `maximumRetryAfter`) when that is longer.
    public func delay(afterFailures failures: Int, retryAfter: Duration? = nil, random: Double = Double.random(in: 0...1)) -> Duration {
        let doublings = min(max(failures - 1, 0), 32)
        let exponential = self.initialDelay * (1 << doublings)
        let base = exponential > self.maximumDelay || exponential < .zero ? self.maximumDelay : exponential
        let jittered = base / 2 + (base / 2) * min(max(random, 0), 1)
        guard let retryAfter else { return jittered }
        return max(min(retryAfter, self.maximumRetryAfter), jittered)
    }
}
