/// What the simulated devices did with the pushes APNs accepted, per app and UTC day: the figures Apple's data export
/// reports (PushKit, "Exporting delivery metrics logs" and "Exporting broadcast push notification metrics").
///
/// A device push or a broadcast a device applied counts as delivered; one it ignored (any ``IgnoredPush/Reason``), or
/// one to a token no simulated device holds, as discarded. The devices are always online, so nothing is `stored`.
struct DeliveryTally {
    /// A device push's push type and what became of it.
    struct DevicePushKey: Hashable {
        var pushType: String
        var status: String
    }

    /// One channel's day.
    struct ChannelDay {
        /// Broadcasts APNs accepted.
        var published = 0
        /// Broadcasts applied by a subscriber, one per subscriber.
        var delivered = 0
        /// The most subscribers a broadcast found that day.
        var subscriptions = 0
    }

    /// Device pushes by app, day (days since 1970, UTC) and push type and status.
    private(set) var devicePushes: [String: [Int: [DevicePushKey: Int]]] = [:]
    /// Broadcasts by app, channel and day.
    private(set) var channels: [String: [String: [Int: ChannelDay]]] = [:]
    /// The devices a broadcast of the app found, by app and day.
    private(set) var subscribers: [String: [Int: Set<String>]] = [:]

    /// The UTC day of a device-clock time, in days since 1970.
    static func day(_ seconds: Int) -> Int {
        seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
    }

    /// Counts a device push APNs accepted.
    /// - Parameters:
    ///   - applied: Whether the device applied it.
    ///   - now: The device clock, in seconds since 1970.
    mutating func countDevicePush(bundleID: String, pushType: String, applied: Bool, now: Int) {
        let key = DevicePushKey(pushType: pushType, status: applied ? "delivered" : "discarded")
        self.devicePushes[bundleID, default: [:]][Self.day(now), default: [:]][key, default: 0] += 1
    }

    /// Counts a broadcast APNs accepted.
    /// - Parameters:
    ///   - applied: How many subscribers applied it.
    ///   - devices: The subscribers' devices.
    ///   - now: The device clock, in seconds since 1970.
    mutating func countBroadcast(bundleID: String, channelID: String, applied: Int, devices: [String], now: Int) {
        let day = Self.day(now)
        var channelDay = self.channels[bundleID, default: [:]][channelID, default: [:]][day, default: ChannelDay()]
        channelDay.published += 1
        channelDay.delivered += applied
        channelDay.subscriptions = max(channelDay.subscriptions, devices.count)
        self.channels[bundleID, default: [:]][channelID, default: [:]][day] = channelDay
        self.subscribers[bundleID, default: [:]][day, default: []].formUnion(devices)
    }
}
