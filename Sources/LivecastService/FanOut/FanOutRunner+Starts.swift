import LivecastCore
import LivecastStore

extension FanOutRunner {
    /// The pushes of a start's admitted audience. Each device was admitted before its push
    /// (``Outbox/admitStarts(_:of:budget:on:)``): recorded in `feed_starts`, so a device is started at most once per
    /// feed even when a crash repeats a page, and within its push-to-start budget; a device without room waits in
    /// `queued_starts` for the quick lane. An iOS 18 device starts on the feed's channel (while the channel lives),
    /// any other with `input-push-token: 1`. A token that still owes an older start gets this one after it (owed,
    /// ``Outbox/tokensOwedOlderStarts(appID:before:on:)``), so its timestamps increase too.
    func startTargets(_ members: [AudienceMember], of claim: FanOutClaim, onChannel channelIsLive: Bool) -> [PageTarget] {
        let channelPayload = channelIsLive ? claim.channelPayload : nil
        return members.map {
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
    }
}
