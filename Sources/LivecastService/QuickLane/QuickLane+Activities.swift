import APNs
import LivecastCore
import LivecastStore
import PostgresNIO

extension QuickLane {
    /// Sends one app's claimed activity updates under their activities' send locks, and records every outcome in
    /// a few statements.
    func sendActivityUpdates(_ claims: [ActivityClaim], appID: Int64, app: AppClient) async throws {
        let (verdicts, judgement) = try await self.tools.database.withGuardedConnection { connection in
            try await self.tools.outbox.withSendLocks(SendLocks.activityNamespace, claims.map(\.activityID), on: connection) {
                let addresses = try await self.tools.outbox.addresses(of: claims.map(\.activityID), on: connection)
                return try await self.send(claims, to: addresses, app: app, on: connection)
            }
        }
        if let reason = judgement.holdReason { try await self.tools.recorder.holdSending(appID: appID, reason: reason) }
        if let doubt = judgement.doubt { try await self.tools.recorder.doubtCredentials(appID: appID, reason: doubt) }
        try await self.recordActivityVerdicts(verdicts, appID: appID)
    }

    private func send(
        _ claims: [ActivityClaim],
        to addresses: [Int64: ActivityAddress],
        app: AppClient,
        on connection: PostgresConnection
    ) async throws -> (verdicts: [ActivityVerdict], judgement: InvalidationGuard.Judgement) {
        var verdicts: [ActivityVerdict] = []
        var devicePushes: [(claim: ActivityClaim, token: LiveToken)] = []
        for claim in claims {
            switch addresses[claim.activityID] {
            case .token(let token):
                devicePushes.append((claim, token))
            case .channel(let channel):
                let outcome = try await self.tools.broadcaster.broadcast(claim, to: channel, app: app, on: connection)
                var verdict = self.verdict(claim, outcome, target: channel.id, targetKind: .channel)
                verdict.failure = nil  // the broadcast is recorded already
                verdicts.append(verdict)
            case nil:
                verdicts.append(ActivityVerdict(updateID: claim.updateID, status: .failed, failure: (nil, "NoLiveTarget")))
            }
        }
        let outcomes = await app.client.send(
            devicePushes.map {
                DevicePush(
                    deviceToken: $0.token.token,
                    bundleID: app.bundleID,
                    payload: $0.claim.payload,
                    priority: APNsPriority(stored: $0.claim.priority),
                    apnsID: PushID(updateID: $0.claim.updateID, targetKind: .activity, targetID: $0.claim.activityID)?.uuid
                )
            }
        )
        DispatchMetrics.record(outcomes, target: "device")
        // When the invalidation guard trips, invalid-token answers are retried like 5xx, and no token is touched; an
        // unproven token refused before the app's credentials are proven is kept, and its update waits a while.
        let judgement = await self.tools.sender.judge(outcomes, unproven: devicePushes.map(\.token.isUnproven), app: app)
        for (push, outcome) in zip(devicePushes, outcomes) {
            let awaitsProof = push.token.isUnproven && !judgement.credentialsProven
            let held = outcome.classification == .tokenInvalid && (judgement.holdReason != nil || awaitsProof)
            var verdict = self.verdict(
                push.claim,
                outcome,
                target: push.token.token,
                targetKind: .device,
                retryingAnyway: held,
                pause: held && judgement.holdReason == nil ? RetryPolicy.awaitingProofPause : nil
            )
            if outcome.classification == .delivered, push.token.isUnproven { verdict.provenTokenID = push.token.rowID }
            if outcome.classification == .tokenInvalid, !held {
                verdict.invalidation = TokenInvalidation(
                    tokenID: push.token.rowID,
                    token: push.token.token,
                    reason: outcome.failureReason,
                    invalidSinceMillis: outcome.invalidSince.map(Int64.init)
                )
            }
            verdicts.append(verdict)
        }
        return (verdicts, judgement)
    }
}
