import APNs
import Foundation
import LivecastCore
import LivecastStore
import PostgresNIO

/// Broadcasts updates on channels (`/4/broadcasts/apps`); each broadcast is recorded as a delivery.
struct Broadcaster: Sendable {
    let outbox: Outbox

    /// Broadcasts an update's payload on a channel, and says how to record it (``BroadcastDelivery``): a channel APNs
    /// no longer has (`ChannelNotRegistered`, `BadChannelId`) is to be marked missing in the registry.
    /// No Storage: expiration 0; Most Recent Message: kept at most 8 hours (docs/ARCHITECTURE.md, invariant 5).
    /// Its `apns-request-id` is the ``PushID`` of the update and the channel's row.
    func send(
        _ payload: [UInt8],
        of updateID: Int64,
        to channel: LiveChannel,
        priority: APNsPriority,
        app: AppClient
    ) async -> (outcome: APNsOutcome, delivery: BroadcastDelivery) {
        let expiration: APNsExpiration =
            channel.storagePolicy == APNsChannelStoragePolicy.noMessageStored.rawValue
            ? .immediately : .timeIntervalSince1970InSeconds(Int(Date().timeIntervalSince1970) + 8 * 3600)
        let pushID = PushID(updateID: updateID, targetKind: .channel, targetID: channel.rowID)
        let outcome = await app.client.broadcast(
            BroadcastPush(
                channelID: channel.id,
                bundleID: app.bundleID,
                payload: payload,
                priority: priority,
                expiration: expiration,
                requestID: pushID?.uuid
            )
        )
        DispatchMetrics.record([outcome], target: "channel")
        let delivery = BroadcastDelivery(
            updateID: updateID,
            channelID: channel.id,
            status: outcome.status,
            failureReason: outcome.isSuccess ? nil : outcome.failureReason,
            requestID: pushID?.uuidString ?? outcome.requestID.map { $0.uuidString.lowercased() },
            channelGone: outcome.reason == .channelNotRegistered || outcome.reason == .badChannelId
        )
        return (outcome, delivery)
    }

    /// Broadcasts a claimed push on a channel, as ``send(_:of:to:priority:app:)`` does, and records it
    /// (``Outbox/recordBroadcast(_:on:)``).
    func broadcast(_ push: some ClaimedPush, to channel: LiveChannel, app: AppClient, on connection: PostgresConnection) async throws -> APNsOutcome {
        let (outcome, delivery) = await self.send(
            push.payload,
            of: push.updateID,
            to: channel,
            priority: APNsPriority(stored: push.priority),
            app: app
        )
        try await self.outbox.recordBroadcast(delivery, on: connection)
        return outcome
    }
}
