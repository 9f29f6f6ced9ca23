import APNs
import LivecastCore
import LivecastStore
import Logging
import PostgresNIO

extension FanOutRunner {
    /// Walks a start's audience of push-to-start tokens page by page. Each device is admitted before its push
    /// (``Outbox/admitStarts(_:of:budget:on:)``): recorded in `feed_starts`, so a device is started at most once per
    /// feed even when a crash repeats a page, and within its push-to-start budget; a device without room waits in
    /// `queued_starts` for the quick lane. An iOS 18 device starts on the feed's channel (while the channel lives),
    /// any other with `input-push-token: 1`. A token that still owes an older start gets this one after it (owed,
    /// ``Outbox/tokensOwedOlderStarts(appID:before:on:)``), so its timestamps increase too.
    func sendStarts(_ claim: inout FanOutClaim, app: AppClient, on connection: PostgresConnection) async throws {
        let channelPayload = try await self.tools.outbox.liveChannel(ofFeed: claim.feedID, on: connection) != nil ? claim.channelPayload : nil
        let waiting = try await self.tools.outbox.tokensOwedOlderStarts(appID: claim.appID, before: claim.updateID, on: connection)
        try await self.walkPages(&claim, tokens: .pushToStartTokens, on: connection) { claim in
            let page = try await self.tools.outbox.audience(of: claim, limit: self.pageSize, on: connection)
            let admitted = try await self.tools.outbox.admitStarts(page.map(\.deviceID), of: claim, budget: self.startBudget, on: connection)
            DispatchMetrics.startsDeferred(admitted.values.count { $0 == .queued })
            let targets = page.filter { admitted[$0.deviceID] == .send }.map {
                PageTarget(
                    tokenID: $0.tokenRowID,
                    token: $0.token,
                    payload: $0.onIOS18 ? channelPayload ?? claim.payload : claim.payload,
                    ownerID: $0.tokenRowID,
                    pushID: PushID(updateID: claim.updateID, targetKind: .pushToStart, targetID: $0.tokenRowID),
                    collapseID: PushID.startCollapseID(feedID: claim.feedID),
                    usesChannelPayload: $0.onIOS18 && channelPayload != nil,
                    isUnproven: $0.isUnproven
                )
            }
            let (ready, deferred) = self.makeWay(for: targets, kind: .pushToStart, busy: waiting, updateID: claim.updateID)
            var delivery = await self.tools.sender.deliver(ready, tokens: .pushToStartTokens, app: app, priority: claim.priority)
            delivery.owed += deferred
            return SentPage(rowIDs: page.map(\.tokenRowID), delivery: delivery)
        }
    }
}
