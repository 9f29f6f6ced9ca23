import APNs
import LivecastCore
import LivecastStore

/// A claim's fate, decided from what happened to it, with no I/O: the one place where a fan-out's claim
/// (``FanOutRunner``) and the quick lane's (``QuickLane``) learn whether they are released, put back, given up or
/// held. The lanes perform it (``FanOutSession/finish(_:)``, ``Outbox/settle(_:on:)``); `ClaimOutcomeTests` tests it
/// without PostgreSQL, as postgres-nio tests its pool's actions.
enum ClaimOutcome: Sendable, Equatable {
    /// Done: `sent`, or `failed` when APNs refused the push for good.
    case release(OutboxStatus)
    /// Back to the outbox, due after a wait; `resettingAttempts` when this claim is not to count as one without
    /// progress (its retries are bounded by the deadline, or it waits for an operator).
    case putBack(after: Duration, resettingAttempts: Bool)
    /// Given up for a reason: `failed`, and kept as a dead letter.
    case giveUp(reason: String)
    /// Left as it is: still this worker's to send, or now another's (a dispatcher that took it over, its slices).
    case hold

    /// What happened to a claim.
    enum Happening: Sendable, Equatable {
        /// It was claimed, the `attempts`th time in a row without progress; more than `limit` gives it up.
        case claimed(attempts: Int, limit: Int)
        /// Its app's signing key cannot be opened; `pastDeadline`: the next try would be past its retry deadline.
        case appUnusable(pastDeadline: Bool)
        /// Its walk reached the end.
        case walked
        /// Its followers were split into slices.
        case split
        /// Another dispatcher took it over: this one's lease ran out.
        case lost
        /// It stopped at a checkpoint for a graceful shutdown.
        case stoppedForShutdown
        /// The invalidation guard held its app's sending.
        case sendingHeld
        /// Its connection went away before it was done.
        case connectionLost
        /// APNs answered its push (classified as `classification`, for `reason`); a retry would wait `retryIn` and
        /// must come before `deadline` (UNIX seconds) as of `now`.
        case answered(APNsOutcome.Classification, reason: String, retryIn: Duration, now: Double, deadline: Double)
    }

    /// The reason a fan-out claimed too often without progress is given up with.
    static let noProgress = "NoProgress"

    /// Decides a claim's fate from what happened to it.
    init(_ happening: Happening) {
        switch happening {
        case .claimed(let attempts, let limit):
            self = attempts > limit ? .giveUp(reason: Self.noProgress) : .hold
        case .appUnusable(let pastDeadline):
            self =
                pastDeadline
                ? .giveUp(reason: AppClients.unusableKeyReason) : .putBack(after: RetryPolicy.unusableKeyPause, resettingAttempts: true)
        case .walked:
            self = .release(.sent)
        case .split, .lost:
            self = .hold
        case .stoppedForShutdown, .connectionLost:
            self = .putBack(after: .zero, resettingAttempts: false)
        case .sendingHeld:
            self = .putBack(after: .zero, resettingAttempts: true)
        case .answered(let classification, let reason, let retryIn, let now, let deadline):
            switch classification {
            case .delivered: self = .release(.sent)
            case .retryLater: self = now + retryIn.inSeconds < deadline ? .putBack(after: retryIn, resettingAttempts: false) : .giveUp(reason: reason)
            default: self = .release(.failed)
            }
        }
    }
}
