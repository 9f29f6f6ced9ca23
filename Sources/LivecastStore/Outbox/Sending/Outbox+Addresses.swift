package import PostgresNIO

/// A channel of the registry that is live, as a broadcast needs it.
package struct LiveChannel: Sendable {
    /// `channels.id`.
    package var rowID: Int64
    /// APNs' channel id.
    package var id: String
    /// 0 No Storage, 1 Most Recent Message.
    package var storagePolicy: Int
}

/// Where a standalone activity's update goes: its live update token, or its live channel.
package enum ActivityAddress: Sendable {
    case token(LiveToken)
    case channel(LiveChannel)
}

/// A live token a push is sent to: its row (`activity_tokens` or `push_to_start_tokens`) and its hex.
package struct LiveToken: Sendable {
    package var rowID: Int64
    package var token: String
    /// Whether a client key registered the token and APNs has yet to accept a push to it.
    package var isUnproven: Bool
}

extension Outbox {
    /// Where each of some standalone activities sends now (``ActivityAddressQuery``), by activity id; an activity
    /// with neither a live token nor a live channel is missing.
    package func addresses(of activityIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: ActivityAddress] {
        let rows = try await connection.query(ActivityAddressQuery.query(activityIDs), logger: self.logger)
        var addresses: [Int64: ActivityAddress] = [:]
        for try await (activityID, tokenID, token, isUnproven, channelRowID, channelID, storagePolicy) in rows.decode(
            (Int64, Int64?, String?, Bool?, Int64?, String?, Int?).self
        ) {
            if let tokenID, let token {
                addresses[activityID] = .token(LiveToken(rowID: tokenID, token: token, isUnproven: isUnproven ?? false))
            } else if let channelRowID, let channelID, let storagePolicy {
                addresses[activityID] = .channel(LiveChannel(rowID: channelRowID, id: channelID, storagePolicy: storagePolicy))
            }
        }
        return addresses
    }

    /// The live update tokens of these activities (none for a dismissed one), by activity id.
    package func liveTokens(ofActivities activityIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: LiveToken] {
        guard !activityIDs.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            SELECT a.id, t.id, t.token, t.unproven FROM activities a
            JOIN activity_tokens t ON t.activity_id = a.id AND t.invalidated_at IS NULL
            WHERE a.id = ANY(\(activityIDs)) AND a.state <> \(unescaped: ActivityState.dismissed.sql)
            """,
            logger: self.logger
        )
        var tokens: [Int64: LiveToken] = [:]
        for try await (activityID, tokenID, token, isUnproven) in rows.decode((Int64, Int64, String, Bool).self) {
            tokens[activityID] = LiveToken(rowID: tokenID, token: token, isUnproven: isUnproven)
        }
        return tokens
    }

    /// Those of these push-to-start tokens not invalidated, by row id.
    package func livePushToStartTokens(_ rowIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: LiveToken] {
        guard !rowIDs.isEmpty else { return [:] }
        let rows = try await connection.query(
            "SELECT id, token, unproven FROM push_to_start_tokens WHERE id = ANY(\(rowIDs)) AND invalidated_at IS NULL",
            logger: self.logger
        )
        var tokens: [Int64: LiveToken] = [:]
        for try await (rowID, token, isUnproven) in rows.decode((Int64, String, Bool).self) {
            tokens[rowID] = LiveToken(rowID: rowID, token: token, isUnproven: isUnproven)
        }
        return tokens
    }

    /// Those of these channels that are live, by row id.
    package func liveChannels(_ rowIDs: [Int64], on connection: PostgresConnection) async throws -> [Int64: LiveChannel] {
        guard !rowIDs.isEmpty else { return [:] }
        return try await self.liveChannels(
            "SELECT id, channel_id, storage_policy::int FROM channels WHERE id = ANY(\(rowIDs)) AND state = \(unescaped: ChannelState.active.sql)",
            on: connection
        )
    }

    /// The feed's live channel, if it has one.
    package func liveChannel(ofFeed feedID: Int64, on connection: PostgresConnection) async throws -> LiveChannel? {
        try await self.liveChannels(
            "SELECT id, channel_id, storage_policy::int FROM channels WHERE feed_id = \(feedID) AND state = \(unescaped: ChannelState.active.sql)",
            on: connection
        ).values.first
    }

    private func liveChannels(_ query: PostgresQuery, on connection: PostgresConnection) async throws -> [Int64: LiveChannel] {
        let rows = try await connection.query(query, logger: self.logger)
        var channels: [Int64: LiveChannel] = [:]
        for try await (rowID, channelID, storagePolicy) in rows.decode((Int64, String, Int).self) {
            channels[rowID] = LiveChannel(rowID: rowID, id: channelID, storagePolicy: storagePolicy)
        }
        return channels
    }
}
