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
