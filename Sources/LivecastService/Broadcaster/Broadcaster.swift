import APNs
import Foundation
import LivecastCore
import LivecastStore
import PostgresNIO

/// Broadcasts updates on channels (`/4/broadcasts/apps`) and records each broadcast as a delivery.
struct Broadcaster: Sendable {
    let outbox: Outbox

    /// Broadcasts an update's payload on a channel, and records it (``Outbox/recordBroadcast(updateID:channelID:status:failureReason:requestID:channelGone:on:)``):
    /// a channel APNs no longer has (`ChannelNotRegistered`, `BadChannelId`) is marked missing in the registry.
    /// No Storage: expiration 0; Most Recent Message: kept at most 8 hours (docs/ARCHITECTURE.md, invariant 5).
    /// Its `apns-request-id` is the ``PushID`` of the update and the channel's row.
    func broadcast(
        _ payload: [UInt8],
        of updateID: Int64,
        to channel: LiveChannel,
        priority: Int,
        app: AppClient,
        on connection: PostgresConnection
    ) async throws -> APNsOutcome {
        let expiration = channel.storagePolicy == 0 ? 0 : Int(Date().timeIntervalSince1970) + 8 * 3600
        let requestID = PushID(updateID: updateID, targetKind: .channel, targetID: channel.rowID)?.uuidString
        let outcome = await app.client.broadcast(
            BroadcastPush(
                channelID: channel.id,
                bundleID: app.bundleID,
                payload: payload,
                priority: priority,
                expiration: expiration,
                requestID: requestID
            )
        )
        DispatchMetrics.record([outcome], target: "channel")
        try await self.outbox.recordBroadcast(
            updateID: updateID,
            channelID: channel.id,
            status: outcome.status,
            failureReason: outcome.isSuccess ? nil : outcome.failureReason,
            requestID: requestID ?? outcome.requestID,
            channelGone: outcome.reason == .channelNotRegistered || outcome.reason == .badChannelId,
            on: connection
        )
        return outcome
    }

    /// Broadcasts a claimed push on a channel, as ``broadcast(_:of:to:priority:app:on:)`` does.
    func broadcast(_ push: some ClaimedPush, to channel: LiveChannel, app: AppClient, on connection: PostgresConnection) async throws -> APNsOutcome {
        try await self.broadcast(push.payload, of: push.updateID, to: channel, priority: push.priority, app: app, on: connection)
    }
}
