import LivecastStore

/// `GET /v1/apps/{bundleId}/feeds/{feedKey}/updates`: a page of a feed's history, newest first.
struct UpdateHistoryBody: Encodable {
    let updates: [UpdateStatusBody]
    /// The `before` of the next (older) page; absent on the last.
    let next: Int64?
}

/// `GET /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}`.
struct DeviceTokensBody: Encodable {
    let deviceId: String
    let tokens: [Token]

    struct Token: Encodable {
        let attributesType: String
        let token: String
        let live: Bool
        let osVersion: String?
        let userId: String?
        let registeredAt: Int64
        let lastSeenAt: Int64
        let invalidatedAt: Int64?
        let invalidationReason: String?
    }

    init(_ device: DeviceTokens) {
        self.deviceId = device.deviceID
        self.tokens = device.tokens.map {
            Token(
                attributesType: $0.attributesType,
                token: $0.token,
                live: $0.isLive,
                osVersion: $0.osVersion,
                userId: $0.userID,
                registeredAt: $0.registeredAt,
                lastSeenAt: $0.lastSeenAt,
                invalidatedAt: $0.invalidatedAt,
                invalidationReason: $0.invalidationReason
            )
        }
    }
}

/// `GET /v1/apps/{bundleId}/dead-letters`.
struct DeadLetterPageBody: Encodable {
    let deadLetters: [DeadLetterBody]
    /// The `after` of the next page; absent on the last.
    let next: Int64?
}

/// One dead letter.
struct DeadLetterBody: Encodable {
    let id: Int64
    let updateId: Int64
    let event: String
    /// `activity`, `pushToStart`, `channel`, or `feed` for a fan-out given up as a whole.
    let targetKind: String
    let target: String?
    let reason: String
    let attempts: Int
    let lastTryAt: Int64
    let replayedAt: Int64?
    let replayOutcome: String?

    init(_ entry: DeadLetterEntry) {
        self.id = entry.id
        self.updateId = entry.updateID
        self.event = entry.event
        self.targetKind = entry.targetKind == "push_to_start" ? "pushToStart" : entry.targetKind
        self.target = entry.target
        self.reason = entry.reason
        self.attempts = entry.attempts
        self.lastTryAt = entry.lastTryAt
        self.replayedAt = entry.replayedAt
        self.replayOutcome = entry.replayOutcome
    }
}

/// `POST /v1/apps/{bundleId}/dead-letters/{deadLetterId}/replay`.
struct ReplayBody: Encodable {
    let deadLetterId: Int64
    /// `requeued`, `superseded` or `targetGone`.
    let outcome: String
}
