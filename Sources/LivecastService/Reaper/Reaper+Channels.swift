import LivecastCore
import LivecastStore
import PostgresNIO

extension Reaper {
    /// The live channels of feeds that ended longer ago than the retirement delay and whose end has been sent.
    func channelsToRetire(_ app: App, now: Int) -> PostgresQuery {
        """
        SELECT c.channel_id FROM channels c JOIN feeds f ON f.id = c.feed_id
        WHERE c.app_id = \(app.id) AND c.state = \(unescaped: ChannelState.active.sql) AND f.state = \(unescaped: FeedState.ended.sql)
          AND f.ended_at < to_timestamp(\(Double(now) - self.policy.channelRetirementDelay.inSeconds))
          AND NOT EXISTS (SELECT 1 FROM updates u WHERE u.feed_id = f.id AND u.status IN \(unescaped: OutboxStatus.unfinishedSQL))
        ORDER BY c.id
        """
    }

    /// Deletes the channels of ended feeds at APNs and keeps them in the registry as retired
    /// (``ChannelRegistry/retire(appID:bundleID:channelID:force:)``).
    /// - Returns: How many were retired, and a message per channel APNs refused to delete (tried again next pass).
    func retireChannels(_ app: App, now: Int) async throws -> (retired: Int, failures: [String]) {
        var channelIDs: [String] = []
        for try await id in try await self.database.guardedQuery(self.channelsToRetire(app, now: now), logger: self.logger).decode(String.self) {
            channelIDs.append(id)
        }
        guard !channelIDs.isEmpty else { return (0, []) }
        let (apns, bundleID) = try await self.clientForApp(app.id)
        let registry = ChannelRegistry(channels: Channels(client: self.database, logger: self.logger), apns: apns, logger: self.logger)
        var retired = 0
        var failures: [String] = []
        for channelID in channelIDs {
            do {
                _ = try await registry.retire(appID: app.id, bundleID: bundleID, channelID: channelID, force: true)
                retired += 1
            } catch let error as StoreError {
                failures.append("retiring channel \(channelID): \(error.message)")
            } catch let refusal as APNsRefusal {
                failures.append("retiring channel \(channelID): \(refusal.message)")
            }
        }
        return (retired, failures)
    }
}
