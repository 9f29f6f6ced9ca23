package import LivecastCore

/// One claimed update of a standalone activity.
package struct ActivityClaim: Sendable {
    package var updateID: Int64
    package var appID: Int64
    package var activityID: Int64
    package var event: LiveActivityEvent
    package var payload: [UInt8]
    package var priority: Int
    /// Claims so far, this one included.
    package var attempts: Int
    /// When it is given up if APNs keeps asking to retry (``RetryDeadline``), in UNIX seconds.
    package var deadline: Double

    /// This update given up for `reason`.
    package func deadLetter(reason: String) -> DeadLetter {
        DeadLetter(
            updateID: self.updateID,
            targetKind: .activity,
            targetID: self.activityID,
            reason: reason,
            attempts: self.attempts
        )
    }
}

/// How a claimed standalone activity update ends its claim.
package struct ActivitySettlement: Sendable {
    package var updateID: Int64
    /// `sent` or `failed`; `nil` to try again after `retryAfter` seconds.
    package var status: OutboxStatus?
    package var retryAfter: Double
    /// Given up as a dead letter: not counted as a failed target (the dead letter counts it).
    package var isDeadLetter: Bool

    package init(updateID: Int64, status: OutboxStatus?, retryAfter: Double = 0, isDeadLetter: Bool = false) {
        self.updateID = updateID
        self.status = status
        self.retryAfter = retryAfter
        self.isDeadLetter = isDeadLetter
    }
}

/// A claimed push the quick lane sends as it was stored: its update, payload and priority.
package protocol ClaimedPush: Sendable {
    var updateID: Int64 { get }
    var payload: [UInt8] { get }
    var priority: Int { get }
}

extension ActivityClaim: ClaimedPush {}
extension OwedClaim: ClaimedPush {}
