/// Which table a batch of device pushes' tokens live in.
package enum TokenTable: Sendable, Hashable {
    /// `activity_tokens`: the update tokens of activities.
    case activityTokens
    /// `push_to_start_tokens`.
    case pushToStartTokens

    /// What a push to such a token is owed to.
    package var owedKind: OwedTarget.Kind { self == .activityTokens ? .activity : .pushToStart }
}

/// A token APNs refused, with its verdict (410 `Unregistered`, 400 `BadDeviceToken`…), to be applied
/// (``Outbox/applyInvalidations(_:appID:tokens:)``).
package struct TokenInvalidation: Sendable {
    /// The token's row.
    package var tokenID: Int64
    package var token: String
    /// APNs' reason.
    package var reason: String
    /// The 410 answer's `timestamp`, in milliseconds since 1970.
    package var invalidSinceMillis: Int64?

    package init(tokenID: Int64, token: String, reason: String, invalidSinceMillis: Int64?) {
        self.tokenID = tokenID
        self.token = token
        self.reason = reason
        self.invalidSinceMillis = invalidSinceMillis
    }
}
