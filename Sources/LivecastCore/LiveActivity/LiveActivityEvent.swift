/// The `event` of a Live Activity push: what the push does to the activity.
public enum LiveActivityEvent: String, Sendable, Hashable, Codable, CaseIterable {
    /// Starts a new activity (push-to-start, iOS 17.2+).
    case start
    /// Replaces the activity's content state.
    case update
    /// Ends the activity; it stays on the Lock Screen until its dismissal date.
    case end
}
