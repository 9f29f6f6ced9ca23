import LivecastCore

/// One Live Activity on a simulated device, following ActivityKit's documented rules.
struct SimulatedActivity {
    /// The longest an activity stays active: Apple ends it after 8 hours.
    static let maximumActiveDuration = 8 * 3600
    /// The longest an ended activity stays on the Lock Screen.
    static let maximumDismissalDelay = 4 * 3600
    /// How many ignored pushes an activity remembers.
    static let ignoredPushMemory = 100

    let id: String
    let attributesType: String
    let attributes: RawJSON
    var contentState: RawJSON
    /// The per-activity update token, when the activity is token-based.
    var updateToken: String?
    /// The broadcast channel, when the activity is channel-based.
    let channelID: String?
    /// Device time of the start.
    let startedAt: Int
    /// The `timestamp` of the last applied push.
    var lastTimestamp: Int
    var staleDate: Int?
    var relevanceScore: Double?
    /// Device time of an explicit end.
    var endedAt: Int?
    /// When an explicitly ended activity leaves the Lock Screen.
    var dismissAt: Int?
    var alertsShown: Int
    var appliedPushes: Int
    var ignoredPushes: [IgnoredPush] = []
    /// The request id (`apns-id`, or a broadcast's `apns-request-id`) of the last push applied, the start's
    /// included.
    var lastPushID: String?
    /// The `apns-collapse-id` of the start that created it.
    var startCollapseID: String?
    /// Removed from the device without an end, while its token still answers 200.
    var isLost = false

    /// When the activity ended (explicitly, or by the 8-hour limit), if it has by `now`.
    func end(at now: Int) -> Int? {
        if let endedAt { return endedAt }
        let forcedEnd = self.startedAt + Self.maximumActiveDuration
        return now >= forcedEnd ? forcedEnd : nil
    }

    /// Whether the activity has left the Lock Screen by `now`.
    func isDismissed(at now: Int) -> Bool {
        if self.isLost { return true }
        guard let end = self.end(at: now) else { return false }
        return now >= (self.dismissAt ?? end + Self.maximumDismissalDelay)
    }

    /// Applies an update or end, or records why it was ignored.
    /// - Parameter pushID: The push's request id, remembered when the push is applied.
    mutating func apply(_ payload: LiveActivityPayload, pushID: String?, now: Int) {
        if self.isLost {
            return self.ignore(.activityLost, payload, now: now)
        }
        if self.isDismissed(at: now) {
            return self.ignore(.afterDismissal, payload, now: now)
        }
        if self.end(at: now) != nil {
            return self.ignore(.afterEnd, payload, now: now)
        }
        if payload.event == .start {
            return self.ignore(.startOnActivity, payload, now: now)
        }
        guard payload.timestamp > self.lastTimestamp else {
            return self.ignore(.olderTimestamp, payload, shownTimestamp: self.lastTimestamp, now: now)
        }
        self.lastTimestamp = payload.timestamp
        self.appliedPushes += 1
        self.lastPushID = pushID
        if let contentState = payload.contentState { self.contentState = contentState }
        if let staleDate = payload.staleDate { self.staleDate = staleDate }
        if let relevanceScore = payload.relevanceScore { self.relevanceScore = relevanceScore }
        if payload.alert != nil { self.alertsShown += 1 }
        if payload.event == .end {
            self.endedAt = now
            let latest = now + Self.maximumDismissalDelay
            self.dismissAt = max(now, min(payload.dismissalDate ?? latest, latest))
        }
    }

    mutating func ignore(_ reason: IgnoredPush.Reason, _ payload: LiveActivityPayload?, detail: String? = nil, shownTimestamp: Int? = nil, now: Int) {
        self.ignoredPushes.append(
            IgnoredPush(
                reason: reason,
                detail: detail,
                event: payload?.event.rawValue,
                timestamp: payload?.timestamp,
                receivedAt: now,
                shownTimestamp: shownTimestamp
            )
        )
        if self.ignoredPushes.count > Self.ignoredPushMemory {
            self.ignoredPushes.removeFirst(self.ignoredPushes.count - Self.ignoredPushMemory)
        }
    }
}
