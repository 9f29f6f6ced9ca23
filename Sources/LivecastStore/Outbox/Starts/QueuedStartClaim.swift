package import LivecastCore

/// A queued start claimed by one dispatcher, with what deciding and building it needs: its feed as it is now, the
/// device's push-to-start token and ledger, and for a renewal the activity it renews.
package struct QueuedStartClaim: Sendable {
    /// The feed as the start is rebuilt from it.
    package struct Feed: Sendable {
        package var id: Int64
        package var state: FeedState
        package var attributesType: String
        package var attributes: RawJSON
        package var contentState: RawJSON?
        package var lastTimestamp: Int?
        package var staleDate: Int?
        package var relevanceScore: Double?
        /// The alert of its latest start.
        package var startAlert: LiveActivityAlert?
        /// Its renewal policy's alert, when it names one.
        package var renewalAlert: LiveActivityAlert?
        /// Whether it renews its followers.
        package var renews: Bool
        /// Whether its latest update was accepted within its renewal's `ifUpdatedWithin`.
        package var updatedWithinRenewalWindow: Bool
        /// Its live channel (APNs id), if it has one.
        package var channelID: String?
        /// Its latest update: the content a renewal carries, which its push id names.
        package var latestUpdateID: Int64?
    }

    /// The device's live push-to-start token for the feed's attributes type.
    package struct Token: Sendable {
        package var rowID: Int64
        package var token: String
        /// Whether a client key registered it and APNs has yet to accept a push to it.
        package var isUnproven: Bool
        /// Whether the device runs iOS 18 or later (it can start on the feed's channel).
        package var onIOS18: Bool
        /// Whether an older start to it is still owed (`owed_pushes`): this one waits, so its timestamps increase.
        package var owesOlderStart: Bool
    }

    /// The activity a renewal replaces.
    package struct Renewed: Sendable {
        package var id: Int64
        package var key: String
        package var isRunning: Bool
        package var isRenewed: Bool
        /// Whether it follows the feed on its channel (the renewal then names the channel).
        package var onChannel: Bool
        /// Whether the activity lifetime has run out since it started: too late to renew.
        package var lifetimeOver: Bool
    }

    package var id: Int64
    package var appID: Int64
    package var deviceID: String
    package var kind: QueuedStartKind
    /// The start a deferred one belongs to.
    package var updateID: Int64?
    /// Claims so far, this one included.
    package var attempts: Int
    package var feed: Feed
    package var token: Token?
    package var renewed: Renewed?
    /// The newest timestamp a push-to-start to this device carried (`start_ledger`): this one must carry a newer.
    package var ledgerTimestamp: Int?
    /// Whether it has waited past the retry deadline.
    package var pastDeadline: Bool

    /// The timestamp it goes out with: the feed's, unless a start to the device carried that one or a newer.
    package var timestamp: Int {
        max(self.feed.lastTimestamp ?? 0, (self.ledgerTimestamp ?? 0) + 1)
    }
}

/// What a dispatcher did with a queued start it claimed.
package struct QueuedStartOutcome: Sendable {
    /// What happened.
    package enum Fate: Sendable {
        /// APNs accepted it with this timestamp, to this push-to-start token row.
        case sent(timestamp: Int, tokenID: Int64)
        /// Given up, for this reason.
        case dropped(reason: String)
        /// Due again after this long: an older start to the device is owed, a newer one reached it first, or APNs
        /// asked to retry.
        case later(Duration, reason: String)
        /// The device's budget is spent for this long: this start, and every other one waiting for the device, waits
        /// at least that long, so they come due together and the most relevant goes first.
        case awaitingRoom(Duration)
    }

    /// The reason kept with a start waiting for its device's budget.
    package static let startBudgetSpent = "StartBudgetSpent"

    package var claim: QueuedStartClaim
    package var fate: Fate

    package init(_ claim: QueuedStartClaim, _ fate: Fate) {
        self.claim = claim
        self.fate = fate
    }
}
