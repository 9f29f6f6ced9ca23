package import LivecastCore

/// A feed's start, update or end, claimed by one dispatcher, with its checkpoint; or one slice of its followers.
package struct FanOutClaim: Sendable {
    package var updateID: Int64
    package var appID: Int64
    package var feedID: Int64
    package var event: LiveActivityEvent
    package var timestamp: Int
    package var dismissalDate: Int?
    /// The device-token payload.
    package var payload: [UInt8]
    /// The channel's broadcast (update, end), or an iOS 18 device's start on the channel.
    package var channelPayload: [UInt8]?
    package var priority: Int
    /// The last follower handled: an activity id, or a push-to-start token id for a start.
    package var cursor: Int64
    package var channelDone: Bool
    /// A start's audience: `devices`, `users` or `everyone`, with the ids listed.
    package var audienceKind: String?
    package var audience: [String]?
    package var attributesType: String
    /// Claims in a row without a checkpoint, this one included.
    package var attempts: Int
    /// Whether the update is older than the retry deadline (what is still unsent then is given up).
    package var pastDeadline: Bool
    /// `relevance-score`: a start deferred for its device's budget goes out before its lower-scored ones.
    package var relevanceScore: Double?
    /// Whether a start goes to devices whose user dismissed an activity of the feed too.
    package var includesDismissed: Bool
    /// The slice of the followers this claim walks, when the update was split (``FanOutSlice``); nil for the claim
    /// of the update itself.
    package var slice: FanOutSlice?

    /// The last follower this claim may walk: its slice's end, else the last there is.
    package var upperBound: Int64 { self.slice?.upperID ?? .max }

    /// The whole fan-out given up for `reason`.
    package func deadLetter(reason: String) -> DeadLetter {
        DeadLetter(updateID: self.updateID, targetKind: .feed, targetID: self.feedID, reason: reason, attempts: self.attempts)
    }
}

/// A run of a split fan-out's followers, `(lowerID, upperID]` by activity id, claimed on its own
/// (`fan_out_slices`, `sql/0036`).
package struct FanOutSlice: Sendable, Equatable {
    /// The slice's row.
    package var id: Int64
    /// The last follower in the slice.
    package var upperID: Int64
}

/// Another dispatcher took over an update this one was sending: its lease ran out.
package struct LostClaim: Error, CustomStringConvertible {
    package var updateID: Int64
    package var description: String { "the claim of update \(self.updateID) was taken over" }
}
