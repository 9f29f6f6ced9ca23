/// A Live Activity as Livecast knows it: ActivityKit's `Activity.id`, its `ActivityAttributes` type name and, when it
/// follows one, the key of its feed.
public struct LivecastActivity: Sendable, Hashable {
    /// ActivityKit's `Activity.id`.
    public var id: String
    /// The `ActivityAttributes` type name, such as `GameAttributes`.
    public var attributesType: String
    /// The key of the feed it follows (`game-4711`), if any.
    public var feed: String?

    /// An activity by id and attributes type name.
    public init(id: String, attributesType: String, feed: String? = nil) {
        self.id = id
        self.attributesType = attributesType
        self.feed = feed
    }

    /// An activity whose attributes type is `type` (its name: `String(describing: type)`).
    public init<Attributes>(id: String, attributesType type: Attributes.Type, feed: String? = nil) {
        self.init(id: id, attributesType: String(describing: type), feed: feed)
    }
}

/// An activity's state, as ActivityKit's `ActivityState` tells it: what a client reports of it is that it
/// ``ended`` (`DELETE /activities/{id}`) or was ``dismissed`` (`POST /activities/{id}/dismissed`), and whether it is
/// still ``pending`` (registered with `"pending": true`).
public enum LivecastActivityState: Sendable, Hashable {
    /// Scheduled by the app to start at a later date, not started yet (iOS 26): registered with `"pending": true`,
    /// so that a backend does not start a second activity of its feed on the device.
    case pending
    /// Running: a pending activity that starts is registered again without `pending`.
    case active
    /// Ended, still on the Lock Screen: reported as ended on the device.
    case ended
    /// Gone from the Lock Screen: reported as dismissed.
    case dismissed
    /// Past its stale date; nothing more to report (Livecast knows the stale date it sent).
    case stale
}
