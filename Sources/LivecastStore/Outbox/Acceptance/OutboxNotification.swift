/// How dispatchers learn of new work at once: a statement that adds updates to the outbox sends a `NOTIFY` on this
/// channel when its transaction commits (a trigger, migrations `0009`, `0016` and `0020`); dispatchers `LISTEN` on it
/// and poll as a fallback.
package enum OutboxNotification {
    /// The PostgreSQL notification channel.
    package static let channel = "livecast_outbox"

    /// What a notification's payload says was added.
    package enum Kind: String, Sendable {
        /// Feeds' updates: fan-outs.
        case feed
        /// Standalone activities' updates: quick work.
        case activity
    }

    /// A notification's payload: updates of a kind due now (`activity`), or held until later (`activity in 640`:
    /// the earliest is due in 640 ms), as an update coalesced into the next second is.
    package enum Payload: Equatable, Sendable {
        case due(Kind)
        case held(Kind, dueIn: Duration)

        /// Reads a payload; `nil` for one this server does not know.
        package init?(_ text: String) {
            if let kind = Kind(rawValue: text) {
                self = .due(kind)
                return
            }
            let parts = text.split(separator: " ")
            guard parts.count == 3, parts[1] == "in", let kind = Kind(rawValue: String(parts[0])),
                let milliseconds = Int(parts[2]), milliseconds >= 0
            else { return nil }
            self = .held(kind, dueIn: .milliseconds(milliseconds))
        }
    }
}
