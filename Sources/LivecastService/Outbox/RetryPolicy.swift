import Foundation
import LivecastCore

/// How the outbox retries what APNs asks to retry later (429, 5xx, or a connection lost before the answer), the
/// same for a standalone activity's update and for a feed's owed pushes: a backoff doubling from the first (0.5 s
/// by default) to at most the maximum (1 s by default), with ±20 % jitter, until the target's deadline. What is
/// still undelivered then becomes a dead letter.
///
/// The backoff is short and capped because a push still owed is always the newest content its target lacks (a
/// newer update supersedes it at once): under a brownout that answers 30 % of pushes 503, a follower is tried about
/// once a second, so all of 3,000 have the newest content within 15 s (0.3¹⁰ × 3,000 ≈ 0.02 left after ten tries).
/// The quick lane sends at most a batch per app a round, which bounds the retries' rate in an outage.
struct RetryPolicy: Sendable {
    /// How long an update is retried after it was first owed (`--retry-deadline`).
    var deadline: Duration
    /// The wait after the first try.
    var firstBackoff: Duration
    /// The longest wait between two tries.
    var maximumBackoff: Duration

    /// How long the work of an app whose signing key cannot be opened waits before it is tried again.
    static let unusableKeyPause = Duration.seconds(60)

    /// The wait before the next try after `attempts` tries, in seconds (as SQL binds it): the first backoff,
    /// doubled each try, at most ``maximumBackoff``.
    func backoff(afterAttempts attempts: Int) -> Double {
        min(self.firstBackoff.inSeconds * pow(2, Double(max(attempts, 1) - 1)), self.maximumBackoff.inSeconds) * Double.random(in: 0.8...1.2)
    }

    /// SQL for when a push of an update to an activity is given up, counted from `since`: an update not later
    /// than the activity's 8 hours (the system ends it then); an end not before the activity's 12 hours (8 hours
    /// running and up to 4 on the Lock Screen), so an end is never given up while the activity can still show.
    /// - Parameters: SQL expressions of the update's `event`, the activity's `started_at` and the start of the
    ///   retry period.
    func activityDeadlineSQL(event: String, startedAt: String, since: String) -> String {
        """
        CASE WHEN \(event) = 'end' THEN greatest(\(since) + interval '\(self.deadline.wholeSeconds) seconds', \(startedAt) + interval '12 hours')
             ELSE least(\(since) + interval '\(self.deadline.wholeSeconds) seconds', \(startedAt) + interval '8 hours') END
        """
    }

    /// SQL for when a push to a channel or a push-to-start token is given up, counted from `since`; a channel's
    /// end is kept for 12 hours, the longest its activities can show.
    func deadlineSQL(event: String, since: String) -> String {
        """
        CASE WHEN \(event) = 'end' THEN greatest(\(since) + interval '\(self.deadline.wholeSeconds) seconds', \(since) + interval '12 hours')
             ELSE \(since) + interval '\(self.deadline.wholeSeconds) seconds' END
        """
    }
}
