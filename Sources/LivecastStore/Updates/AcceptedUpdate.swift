/// What the store answers once an update (start, update or end) is durable in the outbox.
public struct AcceptedUpdate: Sendable, Hashable {
    public var updateID: Int64
    /// The timestamp the update goes out with (one second after the last when coalesced).
    public var timestamp: Int
    /// The priority it goes out with.
    public var priority: Int
    /// Whether the app's hourly priority-10 budget was spent, so it goes out at priority 5.
    public var priorityDowngraded: Bool
    /// Whether a same-second predecessor was superseded (it will not be sent).
    public var coalesced: Bool
    /// Whether `dismissal-date` was brought back to 4 hours after the end.
    public var dismissalDateClamped: Bool
    /// Whether this answers a retried request with the same idempotency key.
    public var isReplay: Bool
}
