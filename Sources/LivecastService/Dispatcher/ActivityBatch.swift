import APNs
import Foundation
import LivecastStore
import Logging
import PostgresNIO

extension Dispatcher {
    /// One claimed update of a standalone activity.
    private struct ActivityClaim {
        var updateID: Int64
        var appID: Int64
        var activityID: Int64
        var payload: [UInt8]
        var priority: Int
        var attempts: Int
    }

    /// Where a standalone activity's update goes: its live update token, or its live channel.
    private enum Target {
        case token(id: Int64, token: String)
        case channel(id: String, storagePolicy: Int)
    }

    /// What to write for one claimed update.
    private struct Verdict {
        var updateID: Int64
        /// `sent` or `failed`; `nil` to try again after `retryAfter` seconds.
        var status: String?
        var retryAfter: Double = 0
        var target: String = ""
        /// `device` or `channel`: what `target` is.
        var targetKind: String = "device"
        var failure: (status: Int?, reason: String)?
        /// A channel APNs no longer has (`ChannelNotRegistered`, `BadChannelId`), to mark missing in the registry.
        var missingChannel: (appID: Int64, channelID: String)?
        /// APNs' verdict on the token, applied after the send locks are released.
        var invalidation: (tokenID: Int64, reason: String, invalidSinceMillis: Int64?)?
    }

    /// Claims a batch of standalone activity updates (each the oldest unfinished of its activity), sends them under
    /// their activities' send locks, and records every outcome in a few statements.
    func dispatchActivityBatch() async throws -> Int {
        let claims = try await self.claimActivityUpdates()
        guard !claims.isEmpty else { return 0 }
        for (appID, group) in Dictionary(grouping: claims, by: \.appID) {
            let (client, bundleID) = try await self.clientForApp(appID)
            let verdicts = try await self.database.withConnection { connection in
                try await self.withSendLocks(SendLocks.activityNamespace, group.map(\.activityID), on: connection) {
                    let targets = try await self.targets(of: group.map(\.activityID), on: connection)
                    return await self.send(group, to: targets, client: client, bundleID: bundleID)
                }
            }
            try await self.record(verdicts)
        }
        return claims.count
    }

    private func claimActivityUpdates() async throws -> [ActivityClaim] {
        let rows = try await self.database.query(
            """
            WITH next AS (
                SELECT u.id FROM updates u
                WHERE u.status IN ('pending', 'dispatching') AND u.not_before <= now() AND u.activity_id IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM updates e WHERE e.activity_id = u.activity_id AND e.id < u.id AND e.status IN ('pending', 'dispatching'))
                ORDER BY u.not_before, u.id
                LIMIT \(self.settings.batchSize)
                FOR UPDATE SKIP LOCKED
            )
            UPDATE updates u SET status = 'dispatching', claimed_by = \(self.id), attempts = u.attempts + 1,
                not_before = now() + make_interval(secs => \(self.settings.leaseSeconds))
            FROM next WHERE u.id = next.id
            RETURNING u.id, u.app_id, u.activity_id, u.payload, u.priority::int, u.attempts
            """,
            logger: self.logger
        )
        var claims: [ActivityClaim] = []
        for try await (id, appID, activityID, payload, priority, attempts) in rows.decode((Int64, Int64, Int64, String, Int, Int).self) {
            claims.append(
                ActivityClaim(
                    updateID: id,
                    appID: appID,
                    activityID: activityID,
                    payload: Array(payload.utf8),
                    priority: priority,
                    attempts: attempts
                )
            )
        }
        return claims
    }

    private func targets(of activityIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: Target] {
        let rows = try await connection.query(
            """
            SELECT a.id, t.id, t.token, c.channel_id, c.storage_policy::int FROM activities a
            LEFT JOIN activity_tokens t ON t.activity_id = a.id AND t.invalidated_at IS NULL
            LEFT JOIN channels c ON c.id = a.channel_id AND c.state = 'active'
            WHERE a.id = ANY(\(activityIDs))
            """,
            logger: self.logger
        )
        var targets: [Int64: Target] = [:]
        for try await (activityID, tokenID, token, channelID, storagePolicy) in rows.decode((Int64, Int64?, String?, String?, Int?).self) {
            if let tokenID, let token {
                targets[activityID] = .token(id: tokenID, token: token)
            } else if let channelID, let storagePolicy {
                targets[activityID] = .channel(id: channelID, storagePolicy: storagePolicy)
            }
        }
        return targets
    }

    private func send(_ claims: [ActivityClaim], to targets: [Int64: Target], client: APNsClient, bundleID: String) async -> [Verdict] {
        var verdicts: [Verdict] = []
        var devicePushes: [(claim: ActivityClaim, tokenID: Int64, token: String)] = []
        for claim in claims {
            switch targets[claim.activityID] {
            case .token(let id, let token):
                devicePushes.append((claim, id, token))
            case .channel(let channelID, let storagePolicy):
                let expiration = storagePolicy == 0 ? 0 : Int(Date().timeIntervalSince1970) + 8 * 3600
                let outcome = await client.broadcast(
                    BroadcastPush(channelID: channelID, bundleID: bundleID, payload: claim.payload, priority: claim.priority, expiration: expiration)
                )
                DispatchMetrics.record([outcome], target: "channel")
                var verdict = self.verdict(claim, outcome, target: channelID)
                verdict.targetKind = "channel"
                if outcome.reason == .channelNotRegistered || outcome.reason == .badChannelId {
                    verdict.missingChannel = (claim.appID, channelID)
                }
                verdicts.append(verdict)
            case nil:
                verdicts.append(Verdict(updateID: claim.updateID, status: "failed", failure: (nil, "NoLiveTarget")))
            }
        }
        let outcomes = await client.send(
            devicePushes.map { DevicePush(deviceToken: $0.token, bundleID: bundleID, payload: $0.claim.payload, priority: $0.claim.priority) }
        )
        DispatchMetrics.record(outcomes, target: "device")
        for (push, outcome) in zip(devicePushes, outcomes) {
            var verdict = self.verdict(push.claim, outcome, target: push.token)
            if outcome.classification == .tokenInvalid {
                verdict.invalidation = (push.tokenID, outcome.failureReason, outcome.invalidSince.map(Int64.init))
            }
            verdicts.append(verdict)
        }
        return verdicts
    }

    private func verdict(_ claim: ActivityClaim, _ outcome: APNsOutcome, target: String) -> Verdict {
        switch outcome.classification {
        case .delivered:
            return Verdict(updateID: claim.updateID, status: "sent", target: target)
        case .retryLater where claim.attempts < self.settings.activityAttempts:
            // Exponential backoff with jitter: 2, 4, 8 … seconds, at most 5 minutes.
            let delay = min(pow(2.0, Double(claim.attempts)), 300) * Double.random(in: 0.8...1.2)
            return Verdict(updateID: claim.updateID, status: nil, retryAfter: delay, target: target)
        default:
            return Verdict(updateID: claim.updateID, status: "failed", target: target, failure: (outcome.status, outcome.failureReason))
        }
    }

    /// Writes a batch's verdicts: finished updates, retries and failures, one statement each; then APNs' verdicts
    /// on tokens.
    private func record(_ verdicts: [Verdict]) async throws {
        var invalidated = 0
        for case let (tokenID, reason, since)? in verdicts.map(\.invalidation) {
            invalidated +=
                try await Activities(client: self.database, logger: self.logger).invalidateToken(
                    id: tokenID,
                    reason: reason,
                    invalidSinceMillis: since
                ) ? 1 : 0
        }
        DispatchMetrics.tokensInvalidated(invalidated, kind: "update")
        let finished = verdicts.filter { $0.status != nil }
        let retried = verdicts.filter { $0.status == nil }
        let failed = verdicts.filter { $0.failure != nil }
        if !finished.isEmpty {
            try await self.database.query(
                """
                UPDATE updates u SET status = v.status, claimed_by = NULL, completed_at = now(),
                    sent_count = u.sent_count + (v.status = 'sent')::int, failed_count = u.failed_count + (v.status = 'failed')::int
                FROM unnest(\(finished.map(\.updateID))::bigint[], \(finished.map { $0.status ?? "failed" })::text[]) AS v(id, status)
                WHERE u.id = v.id AND u.claimed_by = \(self.id)
                """,
                logger: self.logger
            )
        }
        if !retried.isEmpty {
            try await self.database.query(
                """
                UPDATE updates u SET status = 'pending', claimed_by = NULL, not_before = now() + make_interval(secs => v.delay)
                FROM unnest(\(retried.map(\.updateID))::bigint[], \(retried.map(\.retryAfter))::float8[]) AS v(id, delay)
                WHERE u.id = v.id AND u.claimed_by = \(self.id)
                """,
                logger: self.logger
            )
        }
        if !failed.isEmpty {
            try await self.database.query(
                """
                INSERT INTO deliveries (update_id, target_kind, target, status, reason)
                SELECT id, kind, target, nullif(status, 0), reason
                FROM unnest(\(failed.map(\.updateID))::bigint[], \(failed.map(\.targetKind))::text[], \(failed.map(\.target))::text[],
                            \(failed.map { $0.failure?.status ?? 0 })::int[], \(failed.map { $0.failure?.reason ?? "" })::text[])
                    AS f(id, kind, target, status, reason)
                """,
                logger: self.logger
            )
        }
        let missing = verdicts.compactMap(\.missingChannel)
        if !missing.isEmpty {
            try await self.database.query(
                """
                UPDATE channels c SET state = 'missing'
                FROM unnest(\(missing.map(\.appID))::bigint[], \(missing.map(\.channelID))::text[]) AS m(app_id, channel_id)
                WHERE c.app_id = m.app_id AND c.channel_id = m.channel_id AND c.state = 'active'
                """,
                logger: self.logger
            )
        }
    }
}
