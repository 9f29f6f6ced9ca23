import APNs
import LivecastCore
import LivecastStore
import PostgresNIO

extension Dispatcher {
    /// Sends one app's claimed owed pushes again, each to its target's live token or channel, under the
    /// activities' send locks. Delivered and refused ones are settled (a target gone since settles it too); ones
    /// APNs still asks to retry are due again after a longer backoff; superseded ones are settled unsent; ones past
    /// their deadline are given up as dead letters without another try. The claim leaves at most one per target
    /// (``ClaimOwedPushesStatement``).
    func sendOwed(_ claims: [OwedClaim], appID: Int64, client: APNsClient, bundleID: String) async throws {
        let superseded = claims.filter(\.isSuperseded)
        let expired = claims.filter { $0.pastDeadline && !$0.isSuperseded }
        let due = claims.filter { !$0.pastDeadline && !$0.isSuperseded }
        try await self.database.withGuardedConnection { connection in
            try await self.deadLetter(
                expired.map { $0.deadLetter(reason: $0.lastReason) },
                appID: appID,
                on: connection
            )
            let activityIDs = due.filter { $0.kind == .activity }.map(\.targetID)
            let results = try await self.withSendLocks(SendLocks.activityNamespace, activityIDs, on: connection) {
                try await self.send(due, client: client, bundleID: bundleID, on: connection)
            }
            let updateOfClaim = Dictionary(uniqueKeysWithValues: due.map { ($0.id, $0.updateID) })
            for (tokens, delivery) in results.deliveries {
                let updateIDs = delivery.failures.map { updateOfClaim[$0.ownerID] ?? 0 }
                try await self.recordFailures(delivery.failures, updateIDs: updateIDs, on: connection)
                try await self.applyInvalidations(delivery.invalidations, appID: appID, tokens: tokens)
            }
            if let reason = results.guardReason { try await self.holdSending(appID: appID, reason: reason) }
            try await self.retryOwed(results.retries, on: connection)
            try await self.settleOwed(
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
        var retries: [(claim: OwedClaim, status: Int?, reason: String)] = []
        /// Failures and token verdicts to record, per token table.
        var deliveries: [TokenTable: PageDelivery] = [:]
        /// Why the invalidation guard tripped on a batch, if it did.
        var guardReason: String?
    }

    private func send(_ claims: [OwedClaim], client: APNsClient, bundleID: String, on connection: PostgresConnection) async throws -> OwedResults {
        var results = OwedResults()
        let tokens = try await self.liveTokens(of: claims, on: connection)
        let channels = try await self.liveChannels(of: claims.filter { $0.kind == .channel }.map(\.targetID), on: connection)
        var devicePushes: [(claim: OwedClaim, target: PageTarget, table: TokenTable)] = []
        for claim in claims {
            switch claim.kind {
            case .activity, .pushToStart:
                let table: TokenTable = claim.kind == .activity ? .activityTokens : .pushToStartTokens
                guard let (tokenID, token) = tokens[claim.kind]?[claim.targetID] else {
                    results.settled.append(claim)
                    continue
                }
                let target = PageTarget(
                    tokenID: tokenID,
                    token: token,
                    payload: claim.payload,
                    ownerID: claim.id,
                    pushID: PushID(
                        updateID: claim.updateID,
                        targetKind: claim.kind == .activity ? .activity : .pushToStart,
                        targetID: claim.targetID
                    ),
                    collapseID: claim.kind == .pushToStart ? claim.feedID.map(PushID.startCollapseID(feedID:)) : nil
                )
                devicePushes.append((claim, target, table))
            case .channel:
                guard let channel = channels[claim.targetID] else {
                    results.settled.append(claim)
                    continue
                }
                let outcome = try await self.broadcast(
                    claim.payload,
                    of: claim.updateID,
                    to: (claim.targetID, channel.id, channel.storagePolicy),
                    priority: claim.priority,
                    client: client,
                    bundleID: bundleID,
                    on: connection
                )
                switch outcome.classification {
                case .delivered: results.delivered.append(claim)
                case .retryLater: results.retries.append((claim, outcome.status, outcome.failureReason))
                default: results.failed.append(claim)
                }
            }
        }
        // One batch per token table and priority: the client sends a batch at one priority.
        let groups = Dictionary(grouping: devicePushes) { "\($0.table == .activityTokens ? "a" : "p")\($0.claim.priority)" }
        for group in groups.values {
            guard let first = group.first else { continue }
            let byOwner = Dictionary(uniqueKeysWithValues: group.map { ($0.claim.id, $0.claim) })
            let delivery = await self.deliver(
                group.map(\.target),
                tokens: first.table,
                client: client,
                bundleID: bundleID,
                priority: first.claim.priority
            )
            results.guardReason = results.guardReason ?? delivery.guardReason
            results.delivered += delivery.delivered.compactMap { byOwner[$0] }
            for owed in delivery.owed {
                if let claim = byOwner[owed.id] { results.retries.append((claim, owed.status, owed.reason)) }
            }
            let refused = Set(group.map(\.claim.id)).subtracting(delivery.delivered).subtracting(delivery.owed.map(\.id))
            results.failed += refused.compactMap { byOwner[$0] }
            var recorded = results.deliveries[first.table, default: PageDelivery()]
            recorded.failures += delivery.failures
            recorded.invalidations += delivery.invalidations
            results.deliveries[first.table] = recorded
        }
        results.settled += results.delivered + results.failed
        return results
    }

    /// The live tokens of owed pushes' targets: an activity's live update token (not of a dismissed activity), or
    /// a push-to-start token not invalidated; by kind and target id.
    private func liveTokens(of claims: [OwedClaim], on connection: PostgresConnection) async throws -> [OwedTarget.Kind: [Int64: (Int64, String)]] {
        var tokens: [OwedTarget.Kind: [Int64: (Int64, String)]] = [:]
        let activityIDs = claims.filter { $0.kind == .activity }.map(\.targetID)
        if !activityIDs.isEmpty {
            let rows = try await connection.query(
                """
                SELECT a.id, t.id, t.token FROM activities a
                JOIN activity_tokens t ON t.activity_id = a.id AND t.invalidated_at IS NULL
                WHERE a.id = ANY(\(activityIDs)) AND a.state <> \(unescaped: ActivityState.dismissed.sql)
                """,
                logger: self.logger
            )
            for try await (activityID, tokenID, token) in rows.decode((Int64, Int64, String).self) {
                tokens[.activity, default: [:]][activityID] = (tokenID, token)
            }
        }
        let tokenIDs = claims.filter { $0.kind == .pushToStart }.map(\.targetID)
        if !tokenIDs.isEmpty {
            let rows = try await connection.query(
                "SELECT id, token FROM push_to_start_tokens WHERE id = ANY(\(tokenIDs)) AND invalidated_at IS NULL",
                logger: self.logger
            )
            for try await (tokenID, token) in rows.decode((Int64, String).self) { tokens[.pushToStart, default: [:]][tokenID] = (tokenID, token) }
        }
        return tokens
    }

    private func liveChannels(of rowIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: (id: String, storagePolicy: Int)] {
        guard !rowIDs.isEmpty else { return [:] }
        let rows = try await connection.query(
            "SELECT id, channel_id, storage_policy::int FROM channels WHERE id = ANY(\(rowIDs)) AND state = \(unescaped: ChannelState.active.sql)",
            logger: self.logger
        )
        var channels: [Int64: (id: String, storagePolicy: Int)] = [:]
        for try await (rowID, channelID, storagePolicy) in rows.decode((Int64, String, Int).self) { channels[rowID] = (channelID, storagePolicy) }
        return channels
    }
}
