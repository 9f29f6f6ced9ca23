package import Foundation

/// When a webhook endpoint is tried again after a failed attempt: an exponential backoff from ``base`` doubling up to
/// ``cap`` with equal jitter (half fixed, half random), or the receiver's `Retry-After` when that is longer, never
/// more than ``cap``.
package struct WebhookBackoff: Sendable, Hashable {
    /// The backoff after the first failure, before jitter. Defaults to 5 seconds.
    package var base: Duration
    /// The longest backoff, `Retry-After` included. Defaults to 1 hour.
    package var cap: Duration

    package init(base: Duration = .seconds(5), cap: Duration = .seconds(3600)) {
        self.base = base
        self.cap = cap
    }

    /// The wait after the `failures`-th failure in a row (1 for the first).
    /// - Parameter retryAfter: What the receiver asked for, if anything.
    package func delay(afterFailures failures: Int, retryAfter: Duration? = nil) -> Duration {
        let exponent = min(max(failures, 1) - 1, 30)
        let exponential = min(self.base * (1 << exponent), self.cap)
        let half = exponential / 2
        let jittered = half + half * Double.random(in: 0...1)
        return min(max(jittered, retryAfter ?? .zero), self.cap)
    }

    /// A `Retry-After` header's wait: whole seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`),
    /// counted from `now`; `nil` when it is neither. A date in the past is no wait.
    package static func retryAfter(_ value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) {
                return .milliseconds(max(Int64(date.timeIntervalSince(now) * 1000), 0))
            }
        }
        return nil
    }
}
