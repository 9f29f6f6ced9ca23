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
