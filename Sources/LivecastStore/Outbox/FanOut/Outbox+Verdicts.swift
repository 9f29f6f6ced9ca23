package import PostgresNIO

extension Outbox {
    /// Records what became of a batch of pushes of one app, in this order: the app's sending held (the invalidation
    /// guard tripped), its credentials doubted, the pushes owed to `updateID`'s targets (a batch of one update), the
    /// failures, APNs' verdicts on tokens (``applyInvalidations(_:appID:tokens:)``) and the tokens proven.
    package func record(
        _ batch: PageRecord,
        of updateID: Int64?,
        appID: Int64,
        tokens: TokenTable,
        on connection: PostgresConnection
    ) async throws
        -> PageRecorded
    {
        var recorded = PageRecorded()
        if let reason = batch.holdReason { try await self.holdSending(appID: appID, reason: reason) }
        if let doubt = batch.credentialsDoubt { recorded.doubtIsNew = try await self.doubtCredentials(appID: appID, reason: doubt) }
        if let updateID {
            try await self.owe(batch.owed.map(\.target), delays: batch.owed.map(\.delay), updateID: updateID, appID: appID, on: connection)
        }
        try await self.recordFailures(batch.failures, on: connection)
        recorded.invalidated = try await self.applyInvalidations(batch.invalidations, appID: appID, tokens: tokens)
        switch tokens {
        case .activityTokens: try await self.proveActivityTokens(batch.proven, on: connection)
        case .pushToStartTokens: try await self.provePushToStartTokens(batch.proven, on: connection)
        }
        return recorded
    }

    /// Applies APNs' verdicts on the tokens it refused (410 `Unregistered`, 400 `BadDeviceToken`), each in its own
    /// statement under the token's rule (``Activities/invalidateToken(id:reason:invalidSinceMillis:)``,
    /// ``PushToStartTokens/invalidate(appID:token:reason:invalidSinceMillis:)``).
    /// - Returns: How many tokens were invalidated.
    package func applyInvalidations(_ invalidations: [TokenInvalidation], appID: Int64, tokens: TokenTable) async throws -> Int {
        var invalidated = 0
        for invalidation in invalidations {
            switch tokens {
            case .activityTokens:
                invalidated +=
                    try await Activities(client: self.database, logger: self.logger)
                    .invalidateToken(id: invalidation.tokenID, reason: invalidation.reason, invalidSinceMillis: invalidation.invalidSinceMillis)
                    ? 1 : 0
            case .pushToStartTokens:
                invalidated +=
                    try await PushToStartTokens(client: self.database, logger: self.logger).invalidate(
                        appID: appID,
                        token: invalidation.token,
                        reason: PushToStartTokens.InvalidationReason(rawValue: invalidation.reason) ?? .unregistered,
                        invalidSinceMillis: invalidation.invalidSinceMillis
                    ) ? 1 : 0
            }
        }
        return invalidated
    }

    /// Holds an app's sending, for `reason`, until an operator resumes it (``Apps/holdSending(id:reason:)``).
    package func holdSending(appID: Int64, reason: String) async throws {
        try await Apps(client: self.database, masterKey: nil, logger: self.logger).holdSending(id: appID, reason: reason)
    }

    /// Puts an app's credentials in doubt, for `reason` (``Apps/doubtCredentials(id:reason:)``).
    /// - Returns: Whether the doubt is new.
    package func doubtCredentials(appID: Int64, reason: String) async throws -> Bool {
        try await Apps(client: self.database, masterKey: nil, logger: self.logger).doubtCredentials(id: appID, reason: reason)
    }
}
