/// One day of Apple's broadcast figures, as exported: a channel's, or the whole app's. `-1` is Apple's "too few
/// subscribers", kept as written.
package struct AppleBroadcastDay: Sendable, Hashable {
    /// `yyyy-MM-dd`, UTC.
    package var day: String
    package var published: Int64
    package var delivered: Int64
    /// The day's highest count of subscribed devices.
    package var subscriptions: Int64
    /// The app's unique subscribed devices (the app's report only).
    package var uniqueSubscribers: Int64?

    package init(day: String, published: Int64, delivered: Int64, subscriptions: Int64, uniqueSubscribers: Int64? = nil) {
        self.day = day
        self.published = published
        self.delivered = delivered
        self.subscriptions = subscriptions
        self.uniqueSubscribers = uniqueSubscribers
    }

    /// Whether Apple withheld the figures: the channel had too few subscribers to keep people anonymous.
    package var isWithheld: Bool { self.published < 0 || self.delivered < 0 || self.subscriptions < 0 }
}

/// One row of Apple's device-push figures: a day, a push type, a status and its count.
package struct AppleDeliveryDay: Sendable, Hashable {
    /// `yyyy-MM-dd`, UTC.
    package var day: String
    /// As Apple names it, lowercased, without spaces, hyphens or underscores (`liveactivity`).
    package var pushType: String
    /// `delivered`, `stored`, `discarded`, or another status Apple reports, lowercased.
    package var status: String
    package var count: Int64

    package init(day: String, pushType: String, status: String, count: Int64) {
        self.day = day
        self.pushType = pushType
        self.status = status
        self.count = count
    }
}

/// What one export brought: its rows, for the days from `from` through `through`.
package enum AppleExportRows: Sendable {
    /// A channel's (`channelID`) or, for `nil`, the whole app's broadcast figures.
    case broadcasts(channelID: String?, [AppleBroadcastDay])
    /// Device pushes.
    case deliveries([AppleDeliveryDay])
}
