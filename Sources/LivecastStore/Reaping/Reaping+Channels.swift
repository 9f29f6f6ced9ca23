import LivecastCore
import PostgresNIO

extension Reaping {
    /// The app's active channels of feeds that ended before `endedBefore` (UNIX seconds) and whose end has been sent,
    /// in the order they were recorded.
    package func channelsToRetire(_ appID: Int64, endedBefore: Double) async throws -> [String] {
        var channelIDs: [String] = []
        for try await id in try await self.client.guardedQuery(self.channelsToRetireQuery(appID, endedBefore: endedBefore), logger: self.logger)
            .decode(
                String.self
            )
        {
            channelIDs.append(id)
        }
        return channelIDs
    }

    /// How many channels ``channelsToRetire(_:endedBefore:)`` would list.
    package func channelsToRetireCount(_ appID: Int64, endedBefore: Double) async throws -> Int {
        try await self.count(self.channelsToRetireQuery(appID, endedBefore: endedBefore))
    }

    private func channelsToRetireQuery(_ appID: Int64, endedBefore: Double) -> PostgresQuery {
        """
        SELECT c.channel_id FROM channels c JOIN feeds f ON f.id = c.feed_id
        WHERE c.app_id = \(appID) AND c.state = \(unescaped: ChannelState.active.sql) AND f.state = \(unescaped: FeedState.ended.sql)
          AND f.ended_at < to_timestamp(\(endedBefore))
          AND NOT EXISTS (SELECT 1 FROM updates u WHERE u.feed_id = f.id AND u.status IN \(unescaped: OutboxStatus.unfinishedSQL))
        ORDER BY c.id
        """
    }
}
