import APNs
import LivecastCore
import LivecastStore
import Logging
import PostgresNIO

extension Dispatcher {
    /// Walks a start's audience of push-to-start tokens page by page. Each device is recorded in `feed_starts`
    /// before its push, so a device is started at most once per feed, even when a crash repeats a page. An iOS 18
    /// device starts on the feed's channel (while the channel lives), any other with `input-push-token: 1`. A token
    /// that still owes an older start gets this one after it (owed, ``tokensOwedOlderStarts(appID:before:on:)``), so
    /// its timestamps increase too.
    func sendStarts(_ claim: inout FanOutClaim, client: APNsClient, bundleID: String, on connection: PostgresConnection) async throws {
        let channelPayload = try await self.channelIsLive(claim.feedID, on: connection) ? claim.channelPayload : nil
        let waiting = try await self.tokensOwedOlderStarts(appID: claim.appID, before: claim.updateID, on: connection)
        try await self.walkPages(&claim, tokens: .pushToStartTokens, on: connection) { claim in
            let page = try await self.audiencePage(claim, on: connection)
            let fresh = page.isEmpty ? [] : try await self.recordStarts(page.map(\.deviceID), claim: claim, on: connection)
            let targets = page.filter { fresh.contains($0.deviceID) }.map {
                PageTarget(
                    tokenID: $0.tokenRowID,
                    token: $0.token,
                    payload: $0.onIOS18 ? channelPayload ?? claim.payload : claim.payload,
                    ownerID: $0.tokenRowID,
                    pushID: PushID(updateID: claim.updateID, targetKind: .pushToStart, targetID: $0.tokenRowID),
                    collapseID: PushID.startCollapseID(feedID: claim.feedID),
                    usesChannelPayload: $0.onIOS18 && channelPayload != nil
                )
            }
            let (ready, deferred) = self.makeWay(for: targets, kind: .pushToStart, busy: waiting, updateID: claim.updateID)
            var delivery = await self.deliver(ready, tokens: .pushToStartTokens, client: client, bundleID: bundleID, priority: claim.priority)
            delivery.owed += deferred
            return SentPage(rowIDs: page.map(\.tokenRowID), delivery: delivery)
        }
    }

    private struct AudienceMember {
        var tokenRowID: Int64
        var deviceID: String
        var token: String
        var onIOS18: Bool
    }

    /// The next page of the audience's live push-to-start tokens for the feed's attributes type, in keyset order.
    private func audiencePage(_ claim: FanOutClaim, on connection: PostgresConnection) async throws -> [AudienceMember] {
        let rows = try await connection.query(
            """
            SELECT id, device_id, token,
                CASE WHEN split_part(os_version, '.', 1) ~ '^[0-9]{1,4}$' THEN split_part(os_version, '.', 1)::int >= 18 ELSE false END
            FROM push_to_start_tokens
            WHERE app_id = \(claim.appID) AND attributes_type = \(claim.attributesType) AND invalidated_at IS NULL AND id > \(claim.cursor)
              AND (\(claim.audienceKind) = 'everyone'
                   OR (\(claim.audienceKind) = 'devices' AND device_id = ANY(\(claim.audience ?? [])))
                   OR (\(claim.audienceKind) = 'users' AND user_id = ANY(\(claim.audience ?? []))))
            ORDER BY id
            LIMIT \(self.settings.pageSize)
            """,
            logger: self.logger
        )
        var page: [AudienceMember] = []
        for try await (id, deviceID, token, onIOS18) in rows.decode((Int64, String, String, Bool).self) {
            page.append(AudienceMember(tokenRowID: id, deviceID: deviceID, token: token, onIOS18: onIOS18))
        }
        return page
    }

    /// Records the devices this start goes to. - Returns: those not started on the feed before.
    private func recordStarts(_ deviceIDs: [String], claim: FanOutClaim, on connection: PostgresConnection) async throws -> Set<String> {
        let rows = try await connection.query(
            """
            INSERT INTO feed_starts (feed_id, device_id, update_id)
            SELECT \(claim.feedID), device_id, \(claim.updateID) FROM unnest(\(deviceIDs)::text[]) AS device(device_id)
            ON CONFLICT (feed_id, device_id) DO NOTHING
            RETURNING device_id
            """,
            logger: self.logger
        )
        var fresh = Set<String>()
        for try await deviceID in rows.decode(String.self) { fresh.insert(deviceID) }
        return fresh
    }

    private func channelIsLive(_ feedID: Int64, on connection: PostgresConnection) async throws -> Bool {
        let rows = try await connection.query(
            "SELECT 1 FROM channels WHERE feed_id = \(feedID) AND state = \(unescaped: ChannelState.active.sql)",
            logger: self.logger
        )
        for try await _ in rows.decode(Int.self) { return true }
        return false
    }
}
