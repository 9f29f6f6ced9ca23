package import Foundation
import PostgresNIO

/// What comparing the registry with APNs' own list reads and changes (`LivecastService`'s `ChannelReconciler`).
extension Channels {
    /// A channel as reconciliation compares it with APNs'.
    package struct Recorded: Sendable, Hashable {
        package var state: ChannelState
        /// The feed it belongs to, if any.
        package var feedKey: String?
        package var createdAt: Date
    }

    /// The app's channels by id, every state; only the one named when `channelID` is given.
    package func recorded(appID: Int64, channelID: String? = nil) async throws -> [String: Recorded] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT c.channel_id, c.state, f.feed_key, c.created_at FROM channels c LEFT JOIN feeds f ON f.id = c.feed_id
            WHERE c.app_id = \(appID) AND (\(channelID)::text IS NULL OR c.channel_id = \(channelID))
            """,
            logger: self.logger
        )
        var recorded: [String: Recorded] = [:]
        for try await (id, state, feedKey, createdAt) in rows.decode((String, ChannelState, String?, Date).self) {
            recorded[id] = Recorded(state: state, feedKey: feedKey, createdAt: createdAt)
        }
        return recorded
    }

    /// Moves a channel from one state to another (a retired one gets its time); one in another state is left alone.
    package func mark(appID: Int64, channelID: String, from: ChannelState, to: ChannelState) async throws {
        try await self.client.guardedQuery(
            """
            UPDATE channels SET state = \(to), retired_at = CASE WHEN \(to == .retired) THEN now() ELSE retired_at END
            WHERE app_id = \(appID) AND channel_id = \(channelID) AND state = \(from)
            """,
            logger: self.logger
        )
    }

    /// Whether the app has ever had a channel recorded: whether it is worth asking APNs about.
    package func anyRecorded(appID: Int64) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            "SELECT count(*)::int FROM (SELECT 1 FROM channels WHERE app_id = \(appID) LIMIT 1) AS candidates",
            logger: self.logger
        )
        for try await count in rows.decode(Int.self) { return count > 0 }
        return false
    }

    /// Every app's channels that count against APNs' cap (every state but retired), by `bundle id (environment)`;
    /// an app with none counts 0.
    package func liveCountsByApp() async throws -> [(app: String, count: Int)] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT a.bundle_id || ' (' || a.environment || ')', count(c.id)::int
            FROM apps a LEFT JOIN channels c ON c.app_id = a.id AND c.state <> \(unescaped: ChannelState.retired.sql)
            GROUP BY a.bundle_id, a.environment
            """,
            logger: self.logger
        )
        var counts: [(app: String, count: Int)] = []
        for try await (app, count) in rows.decode((String, Int).self) {
            counts.append((app, count))
        }
        return counts
    }
}
