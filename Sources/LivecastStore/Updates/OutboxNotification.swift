/// How dispatchers learn of new work at once: a statement that adds updates to the outbox sends a `NOTIFY` on this
/// channel when its transaction commits (a trigger, migration `0009`); dispatchers `LISTEN` on it and poll as a
/// fallback.
public enum OutboxNotification {
    /// The PostgreSQL notification channel.
    public static let channel = "livecast_outbox"
}
