/// `PUT /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}`.
struct PushToStartTokenBody: Decodable {
    /// The token in hex, as ActivityKit's `pushToStartTokenUpdates` gives it.
    let token: String
    let userId: String?
    let osVersion: String?
    /// Whether the user allows frequent updates. Defaults to `true`.
    let frequentUpdatesEnabled: Bool?
}

/// `PUT /v1/apps/{bundleId}/activities/{activityId}`.
struct ActivityBody: Decodable {
    let attributesType: String
    /// The feed it follows, by key.
    let feed: String?
    /// Its update token in hex (token-based).
    let pushToken: String?
    /// The channel it subscribed to (channel-based).
    let channelId: String?
    let deviceId: String?
    let userId: String?
    let osVersion: String?
}

/// What a registration or a deletion did: `created`, `rotated`, `tokenAdded`, `tokenRotated`, `unchanged`,
/// `deleted` or `ended`.
struct RegistrationResultBody: Encodable {
    let result: String
}
