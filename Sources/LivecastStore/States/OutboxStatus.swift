import PostgresNIO

/// Where an update stands in the outbox: `updates.status`.
package enum OutboxStatus: String, Sendable, CaseIterable, Encodable, StoredState {
    /// Accepted and waiting to be claimed (or put back, to retry later).
    case pending
    /// Claimed by a dispatcher under a lease.
    case dispatching
    /// Sent to every target it had (pushes APNs asked to retry may still be owed: `owed_pushes`).
    case sent
    /// Replaced by a newer update of its target before it was sent.
    case superseded
    /// Given up: refused for good, or past its retry deadline (then also a dead letter).
    case failed

    /// The statuses of an update not finished yet, as SQL: `('pending', 'dispatching')`.
    package static let unfinishedSQL = "(\(Self.pending.sql), \(Self.dispatching.sql))"

    /// The statuses of a finished update, as SQL: `('sent', 'superseded', 'failed')`.
    package static let finishedSQL = "(\(Self.sent.sql), \(Self.superseded.sql), \(Self.failed.sql))"
}
