import APNs
import LivecastCore
import LivecastStore
import PostgresNIO

extension FanOutRunner {
    /// One broadcast to the feed's live channel, recorded as a delivery; one APNs asks to retry later is owed to
    /// the channel. A retired channel is never sent to.
    func broadcast(_ claim: inout FanOutClaim, app: AppClient, on connection: PostgresConnection) async throws {
        let busy = try await self.tools.outbox.clearOlderOwed(
            .channel,
            ofFeed: claim.feedID,
            after: 0,
            through: .max,
            upTo: claim.updateID,
            on: connection
        )
        let channel = try await self.tools.outbox.liveChannel(ofFeed: claim.feedID, on: connection)
        guard let payload = claim.channelPayload, let channel else {
            try await self.tools.outbox.checkpoint(&claim, cursor: claim.cursor, sent: 0, failed: 0, channelDone: true, on: connection)
            return
        }
        if let inFlight = busy[channel.rowID] {
            // An older broadcast to the channel is in flight: this one goes once that is answered.
            if inFlight < claim.updateID {
                try await self.tools.recorder.owe([.deferred(.channel, channel.rowID)], updateID: claim.updateID, appID: claim.appID, on: connection)
            }
            try await self.tools.outbox.checkpoint(&claim, cursor: claim.cursor, sent: 0, failed: 0, channelDone: true, on: connection)
        } else {
            let outcome = try await self.tools.broadcaster.broadcast(
                payload,
                of: claim.updateID,
                to: channel,
                priority: claim.priority,
                app: app,
                on: connection
            )
            let owed = outcome.classification == .retryLater
            if owed {
                try await self.tools.recorder.owe(
                    [OwedTarget(kind: .channel, id: channel.rowID, status: outcome.status, reason: outcome.failureReason)],
                    updateID: claim.updateID,
                    appID: claim.appID,
                    on: connection
                )
            }
            try await self.tools.outbox.checkpoint(
                &claim,
                cursor: claim.cursor,
                sent: outcome.isSuccess ? 1 : 0,
                failed: outcome.isSuccess || owed ? 0 : 1,
                channelDone: true,
                on: connection
            )
        }
        if claim.event == .end { try await self.tools.outbox.endChannelFollowers(of: claim, on: connection) }
    }

    /// Walks the token-based followers page by page, up to the claim's slice's end if it is a slice: each page is
    /// read and sent under the feed's send lock (so a token rotation never crosses it), then checkpointed; an end
    /// also ends the page's activities.
    func sendToFollowers(_ claim: inout FanOutClaim, app: AppClient, on connection: PostgresConnection) async throws {
        let (event, timestamp, dismissalDate) = (claim.event, claim.timestamp, claim.dismissalDate)
        let busy = try await self.tools.outbox.clearOlderOwed(
            .activity,
            ofFeed: claim.feedID,
            after: claim.cursor,
            through: claim.upperBound,
            upTo: claim.updateID,
            on: connection
        )
        try await self.walkPages(&claim, tokens: .activityTokens, on: connection) { claim in
            try await self.tools.outbox.withSendLocks(SendLocks.feedNamespace, [claim.feedID], on: connection) {
                let followers = try await self.tools.outbox.followers(
                    ofFeed: claim.feedID,
                    after: claim.cursor,
                    through: claim.upperBound,
                    limit: self.pageSize,
                    on: connection
                )
                let targets = followers.map {
                    PageTarget(
                        tokenID: $0.tokenID,
                        token: $0.token,
                        payload: claim.payload,
                        ownerID: $0.activityID,
                        pushID: PushID(updateID: claim.updateID, targetKind: .activity, targetID: $0.activityID),
                        isUnproven: $0.isUnproven
                    )
                }
                let (ready, deferred) = self.makeWay(for: targets, kind: .activity, busy: busy, updateID: claim.updateID)
                var delivery = await self.tools.sender.deliver(ready, tokens: .activityTokens, app: app, priority: claim.priority)
                delivery.owed += deferred
                return SentPage(rowIDs: followers.map(\.activityID), delivery: delivery)
            }
        } finish: { page in
            guard event == .end else { return }
            try await self.tools.outbox.endActivities(page.rowIDs, timestamp: timestamp, dismissalDate: dismissalDate, on: connection)
        }
    }
}
