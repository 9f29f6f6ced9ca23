import LivecastCore

/// One Live Activity on a simulated device, following ActivityKit's documented rules.
struct SimulatedActivity {
    /// The longest an activity stays active: Apple ends it after 8 hours.
    static let maximumActiveDuration = 8 * 3600
    /// The longest an ended activity stays on the Lock Screen.
    static let maximumDismissalDelay = 4 * 3600

    /// What the activity shows: set by its start, moved on by the pushes it applies.
    struct Content {
        let attributesType: String
        let attributes: RawJSON
        var contentState: RawJSON
        var staleDate: Int?
        var relevanceScore: Double?

        /// Takes what an applied push carries; what it leaves out stays as it was.
        mutating func apply(_ payload: LiveActivityPayload) {
            if let contentState = payload.contentState { self.contentState = contentState }
            if let staleDate = payload.staleDate { self.staleDate = staleDate }
            if let relevanceScore = payload.relevanceScore { self.relevanceScore = relevanceScore }
        }
    }

    /// Its life on the device, in device time: started, ended (explicitly or by the 8-hour limit), dismissed.
    struct Lifecycle {
        let startedAt: Int
        /// The time of an explicit end.
        var endedAt: Int?
        /// When an explicitly ended activity leaves the Lock Screen.
        var dismissAt: Int?
        /// Removed from the device without an end, while its token still answers 200.
        var isLost = false

        /// When the activity ended (explicitly, or by the 8-hour limit), if it has by `now`.
        func end(at now: Int) -> Int? {
            if let endedAt { return endedAt }
            let forcedEnd = self.startedAt + SimulatedActivity.maximumActiveDuration
            return now >= forcedEnd ? forcedEnd : nil
        }

        /// When the activity leaves (or left) the Lock Screen, once it has ended by `now`.
        func dismissal(at now: Int) -> Int? {
            self.end(at: now).map { self.dismissAt ?? $0 + SimulatedActivity.maximumDismissalDelay }
        }

        /// Whether the activity has left the Lock Screen by `now`.
        func isDismissed(at now: Int) -> Bool {
            if self.isLost { return true }
            guard let dismissal = self.dismissal(at: now) else { return false }
            return now >= dismissal
        }

        /// Ends the activity at `now`, leaving the Lock Screen at the dismissal date asked for, at most 4 hours later.
        mutating func end(now: Int, dismissalDate: Int?) {
            self.endedAt = now
            let latest = now + SimulatedActivity.maximumDismissalDelay
            self.dismissAt = max(now, min(dismissalDate ?? latest, latest))
        }
    }

    /// What became of the pushes it received, the start that created it included.
    struct Pushes {
        /// The `timestamp` of the last applied push.
        var lastTimestamp: Int
        /// Pushes applied after the start.
        var applied = 0
        /// Alerts shown, the start's included.
        var alertsShown = 1
        /// The request id (`apns-id`, or a broadcast's `apns-request-id`) of the last push applied, the start's
        /// included.
        var lastPushID: String?
        /// The `apns-collapse-id` of the start.
        var startCollapseID: String?
        var ignored: [IgnoredPush] = []
    }

    let id: String
    /// The per-activity update token, when the activity is token-based.
    var updateToken: String?
    /// The broadcast channel, when the activity is channel-based.
    let channelID: String?
    var content: Content
    var lifecycle: Lifecycle
    var pushes: Pushes

    /// Applies an update or end, or records why it was ignored.
    /// - Parameter pushID: The push's request id, remembered when the push is applied.
    /// - Returns: Whether the activity applied it.
    @discardableResult
    mutating func apply(_ payload: LiveActivityPayload, pushID: String?, now: Int) -> Bool {
        if self.lifecycle.isLost {
            return self.ignore(.activityLost, payload, now: now)
        }
        if self.lifecycle.isDismissed(at: now) {
            return self.ignore(.afterDismissal, payload, now: now)
        }
        if self.lifecycle.end(at: now) != nil {
            return self.ignore(.afterEnd, payload, now: now)
        }
        if payload.event == .start {
            return self.ignore(.startOnActivity, payload, now: now)
        }
        guard payload.timestamp > self.pushes.lastTimestamp else {
            return self.ignore(.olderTimestamp, payload, shownTimestamp: self.pushes.lastTimestamp, now: now)
        }
        self.pushes.lastTimestamp = payload.timestamp
        self.pushes.applied += 1
        self.pushes.lastPushID = pushID
        self.content.apply(payload)
        if payload.alert != nil { self.pushes.alertsShown += 1 }
        if payload.event == .end {
            self.lifecycle.end(now: now, dismissalDate: payload.dismissalDate)
        }
        return true
    }

    /// - Returns: `false`: the push was not applied.
    @discardableResult
    mutating func ignore(
        _ reason: IgnoredPush.Reason,
        _ payload: LiveActivityPayload?,
        detail: String? = nil,
        shownTimestamp: Int? = nil,
        now: Int
    ) -> Bool {
        let push = IgnoredPush(
            reason: reason,
            detail: detail,
            event: payload?.event.rawValue,
            timestamp: payload?.timestamp,
            receivedAt: now,
            shownTimestamp: shownTimestamp
        )
        self.pushes.ignored.remember(push)
        return false
    }
}
