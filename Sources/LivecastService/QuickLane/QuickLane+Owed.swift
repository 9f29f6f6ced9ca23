import APNs
import LivecastCore
import LivecastStore
import PostgresNIO

extension QuickLane {
    /// Sends one app's claimed owed pushes again, each to its target's live token or channel, under the
    /// activities' send locks. Delivered and refused ones are settled (a target gone since settles it too); ones
    /// APNs still asks to retry are due again after a longer backoff; superseded ones are settled unsent; ones past
    /// their deadline are given up as dead letters without another try. The claim leaves at most one per target
    /// (`ClaimOwedPushesStatement`).
    func sendOwed(_ claims: [OwedClaim], appID: Int64, app: AppClient) async throws {
        let superseded = claims.filter(\.isSuperseded)
        let expired = claims.filter { $0.pastDeadline && !$0.isSuperseded }
        let due = claims.filter { !$0.pastDeadline && !$0.isSuperseded }
        try await self.tools.database.withGuardedConnection { connection in
            try await self.tools.recorder.deadLetter(
                expired.map { $0.deadLetter(reason: $0.lastReason) },
                appID: appID,
                on: connection
            )
            let activityIDs = due.filter { $0.kind == .activity }.map(\.targetID)
            let results = try await self.tools.outbox.withSendLocks(SendLocks.activityNamespace, activityIDs, on: connection) {
                try await self.send(due, app: app, on: connection)
            }
            let updateOfClaim = Dictionary(uniqueKeysWithValues: due.map { ($0.id, $0.updateID) })
            for (tokens, delivery) in results.deliveries {
                let failures = delivery.failures.map { $0.failedPush(of: updateOfClaim[$0.ownerID] ?? 0) }
                try await self.tools.outbox.recordFailures(failures, on: connection)
                try await self.tools.recorder.applyInvalidations(delivery.invalidations, appID: appID, tokens: tokens)
                try await self.tools.recorder.prove(delivery.proven, tokens: tokens, on: connection)
            }
            if let reason = results.guardReason { try await self.tools.recorder.holdSending(appID: appID, reason: reason) }
            if let doubt = results.credentialsDoubt { try await self.tools.recorder.doubtCredentials(appID: appID, reason: doubt) }
            try await self.tools.recorder.retry(results.retries, on: connection)
            try await self.tools.outbox.settle(
                superseded + expired + results.settled,
                delivered: results.delivered,
                failed: results.failed,
                on: connection
            )
        }
    }

    /// What sending owed pushes came to.
    private struct OwedResults {
        var delivered: [OwedClaim] = []
        var failed: [OwedClaim] = []
        /// Delivered, failed, or without a live target: no longer owed.
        var settled: [OwedClaim] = []
        /// APNs asked to retry these later, or refused their unproven tokens before the app's credentials were proven
        /// (then they await the proof).
        var retries: [(claim: OwedClaim, status: Int?, reason: String, awaitsProof: Bool)] = []
        /// Failures and token verdicts to record, per token table.
        var deliveries: [TokenTable: PageDelivery] = [:]
        /// Why the invalidation guard tripped on a batch, if it did.
        var guardReason: String?
        /// Why a batch put the app's credentials in doubt, if one did.
        var credentialsDoubt: String?
    }

    private func send(_ claims: [OwedClaim], app: AppClient, on connection: PostgresConnection) async throws -> OwedResults {
        var results = OwedResults()
        let tokens: [OwedTarget.Kind: [Int64: LiveToken]] = [
            .activity: try await self.tools.outbox.liveTokens(ofActivities: claims.filter { $0.kind == .activity }.map(\.targetID), on: connection),
            .pushToStart: try await self.tools.outbox.livePushToStartTokens(
                claims.filter { $0.kind == .pushToStart }.map(\.targetID),
                on: connection
            ),
        ]
        let channels = try await self.tools.outbox.liveChannels(claims.filter { $0.kind == .channel }.map(\.targetID), on: connection)
        var devicePushes: [(claim: OwedClaim, target: PageTarget, table: TokenTable)] = []
        for claim in claims {
            switch claim.kind {
            case .activity, .pushToStart:
                let table: TokenTable = claim.kind == .activity ? .activityTokens : .pushToStartTokens
                guard let token = tokens[claim.kind]?[claim.targetID] else {
                    results.settled.append(claim)
                    continue
                }
                let target = PageTarget(
                    tokenID: token.rowID,
                    token: token.token,
                    payload: claim.payload,
                    ownerID: claim.id,
                    pushID: PushID(
                        updateID: claim.updateID,
                        targetKind: claim.kind == .activity ? .activity : .pushToStart,
                        targetID: claim.targetID
                    ),
                    collapseID: claim.kind == .pushToStart ? claim.feedID.map(PushID.startCollapseID(feedID:)) : nil,
                    isUnproven: token.isUnproven
                )
                devicePushes.append((claim, target, table))
            case .channel:
                guard let channel = channels[claim.targetID] else {
                    results.settled.append(claim)
                    continue
                }
                let outcome = try await self.tools.broadcaster.broadcast(claim, to: channel, app: app, on: connection)
                switch outcome.classification {
                case .delivered: results.delivered.append(claim)
                case .retryLater: results.retries.append((claim, outcome.status, outcome.failureReason, false))
                default: results.failed.append(claim)
                }
            }
        }
        // One batch per token table and priority: the client sends a batch at one priority.
        let groups = Dictionary(grouping: devicePushes) { "\($0.table == .activityTokens ? "a" : "p")\($0.claim.priority)" }
        for group in groups.values {
            guard let first = group.first else { continue }
            let byOwner = Dictionary(uniqueKeysWithValues: group.map { ($0.claim.id, $0.claim) })
            let delivery = await self.tools.sender.deliver(
                group.map(\.target),
                tokens: first.table,
                app: app,
                priority: APNsPriority(stored: first.claim.priority)
            )
            results.guardReason = results.guardReason ?? delivery.guardReason
            results.credentialsDoubt = results.credentialsDoubt ?? delivery.credentialsDoubt
            results.delivered += delivery.delivered.compactMap { byOwner[$0] }
            for owed in delivery.owed {
                if let claim = byOwner[owed.id] { results.retries.append((claim, owed.status, owed.reason, owed.awaitsProof)) }
            }
            let refused = Set(group.map(\.claim.id)).subtracting(delivery.delivered).subtracting(delivery.owed.map(\.id))
            results.failed += refused.compactMap { byOwner[$0] }
            var recorded = results.deliveries[first.table, default: PageDelivery()]
            recorded.failures += delivery.failures
            recorded.invalidations += delivery.invalidations
            recorded.proven += delivery.proven
            results.deliveries[first.table] = recorded
        }
        results.settled += results.delivered + results.failed
        return results
    }
}

extension QuickLane {
    /// Puts back an app's claimed owed pushes for a minute (its signing key cannot be opened); those past their
    /// deadline are given up as dead letters with `reason`.
    func holdBack(_ claims: [OwedClaim], reason: String) async throws {
        guard let appID = claims.first?.appID else { return }
        var expired: [OwedClaim] = []
        var waiting: [OwedClaim] = []
        for claim in claims {
            switch ClaimOutcome(.appUnusable(pastDeadline: claim.pastDeadline)) {
            case .giveUp: expired.append(claim)
            default: waiting.append(claim)
            }
        }
        try await self.tools.database.withGuardedConnection { [expired, waiting] connection in
            try await self.tools.recorder.deadLetter(expired.map { $0.deadLetter(reason: reason) }, appID: appID, on: connection)
            try await self.tools.outbox.settle(expired, delivered: [], failed: [], on: connection)
            try await self.tools.outbox.putBack(waiting, for: RetryPolicy.unusableKeyPause, on: connection)
        }
    }
}
