import LivecastStore

/// Whether a claimed queued start goes out now, waits, or is given up: decided from the claim alone (its feed, its
/// device's token, the activity a renewal replaces), with no I/O, before the device's budget is spent.
enum QueuedStartVerdict: Sendable, Equatable {
    /// Build it and spend the device's budget.
    case send
    /// Give it up, for this reason (``QueuedStartDrop``).
    case drop(String)
    /// Due again after this long, for this reason.
    case later(Duration, String)

    /// The wait of a start whose device still owes an older one (`owed_pushes`): it goes once that one is answered.
    static let earlierStartPause = Duration.seconds(1)
    /// Why a start waits behind an older one.
    static let awaitingEarlierStart = "AwaitingEarlierStart"

    /// Judges a claim at `now` (UNIX seconds).
    static func judge(_ claim: QueuedStartClaim, now: Int) -> QueuedStartVerdict {
        if claim.feed.state == .ended { return .drop(QueuedStartDrop.feedEnded) }
        if let staleDate = claim.feed.staleDate, staleDate <= now { return .drop(QueuedStartDrop.feedStale) }
        switch claim.kind {
        case .deferred:
            if claim.pastDeadline { return .drop(QueuedStartDrop.deadline) }
        case .renewal:
            guard let renewed = claim.renewed, renewed.isRunning, !renewed.isRenewed else { return .drop(QueuedStartDrop.activityGone) }
            if renewed.lifetimeOver { return .drop(QueuedStartDrop.lifetimeOver) }
            guard claim.feed.renews, claim.feed.updatedWithinRenewalWindow else { return .drop(QueuedStartDrop.feedIdle) }
        }
        guard let token = claim.token else { return .drop(QueuedStartDrop.noPushToStartToken) }
        if token.owesOlderStart { return .later(Self.earlierStartPause, Self.awaitingEarlierStart) }
        return .send
    }
}
