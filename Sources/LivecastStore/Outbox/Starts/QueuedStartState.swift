import PostgresNIO

/// Where a queued start is (`queued_starts.state`).
package enum QueuedStartState: String, Sendable, CaseIterable, StoredState {
    /// Due at its `due_at`.
    case waiting
    /// Claimed by a dispatcher, under a lease until `due_at`.
    case sending
    /// APNs accepted it.
    case sent
    /// Given up, with the reason (`start.dropped`).
    case dropped

    /// `waiting` or `sending`, as SQL.
    package static let unfinishedSQL = "(\(Self.waiting.sql), \(Self.sending.sql))"
}

/// What a queued start is (`queued_starts.kind`).
package enum QueuedStartKind: String, Sendable, CaseIterable, StoredState {
    /// A feed's start that waited for its device's budget, or for a newer start that reached the device first.
    case deferred
    /// A renewal: a follower's activity replaced by a new one before the activity lifetime ends.
    case renewal
}

/// Where a feed follower's renewal stands (`activities.renewal`).
package enum RenewalStanding: String, Sendable, CaseIterable, StoredState {
    /// Planned: a queued start renews it when due.
    case queued
    /// Not renewable: its device has no push-to-start token for the feed's attributes type (iOS before 17.2, or none
    /// registered).
    case noPushToStartToken
    /// Not renewable: it was registered without a device id.
    case noDevice
}
