/// What the store answers once an update (start, update or end) is durable in the outbox, or when a request retried
/// with the same idempotency key was answered before (``keptAnswer``).
package struct AcceptedUpdate: Sendable, Hashable {
    package var updateID: Int64
    /// The timestamp the update goes out with: when coalesced, the last one's if it replaced it, else one second after.
    package var timestamp: Int
    /// The priority it goes out with.
    package var priority: Int
    /// Whether the app's hourly priority-10 budget was spent, so it goes out at priority 5.
    package var priorityDowngraded: Bool
    /// Whether it came in the same second as the target's last update: it replaced that one (never sent) if it was
    /// still waiting, else it goes out at the next second.
    package var coalesced: Bool
    /// Whether `dismissal-date` was brought back to 4 hours after the end.
    package var dismissalDateClamped: Bool
    /// The answer the first request with this idempotency key was given, when this answers a retry of it. It is what
    /// the retry is answered (``answer``); the other fields are the stored update's, or, for a request that was
    /// scheduled, its `updateID` alone.
    package var keptAnswer: String?

    /// Whether this answers a retried request with the same idempotency key.
    package var isReplay: Bool { self.keptAnswer != nil }
}
