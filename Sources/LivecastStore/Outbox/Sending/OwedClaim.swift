package import LivecastCore

/// An owed push claimed for sending, with what it sends.
package struct OwedClaim: Sendable {
    package var id: Int64
    package var appID: Int64
    package var updateID: Int64
    package var kind: OwedTarget.Kind
    package var targetID: Int64
    /// Tries so far.
    package var attempts: Int
    package var lastReason: String
    package var pastDeadline: Bool
    package var event: LiveActivityEvent
    package var payload: [UInt8]
    package var priority: Int
    /// The update's feed, if it is a feed's.
    package var feedID: Int64?
    /// A newer push to the same target is owed, or a newer update of the same feed or activity exists: this one
    /// is settled without being sent (the target gets the newer one).
    package var isSuperseded: Bool

    /// This push given up for `reason`.
    package func deadLetter(reason: String) -> DeadLetter {
        DeadLetter(
            updateID: self.updateID,
            targetKind: DeadLetterTargetKind(self.kind),
            targetID: self.targetID,
            reason: reason,
            attempts: self.attempts
        )
    }
}

/// An owed push sent again that APNs still asks to retry later, with the wait before its next try.
package struct OwedRetry: Sendable {
    package var claim: OwedClaim
    package var status: Int?
    package var reason: String
    /// Seconds.
    package var delay: Double
    /// It waits for the app's credentials to be proven instead (``OwedTarget/awaitsProof``).
    package var awaitsProof: Bool

    package init(claim: OwedClaim, status: Int?, reason: String, delay: Double, awaitsProof: Bool = false) {
        self.claim = claim
        self.status = status
        self.reason = reason
        self.delay = delay
        self.awaitsProof = awaitsProof
    }
}
