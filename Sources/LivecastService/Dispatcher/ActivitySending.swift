import APNs
import LivecastCore
import LivecastStore
import PostgresNIO

extension Dispatcher {
    /// Where a standalone activity's update goes: its live update token, or its live channel.
    private enum ActivityAddress {
        case token(id: Int64, token: String)
        case channel(rowID: Int64, id: String, storagePolicy: Int)
    }

    /// Sends one app's claimed activity updates under their activities' send locks, and records every outcome in
    /// a few statements.
    func sendActivityUpdates(_ claims: [ActivityClaim], appID: Int64, client: APNsClient, bundleID: String) async throws {
        let (verdicts, guardReason) = try await self.database.withGuardedConnection { connection in
            try await self.withSendLocks(SendLocks.activityNamespace, claims.map(\.activityID), on: connection) {
                let addresses = try await self.addresses(of: claims.map(\.activityID), on: connection)
                return try await self.send(claims, to: addresses, client: client, bundleID: bundleID, on: connection)
            }
        }
        if let guardReason { try await self.holdSending(appID: appID, reason: guardReason) }
        try await self.recordActivityVerdicts(verdicts, appID: appID)
    }

    private func addresses(of activityIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: ActivityAddress] {
        let rows = try await connection.query(ActivityAddressQuery.query(activityIDs), logger: self.logger)
        var addresses: [Int64: ActivityAddress] = [:]
        for try await (activityID, tokenID, token, channelRowID, channelID, storagePolicy) in rows.decode(
            (Int64, Int64?, String?, Int64?, String?, Int?).self
        ) {
            if let tokenID, let token {
                addresses[activityID] = .token(id: tokenID, token: token)
            } else if let channelRowID, let channelID, let storagePolicy {
                addresses[activityID] = .channel(rowID: channelRowID, id: channelID, storagePolicy: storagePolicy)
            }
        }
        return addresses
    }

    private func send(
        _ claims: [ActivityClaim],
        to addresses: [Int64: ActivityAddress],
        client: APNsClient,
        bundleID: String,
        on connection: PostgresConnection
    ) async throws -> (verdicts: [ActivityVerdict], guardReason: String?) {
        var verdicts: [ActivityVerdict] = []
        var devicePushes: [(claim: ActivityClaim, tokenID: Int64, token: String)] = []
        for claim in claims {
            switch addresses[claim.activityID] {
            case .token(let id, let token):
                devicePushes.append((claim, id, token))
            case .channel(let channelRowID, let channelID, let storagePolicy):
                let outcome = try await self.broadcast(
                    claim.payload,
                    of: claim.updateID,
                    to: (channelRowID, channelID, storagePolicy),
                    priority: claim.priority,
                    client: client,
                    bundleID: bundleID,
                    on: connection
                )
                var verdict = self.verdict(claim, outcome, target: channelID, targetKind: "channel")
                verdict.failure = nil  // the broadcast is recorded already
                verdicts.append(verdict)
            case nil:
                verdicts.append(ActivityVerdict(updateID: claim.updateID, status: .failed, failure: (nil, "NoLiveTarget")))
            }
        }
        let outcomes = await client.send(
            devicePushes.map {
                DevicePush(
                    deviceToken: $0.token,
                    bundleID: bundleID,
                    payload: $0.claim.payload,
                    priority: $0.claim.priority,
                    apnsID: PushID(updateID: $0.claim.updateID, targetKind: .activity, targetID: $0.claim.activityID)?.uuidString
                )
            }
        )
        DispatchMetrics.record(outcomes, target: "device")
        // When the invalidation guard trips, invalid-token answers are retried like 5xx, and no token is touched.
        let guardReason = self.invalidationGuard.trip(outcomes)
        for (push, outcome) in zip(devicePushes, outcomes) {
            let held = guardReason != nil && outcome.classification == .tokenInvalid
            var verdict = self.verdict(push.claim, outcome, target: push.token, targetKind: "device", retryingAnyway: held)
            if outcome.classification == .tokenInvalid, !held {
                verdict.invalidation = PageDelivery.Invalidation(
                    tokenID: push.tokenID,
                    token: push.token,
                    reason: outcome.failureReason,
                    invalidSinceMillis: outcome.invalidSince.map(Int64.init)
                )
            }
            verdicts.append(verdict)
        }
        return (verdicts, guardReason)
    }
}
