import APNs
import Foundation
import LivecastStore
import Logging
import PostgresNIO

/// APNs asked to try a broadcast again later.
struct RetryLater: Error {
    var reason: String
}

/// The service is shutting down: a fan-out stops at its checkpoint and goes back to the outbox.
struct StopAtCheckpoint: Error {}

extension Dispatcher {
    /// Sends a claimed fan-out to its end, then marks it sent. A lost claim stops it quietly (the new holder goes on
    /// from the checkpoint); a broadcast APNs wants retried puts it back with a backoff; a graceful shutdown puts it
    /// back at its checkpoint. One claimed too often without progress is marked failed instead.
    func run(_ claimed: FanOutClaim) async throws {
        guard claimed.attempts <= self.settings.fanOutAttempts else {
            self.logger.error(
                "gave up a fan-out claimed again and again without progress",
                metadata: ["update": "\(claimed.updateID)", "claims": "\(claimed.attempts - 1)", "cursor": "\(claimed.cursor)"]
            )
            try await self.database.withConnection { try await self.release(claimed.updateID, status: "failed", on: $0) }
            return
        }
        let (client, bundleID) = try await self.clientForApp(claimed.appID)
        do {
            try await self.database.withConnection { connection in
                var claim = claimed
                switch claim.event {
                case .start:
                    try await self.sendStarts(&claim, client: client, bundleID: bundleID, on: connection)
                case .update, .end:
                    if !claim.channelDone { try await self.broadcast(&claim, client: client, bundleID: bundleID, on: connection) }
                    try await self.sendToFollowers(&claim, client: client, bundleID: bundleID, on: connection)
                }
                try await self.release(claim.updateID, status: "sent", on: connection)
            }
        } catch let lost as LostClaim {
            self.logger.notice("stopped a fan-out another dispatcher took over", metadata: ["update": "\(lost.updateID)"])
        } catch is StopAtCheckpoint {
            try await self.database.withConnection { try await self.release(claimed.updateID, status: "pending", on: $0) }
        } catch let retry as RetryLater {
            // No checkpoint came between the claim and the broadcast: the claim's count is the broadcast's tries.
            guard claimed.attempts < self.settings.fanOutAttempts else {
                self.logger.error(
                    "gave up a broadcast APNs kept asking to retry",
                    metadata: ["update": "\(claimed.updateID)", "reason": "\(retry.reason)"]
                )
                try await self.database.withConnection { try await self.release(claimed.updateID, status: "failed", on: $0) }
                return
            }
            let delay = min(pow(2, Double(claimed.attempts)), 300) * Double.random(in: 0.8...1.2)
            self.logger.info(
                "broadcast to retry later",
                metadata: ["update": "\(claimed.updateID)", "reason": "\(retry.reason)", "in": "\(Int(delay)) s"]
            )
            try await self.database.withConnection { try await self.release(claimed.updateID, status: "pending", retryAfter: delay, on: $0) }
        }
    }

    /// One broadcast to the feed's live channel, recorded as a delivery. A retired channel is never sent to.
    private func broadcast(_ claim: inout FanOutClaim, client: APNsClient, bundleID: String, on connection: PostgresConnection) async throws {
        let channels = try await connection.query(
            "SELECT channel_id, storage_policy::int FROM channels WHERE feed_id = \(claim.feedID) AND state = 'active'",
            logger: self.logger
        )
        var channel: (id: String, storagePolicy: Int)?
        for try await row in channels.decode((String, Int).self) { channel = row }
        guard let payload = claim.channelPayload, let channel else {
            try await self.checkpoint(&claim, cursor: claim.cursor, sent: 0, failed: 0, channelDone: true, on: connection)
            return
        }
        // No Storage: expiration 0; Most Recent Message: kept at most 8 hours (docs/ARCHITECTURE.md, invariant 5).
        let expiration = channel.storagePolicy == 0 ? 0 : Int(Date().timeIntervalSince1970) + 8 * 3600
        let outcome = await client.broadcast(
            BroadcastPush(channelID: channel.id, bundleID: bundleID, payload: payload, priority: claim.priority, expiration: expiration)
        )
        DispatchMetrics.record([outcome], target: "channel")
        try await connection.query(
            """
            INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
            VALUES (\(claim.updateID), 'channel', \(channel.id), \(outcome.status), \(outcome.isSuccess ? nil : outcome.failureReason), \(outcome.apnsID))
            """,
            logger: self.logger
        )
        if outcome.classification == .retryLater { throw RetryLater(reason: outcome.failureReason) }
        if outcome.reason == .channelNotRegistered || outcome.reason == .badChannelId {
            try await connection.query(
                "UPDATE channels SET state = 'missing' WHERE feed_id = \(claim.feedID) AND channel_id = \(channel.id)",
                logger: self.logger
            )
        }
        try await self.checkpoint(
            &claim,
            cursor: claim.cursor,
            sent: outcome.isSuccess ? 1 : 0,
            failed: outcome.isSuccess ? 0 : 1,
            channelDone: true,
            on: connection
        )
        if claim.event == .end {
            try await connection.query(
                """
                UPDATE activities SET state = 'ended', ended_at = now(), last_timestamp = \(claim.timestamp), dismissal_date = \(claim.dismissalDate)
                WHERE feed_id = \(claim.feedID) AND channel_id IS NOT NULL AND state IN ('starting', 'active')
                """,
                logger: self.logger
            )
        }
    }

    /// Walks the token-based followers page by page: each page is read and sent under the feed's send lock (so a
    /// token rotation never crosses it), then checkpointed; an end also ends the page's activities.
    private func sendToFollowers(_ claim: inout FanOutClaim, client: APNsClient, bundleID: String, on connection: PostgresConnection) async throws {
        let (event, timestamp, dismissalDate) = (claim.event, claim.timestamp, claim.dismissalDate)
        try await self.walkPages(&claim, tokens: .activityTokens, on: connection) { claim in
            try await self.withSendLocks(SendLocks.feedNamespace, [claim.feedID], on: connection) {
                var activityIDs: [Int64] = []
                var targets: [PageTarget] = []
                activityIDs.reserveCapacity(self.settings.pageSize)
                targets.reserveCapacity(self.settings.pageSize)
                let page = FollowerPage(feedID: claim.feedID, after: claim.cursor, limit: self.settings.pageSize)
                for try await (activityID, tokenID, token) in try await connection.execute(page, logger: self.logger) {
                    activityIDs.append(activityID)
                    targets.append(PageTarget(tokenID: tokenID, token: token, payload: claim.payload))
                }
                let delivery = await self.deliver(targets, client: client, bundleID: bundleID, priority: claim.priority, repeatable: true)
                return SentPage(rowIDs: activityIDs, delivery: delivery)
            }
        } finish: { page in
            guard event == .end else { return }
            try await connection.query(
                """
                UPDATE activities SET state = 'ended', ended_at = now(), last_timestamp = \(timestamp), dismissal_date = \(dismissalDate)
                WHERE id = ANY(\(page.rowIDs)) AND state IN ('starting', 'active')
                """,
                logger: self.logger
            )
        }
    }
}
