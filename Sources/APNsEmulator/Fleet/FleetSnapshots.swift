public import LivecastCore

/// What a simulated device shows and remembers, as served by `GET /emulator/devices`.
public struct DeviceSnapshot: Sendable, Hashable, Codable {
    /// The device's id in the emulator.
    public var id: String
    /// The app installed on it.
    public var bundleId: String
    /// The iOS version.
    public var osVersion: String
    /// Push-to-start tokens by `ActivityAttributes` type.
    public var pushToStartTokens: [String: String]
    /// Its activities, oldest first, including ended and dismissed ones.
    public var activities: [ActivitySnapshot]
    /// Pushes to its push-to-start tokens that started nothing.
    public var ignoredPushes: [IgnoredPush]
    /// Priority-10 pushes it received in the last hour.
    public var priority10PushesLastHour: Int
}

/// One activity on a simulated device.
public struct ActivitySnapshot: Sendable, Hashable, Codable {
    /// Where the activity is in its life, as the device shows it.
    public enum State: String, Sendable, Hashable, Codable {
        /// On the Lock Screen and in the Dynamic Island, taking updates.
        case active
        /// Ended (by push or by the 8-hour limit); still on the Lock Screen.
        case ended
        /// Gone from the Lock Screen.
        case dismissed
        /// Gone without an end (the system or the user removed it) while its token still answers 200.
        case lost
    }

    public var id: String
    public var attributesType: String
    public var attributes: JSONValue
    /// The content state the device shows.
    public var contentState: JSONValue
    public var state: State
    /// Whether the device shows the activity as stale (`stale-date` passed).
    public var isStale: Bool
    /// The update token, for a token-based activity.
    public var updateToken: String?
    /// The channel, for a channel-based activity.
    public var channelId: String?
    /// The `timestamp` of the last applied push.
    public var lastTimestamp: Int
    public var staleDate: Int?
    public var relevanceScore: Double?
    /// Device time of the start.
    public var startedAt: Int
    /// Device time of the end, explicit or forced.
    public var endedAt: Int?
    /// When the ended activity leaves (or left) the Lock Screen.
    public var dismissalDate: Int?
    /// Pushes applied after the start.
    public var appliedPushes: Int
    /// Alerts shown, the start's included.
    public var alertsShown: Int
    /// Pushes it ignored, the latest last.
    public var ignoredPushes: [IgnoredPush]
    /// The request id of the last push it applied, the start's included: the `apns-id` of a device push, or a
    /// broadcast's `apns-request-id`, as the sender set it or the emulator made it.
    public var lastApnsId: String?
}

extension SimulatedActivity {
    func snapshot(now: Int) -> ActivitySnapshot {
        ActivitySnapshot(
            id: self.id,
            attributesType: self.content.attributesType,
            attributes: self.content.attributes.value,
            contentState: self.content.contentState.value,
            state: self.lifecycle.state(at: now),
            isStale: self.content.staleDate.map { now >= $0 } ?? false,
            updateToken: self.updateToken,
            channelId: self.channelID,
            lastTimestamp: self.pushes.lastTimestamp,
            staleDate: self.content.staleDate,
            relevanceScore: self.content.relevanceScore,
            startedAt: self.lifecycle.startedAt,
            endedAt: self.lifecycle.end(at: now),
            dismissalDate: self.lifecycle.dismissal(at: now),
            appliedPushes: self.pushes.applied,
            alertsShown: self.pushes.alertsShown,
            ignoredPushes: self.pushes.ignored,
            lastApnsId: self.pushes.lastPushID
        )
    }
}

extension SimulatedActivity.Lifecycle {
    /// Where the activity is in its life by `now`, as the device shows it.
    func state(at now: Int) -> ActivitySnapshot.State {
        if self.isLost { return .lost }
        if self.isDismissed(at: now) { return .dismissed }
        return self.end(at: now) == nil ? .active : .ended
    }
}

extension SimulatedDevice {
    func snapshot(now: Int) -> DeviceSnapshot {
        DeviceSnapshot(
            id: self.id,
            bundleId: self.bundleID,
            osVersion: self.osVersion,
            pushToStartTokens: self.pushToStartTokens,
            activities: self.activities.map { $0.snapshot(now: now) },
            ignoredPushes: self.ignoredPushes,
            priority10PushesLastHour: self.priority10PushTimes.filter { $0 > now - 3600 }.count
        )
    }
}
