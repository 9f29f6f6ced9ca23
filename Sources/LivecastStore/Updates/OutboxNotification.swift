/// How dispatchers learn of new work at once: every accepted update sends a `NOTIFY` on this channel when its
/// transaction commits; dispatchers `LISTEN` on it and poll as a fallback.
public enum OutboxNotification {
    /// The PostgreSQL notification channel.
    public static let channel = "livecast_outbox"
}
