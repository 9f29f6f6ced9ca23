/// Where an update stands in the outbox: `updates.status`.
public enum OutboxStatus: String, Sendable, CaseIterable {
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

    /// The statuses of an update not finished yet, as SQL for a partial index's predicate:
    /// `('pending', 'dispatching')`. Written as a literal so PostgreSQL matches the indexes built on it.
    public static let unfinishedSQL = "('pending', 'dispatching')"
}
