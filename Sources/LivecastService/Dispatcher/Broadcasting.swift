import APNs
import Foundation
import LivecastCore
import LivecastStore
import PostgresNIO

extension Dispatcher {
    /// Broadcasts an update's payload on a channel, and records it (``recordBroadcast(_:updateID:channelID:on:)``).
    /// No Storage: expiration 0; Most Recent Message: kept at most 8 hours (docs/ARCHITECTURE.md, invariant 5).
    /// Its `apns-request-id` is the ``PushID`` of the update and the channel's row.
    func broadcast(
        _ payload: [UInt8],
        of updateID: Int64,
        to channel: (rowID: Int64, id: String, storagePolicy: Int),
        priority: Int,
        client: APNsClient,
        bundleID: String,
        on connection: PostgresConnection
    ) async throws -> APNsOutcome {
        let expiration = channel.storagePolicy == 0 ? 0 : Int(Date().timeIntervalSince1970) + 8 * 3600
        let requestID = PushID(updateID: updateID, targetKind: .channel, targetID: channel.rowID)?.uuidString
        let outcome = await client.broadcast(
            BroadcastPush(
                channelID: channel.id,
                bundleID: bundleID,
                payload: payload,
                priority: priority,
                expiration: expiration,
                requestID: requestID
            )
        )
        DispatchMetrics.record([outcome], target: "channel")
        try await self.recordBroadcast(outcome, updateID: updateID, channelID: channel.id, requestID: requestID ?? outcome.requestID, on: connection)
        return outcome
    }

    /// Records a broadcast as a delivery (each is kept, successes too, under its request id), and marks a channel
    /// APNs no longer has (`ChannelNotRegistered`, `BadChannelId`) missing in the registry.
    private func recordBroadcast(
        _ outcome: APNsOutcome,
        updateID: Int64,
        channelID: String,
        requestID: String?,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
            VALUES (\(updateID), 'channel', \(channelID), \(outcome.status), \(outcome.isSuccess ? nil : outcome.failureReason), \(requestID))
            """,
            logger: self.logger
        )
        if outcome.reason == .channelNotRegistered || outcome.reason == .badChannelId {
            try await connection.query(
                "UPDATE channels SET state = \(unescaped: ChannelState.missing.sql) WHERE channel_id = \(channelID) AND state = \(unescaped: ChannelState.active.sql)",
                logger: self.logger
            )
        }
    }
}
