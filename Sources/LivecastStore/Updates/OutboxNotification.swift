/// How dispatchers learn of new work at once: a statement that adds updates to the outbox sends a `NOTIFY` on this
/// channel when its transaction commits (a trigger, migrations `0009` and `0016`); dispatchers `LISTEN` on it and poll
/// as a fallback.
public enum OutboxNotification {
    /// The PostgreSQL notification channel.
    public static let channel = "livecast_outbox"

    /// What a notification's payload says was added.
    public enum Kind: String, Sendable {
        /// Feeds' updates: fan-outs.
        case feed
        /// Standalone activities' updates: quick work.
        case activity
    }
}
