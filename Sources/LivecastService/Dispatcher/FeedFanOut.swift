import APNs
import Foundation
import LivecastCore
import LivecastStore
import Logging
import PostgresNIO

/// The service is shutting down: a fan-out stops at its checkpoint and goes back to the outbox.
struct StopAtCheckpoint: Error {}

extension Dispatcher {
    /// Sends a claimed fan-out to its end, then marks it sent; pushes APNs asked to retry stay owed to their
    /// targets. A lost claim stops it quietly (the new holder goes on from the checkpoint); a graceful shutdown
    /// puts it back at its checkpoint; an app whose signing key cannot be opened gets it back after a minute,
    /// until the retry deadline. One claimed too often without progress is given up as a dead letter.
    func run(_ claimed: FanOutClaim) async throws {
        guard claimed.attempts <= self.settings.fanOutAttempts else {
            try await self.database.withGuardedConnection { try await self.giveUp(claimed, reason: "NoProgress", on: $0) }
            return
        }
        let client: APNsClient
        let bundleID: String
        do {
            (client, bundleID) = try await self.clientForApp(claimed.appID)
        } catch let error as StoreError {
            try await self.database.withGuardedConnection { connection in
                if claimed.pastDeadline {
                    try await self.giveUp(claimed, reason: AppClients.unusableKeyReason, on: connection)
                } else {
                    self.logger.error("cannot send an app's fan-out", metadata: ["app": "\(claimed.appID)", "error": "\(error)"])
                    try await self.release(
                        claimed.updateID,
                        status: .pending,
                        retryAfter: RetryPolicy.unusableKeyPause,
                        resetAttempts: true,
                        on: connection
                    )
                }
            }
            return
        }
        do {
            try await self.database.withGuardedConnection { connection in
                var claim = claimed
                switch claim.event {
                case .start:
                    try await self.sendStarts(&claim, client: client, bundleID: bundleID, on: connection)
                case .update, .end:
                    if !claim.channelDone { try await self.broadcast(&claim, client: client, bundleID: bundleID, on: connection) }
                    try await self.sendToFollowers(&claim, client: client, bundleID: bundleID, on: connection)
                }
                try await self.release(claim.updateID, status: .sent, on: connection)
            }
        } catch let lost as LostClaim {
            self.logger.notice("stopped a fan-out another dispatcher took over", metadata: ["update": "\(lost.updateID)"])
        } catch is StopAtCheckpoint {
            try await self.database.withGuardedConnection { try await self.release(claimed.updateID, status: .pending, on: $0) }
        } catch is SendingHeld {
            // Back to the outbox at its checkpoint, with its tries counted afresh: it waits for the app to resume.
            try await self.database.withGuardedConnection {
                try await self.release(claimed.updateID, status: .pending, resetAttempts: true, on: $0)
            }
        } catch  where StoreError.isConnectionLoss(error) {
            // Its connection went away (PostgreSQL restarted, say): back to the outbox at its checkpoint as soon as
            // the database answers again, instead of when its lease runs out.
            await self.releaseAfterConnectionLoss(claimed.updateID)
            throw error
        }
    }

    /// Puts a fan-out whose connection went away back to the outbox at its checkpoint. The pool can hand out the
    /// lost connection again before it has seen it close, and PostgreSQL may still be restarting: a few tries, a
    /// little apart, then the claim is left to its lease.
    private func releaseAfterConnectionLoss(_ updateID: Int64) async {
        for pause in [Duration.milliseconds(50), .milliseconds(250), .seconds(1), .zero] {
            do {
                try await self.database.withGuardedConnection { try await self.release(updateID, status: .pending, on: $0) }
                return
            } catch  where StoreError.isConnectionLoss(error) && pause > .zero {
                try? await Task.sleep(for: pause)
            } catch {
                self.logger.warning(
                    "a fan-out cut off by a lost connection waits for its lease",
                    metadata: ["update": "\(updateID)", "error": "\(error)"]
                )
                return
            }
        }
    }

    /// One broadcast to the feed's live channel, recorded as a delivery; one APNs asks to retry later is owed to
    /// the channel. A retired channel is never sent to.
    private func broadcast(_ claim: inout FanOutClaim, client: APNsClient, bundleID: String, on connection: PostgresConnection) async throws {
        let busy = try await self.clearOlderOwed(.channel, ofFeed: claim.feedID, after: 0, upTo: claim.updateID, on: connection)
        let channels = try await connection.query(
            "SELECT id, channel_id, storage_policy::int FROM channels WHERE feed_id = \(claim.feedID) AND state = \(unescaped: ChannelState.active.sql)",
            logger: self.logger
        )
        var channel: (rowID: Int64, id: String, storagePolicy: Int)?
        for try await row in channels.decode((Int64, String, Int).self) { channel = row }
        guard let payload = claim.channelPayload, let channel else {
            try await self.checkpoint(&claim, cursor: claim.cursor, sent: 0, failed: 0, channelDone: true, on: connection)
            return
        }
        if let inFlight = busy[channel.rowID] {
            // An older broadcast to the channel is in flight: this one goes once that is answered.
            if inFlight < claim.updateID {
                try await self.owe([.deferred(.channel, channel.rowID)], updateID: claim.updateID, appID: claim.appID, on: connection)
            }
            try await self.checkpoint(&claim, cursor: claim.cursor, sent: 0, failed: 0, channelDone: true, on: connection)
        } else {
            let outcome = try await self.broadcast(
                payload,
                of: claim.updateID,
                to: channel,
                priority: claim.priority,
                client: client,
                bundleID: bundleID,
                on: connection
            )
            let owed = outcome.classification == .retryLater
            if owed {
                try await self.owe(
                    [OwedTarget(kind: .channel, id: channel.rowID, status: outcome.status, reason: outcome.failureReason)],
                    updateID: claim.updateID,
                    appID: claim.appID,
                    on: connection
                )
            }
            try await self.checkpoint(
                &claim,
                cursor: claim.cursor,
                sent: outcome.isSuccess ? 1 : 0,
                failed: outcome.isSuccess || owed ? 0 : 1,
                channelDone: true,
                on: connection
            )
        }
        if claim.event == .end {
            try await connection.query(
                """
                UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), last_timestamp = \(claim.timestamp), dismissal_date = \(claim.dismissalDate)
                WHERE feed_id = \(claim.feedID) AND channel_id IS NOT NULL AND state IN \(unescaped: ActivityState.runningSQL)
                """,
                logger: self.logger
            )
        }
    }

    /// Walks the token-based followers page by page: each page is read and sent under the feed's send lock (so a
    /// token rotation never crosses it), then checkpointed; an end also ends the page's activities.
    private func sendToFollowers(_ claim: inout FanOutClaim, client: APNsClient, bundleID: String, on connection: PostgresConnection) async throws {
        let (event, timestamp, dismissalDate) = (claim.event, claim.timestamp, claim.dismissalDate)
        let busy = try await self.clearOlderOwed(.activity, ofFeed: claim.feedID, after: claim.cursor, upTo: claim.updateID, on: connection)
        try await self.walkPages(&claim, tokens: .activityTokens, on: connection) { claim in
            try await self.withSendLocks(SendLocks.feedNamespace, [claim.feedID], on: connection) {
                var activityIDs: [Int64] = []
                var targets: [PageTarget] = []
                activityIDs.reserveCapacity(self.settings.pageSize)
                targets.reserveCapacity(self.settings.pageSize)
                let page = FollowerPage(feedID: claim.feedID, after: claim.cursor, limit: self.settings.pageSize)
                for try await (activityID, tokenID, token) in try await connection.execute(page, logger: self.logger) {
                    activityIDs.append(activityID)
                    targets.append(
                        PageTarget(
                            tokenID: tokenID,
                            token: token,
                            payload: claim.payload,
                            ownerID: activityID,
                            pushID: PushID(updateID: claim.updateID, targetKind: .activity, targetID: activityID)
                        )
                    )
                }
                let (ready, deferred) = self.makeWay(for: targets, kind: .activity, busy: busy, updateID: claim.updateID)
                var delivery = await self.deliver(ready, tokens: .activityTokens, client: client, bundleID: bundleID, priority: claim.priority)
                delivery.owed += deferred
                return SentPage(rowIDs: activityIDs, delivery: delivery)
            }
        } finish: { page in
            guard event == .end else { return }
            try await connection.query(
                """
                UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), last_timestamp = \(timestamp), dismissal_date = \(dismissalDate)
                WHERE id = ANY(\(page.rowIDs)) AND state IN \(unescaped: ActivityState.runningSQL)
                """,
                logger: self.logger
            )
        }
    }
}
