import Foundation
import LivecastCore

/// How the outbox retries what APNs asks to retry later (429, 5xx, or a connection lost before the answer), the
/// same for a standalone activity's update and for a feed's owed pushes: a backoff doubling from the first (0.5 s
/// by default) to at most the maximum (1 s by default), with ±20 % jitter, until the target's deadline (the store's
/// `RetryDeadline`). What is still undelivered then becomes a dead letter.
///
/// The backoff is short and capped because a push still owed is always the newest content its target lacks (a
/// newer update supersedes it at once): under a brownout that answers 30 % of pushes 503, a follower is tried about
/// once a second, so all of 3,000 have the newest content within 15 s (0.3¹⁰ × 3,000 ≈ 0.02 left after ten tries).
/// The quick lane sends at most a batch per app a round, which bounds the retries' rate in an outage.
struct RetryPolicy: Sendable {
    /// The wait after the first try.
    var firstBackoff: Duration
    /// The longest wait between two tries.
    var maximumBackoff: Duration

    /// How long the work of an app whose signing key cannot be opened waits before it is tried again.
    static let unusableKeyPause = Duration.seconds(60)

    /// How long a standalone activity's update waits before it is tried again when APNs refused its unproven token
    /// before the app's credentials were proven (``InvalidationGuard``): the token is kept until they are.
    static let awaitingProofPause = Duration.seconds(60)

    /// The wait before the next try after `attempts` tries, in seconds (as SQL binds it): the first backoff,
    /// doubled each try, at most ``maximumBackoff``.
    func backoff(afterAttempts attempts: Int) -> Double {
        min(self.firstBackoff.inSeconds * pow(2, Double(max(attempts, 1) - 1)), self.maximumBackoff.inSeconds) * Double.random(in: 0.8...1.2)
    }
}
