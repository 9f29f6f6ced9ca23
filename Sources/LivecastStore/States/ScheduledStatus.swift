import PostgresNIO

/// Where a request kept until its `sendAt` stands: `scheduled_updates.status`.
package enum ScheduledStatus: String, Sendable, CaseIterable, StoredState {
    /// Kept, waiting for its `sendAt`.
    case scheduled
    /// Cancelled before its `sendAt`.
    case cancelled
    /// Put in the outbox at its `sendAt` (``ScheduledUpdates/Status/updateID``).
    case accepted
    /// Refused at its `sendAt` (``ScheduledUpdates/Status/refusal`` says why).
    case refused
}
