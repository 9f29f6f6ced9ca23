import APNs
import LivecastCore
import LivecastStore
import ServiceLifecycle

extension FanOutRunner {
    /// One broadcast to the feed's live channel, to be recorded as a delivery; one APNs asks to retry later is owed
    /// to the channel. While an older broadcast to the channel is in flight, nothing is sent: this one is owed behind
    /// it (unless the one in flight is this very update's, from a repeated claim).
    func broadcast(_ claim: FanOutClaim, to channel: LiveChannel, inFlight: Int64?, app: AppClient) async -> ChannelRecord {
        if let inFlight {
            return ChannelRecord(owed: inFlight < claim.updateID ? self.tools.recorder.owed([.deferred(.channel, channel.rowID)]) : [])
        }
        guard let payload = claim.channelPayload else { return ChannelRecord() }
        let (outcome, delivery) = await self.tools.broadcaster.send(
            payload,
            of: claim.updateID,
            to: channel,
            priority: APNsPriority(stored: claim.priority),
            app: app
        )
        let owed = outcome.classification == .retryLater
        return ChannelRecord(
            broadcast: delivery,
            owed: owed
                ? self.tools.recorder.owed([OwedTarget(kind: .channel, id: channel.rowID, status: outcome.status, reason: outcome.failureReason)])
                : [],
            sent: outcome.isSuccess ? 1 : 0,
            failed: outcome.isSuccess || owed ? 0 : 1
        )
    }

    /// Sends a page handed out by the session, and records it: the followers of an update or end (read under the
    /// feed's send lock, which the record releases), or a start's admitted audience. A target with an older push in
    /// flight is owed behind it, not sent (``makeWay(for:kind:busy:updateID:)``). Asks for the next page unless the
    /// page was short, the invalidation guard tripped, or the service is shutting down.
    /// - Throws: ``SendingHeld`` after the checkpoint when the guard tripped; ``StopAtCheckpoint`` after it on graceful
    ///   shutdown.
    func send(_ page: FanOutPage, in session: any FanOutSession, app: AppClient) async throws -> FanOutStep {
        let claim = session.claim
        let targets: [PageTarget]
        let tokens: TokenTable
        switch page {
        case .followers(let followers):
            tokens = .activityTokens
            targets = followers.map {
                PageTarget(
                    tokenID: $0.tokenID,
                    token: $0.token,
                    payload: claim.payload,
                    ownerID: $0.activityID,
                    pushID: PushID(updateID: claim.updateID, targetKind: .activity, targetID: $0.activityID),
                    isUnproven: $0.isUnproven
                )
            }
        case .audience(let members, let admitted):
            tokens = .pushToStartTokens
            DispatchMetrics.startsDeferred(admitted.values.count { $0 == .queued })
            targets = self.startTargets(members.filter { admitted[$0.deviceID] == .send }, of: claim, onChannel: session.channelIsLive)
        }
        let (ready, deferred) = self.makeWay(for: targets, kind: tokens.owedKind, busy: session.busy, updateID: claim.updateID)
        var delivery = await self.tools.sender.deliver(ready, tokens: tokens, app: app, priority: APNsPriority(stored: claim.priority))
        delivery.owed += deferred
        let rows = page.rowIDs.count
        let next = rows == self.limits.pageSize && delivery.guardReason == nil && !Task.isShuttingDownGracefully
        let record = delivery.record(of: claim.updateID, recorder: self.tools.recorder)
        let (step, recorded) = try await session.record(record, next: next)
        self.tools.recorder.report(record, recorded, appID: claim.appID, tokens: tokens)
        DispatchMetrics.fanOutProgress(rows)
        if delivery.guardReason != nil { throw SendingHeld() }
        if rows == self.limits.pageSize, !next { throw StopAtCheckpoint() }
        return step
    }
}
