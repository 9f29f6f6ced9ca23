import APNs
import Foundation
import LivecastCore
import LivecastStore

/// The push-to-start a queued start sends, rebuilt from its feed as it is now: the feed's attributes, its latest
/// content state, stale date and relevance, and an alert (a deferred start's is the feed's latest start's; a renewal's
/// is the feed's renewal alert, else that start's without its sound: a quiet one). A token follower's renewal, and a
/// deferred start to a device that cannot subscribe, ask for an update token (`input-push-token: 1`); on the feed's
/// channel, the new activity subscribes to it (`input-push-channel`, iOS 18). Its timestamp is the feed's, unless a
/// start to the device carried that one or a newer (``QueuedStartClaim/timestamp``).
struct QueuedStartPush: Sendable {
    /// How long APNs may keep trying a renewal to an unreachable device: short, since the renewal is due before the
    /// activity's end and a late one starts an activity the user no longer expects.
    static let renewalExpiry = 300

    let claim: QueuedStartClaim
    let token: QueuedStartClaim.Token
    let target: PageTarget

    /// - Throws: ``PayloadValidationError`` when the feed's content no longer makes a valid start (too large, say).
    init(_ claim: QueuedStartClaim, token: QueuedStartClaim.Token, now: Int) throws(PayloadValidationError) {
        let alert: LiveActivityAlert =
            switch claim.kind {
            case .deferred: claim.feed.startAlert ?? claim.feed.renewalAlert ?? LiveActivityAlert()
            case .renewal: claim.feed.renewalAlert ?? claim.feed.startAlert?.quiet ?? LiveActivityAlert()
            }
        // A feed never started nor updated has no content state: such a start fails validation, naming it.
        var payload = LiveActivityPayload(event: .start, timestamp: claim.timestamp, contentState: claim.feed.contentState)
        payload.attributesType = claim.feed.attributesType
        payload.attributes = claim.feed.attributes
        payload.alert = alert
        payload.staleDate = claim.feed.staleDate
        payload.relevanceScore = claim.feed.relevanceScore
        let onChannel =
            switch claim.kind {
            case .deferred: token.onIOS18
            case .renewal: claim.renewed?.onChannel ?? false
            }
        if onChannel, let channelID = claim.feed.channelID {
            payload.inputPushChannel = channelID
        } else {
            payload.inputPushToken = true
        }
        let pushID: PushID? =
            switch claim.kind {
            case .deferred: claim.updateID.flatMap { PushID(updateID: $0, targetKind: .pushToStart, targetID: token.rowID) }
            case .renewal: claim.renewed.flatMap { PushID(updateID: claim.feed.latestUpdateID ?? 0, targetKind: .renewal, targetID: $0.id) }
            }
        self.claim = claim
        self.token = token
        self.target = PageTarget(
            tokenID: token.rowID,
            token: token.token,
            payload: try payload.validated(for: .device),
            ownerID: claim.id,
            pushID: pushID,
            collapseID: Self.collapseID(claim),
            expiration: claim.kind == .renewal ? .timeIntervalSince1970InSeconds(now + Self.renewalExpiry) : .none,
            usesChannelPayload: payload.inputPushChannel != nil,
            isUnproven: token.isUnproven
        )
    }

    /// A deferred start's is the feed's start's (a device shows one activity of the feed); a renewal's names the
    /// activity it renews, so it never collapses into the start it replaces.
    private static func collapseID(_ claim: QueuedStartClaim) -> String {
        switch claim.kind {
        case .deferred: PushID.startCollapseID(feedID: claim.feed.id)
        case .renewal: PushID.renewalCollapseID(activityID: claim.renewed?.id ?? 0)
        }
    }
}
