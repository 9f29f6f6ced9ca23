import Logging
import PostgresNIO

/// The registry of broadcast channels as PostgreSQL holds it: which channels an app has, for which feed, in which
/// state. Talking to APNs is not its business: `LivecastService`'s `ChannelRegistry` creates and deletes channels
/// there and records the outcome here.
package struct Channels: DatabaseBacked {
    /// A channel as the registry holds it.
    package struct Channel: Sendable, Hashable {
        /// APNs' base64 id.
        package var channelID: String
        /// `0` No Message Stored, `1` Most Recent Message Stored.
        package var storagePolicy: Int
        /// The feed it belongs to, if any.
        package var feedKey: String?
        package var state: ChannelState
        /// Running activities subscribed to it.
        package var followers: Int

        package init(channelID: String, storagePolicy: Int, feedKey: String?, state: ChannelState, followers: Int) {
            self.channelID = channelID
            self.storagePolicy = storagePolicy
            self.feedKey = feedKey
            self.state = state
            self.followers = followers
        }
    }

    /// APNs' cap on channels per app and environment.
    package static let apnsLimit = 10_000

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Channels of the app that are not retired: what counts against APNs' cap.
    package func liveCount(appID: Int64) async throws -> Int {
        let rows = try await self.client.guardedQuery(
            "SELECT count(*)::int FROM channels WHERE app_id = \(appID) AND state <> \(unescaped: ChannelState.retired.sql)",
            logger: self.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    /// The id of a feed that may be given a new channel.
    /// - Throws: ``StoreError``: `notFound` feed; `conflict` when the feed already has an active channel.
    package func feedAwaitingChannel(appID: Int64, feedKey: String) async throws -> Int64 {
        let rows = try await self.client.guardedQuery(
            """
            SELECT id, (SELECT count(*)::int FROM channels c WHERE c.feed_id = f.id AND c.state = \(unescaped: ChannelState.active.sql))
            FROM feeds f WHERE app_id = \(appID) AND feed_key = \(feedKey)
            """,
            logger: self.logger
        )
        for try await (id, channels) in rows.decode((Int64, Int).self) {
            guard channels == 0 else { throw StoreError(.conflict, "the feed already has a channel", field: "feed") }
            return id
        }
        throw StoreError(.notFound, "no feed \(feedKey)", field: "feed")
    }

    /// Records a channel APNs has created, active and attached to a feed if one is given.
    package func recordActive(appID: Int64, channelID: String, storagePolicy: Int, feedID: Int64?) async throws {
        try await self.client.guardedQuery(
            """
            INSERT INTO channels (app_id, channel_id, storage_policy, feed_id)
            VALUES (\(appID), \(channelID), \(storagePolicy), \(feedID))
            """,
            logger: self.logger
        )
    }

    /// Records a channel APNs has created but that could not be attached to its feed, for reconciliation to find.
    package func recordOrphan(appID: Int64, channelID: String, storagePolicy: Int) async throws {
        try await self.client.guardedQuery(
            """
            INSERT INTO channels (app_id, channel_id, storage_policy, state)
            VALUES (\(appID), \(channelID), \(storagePolicy), \(unescaped: ChannelState.orphan.sql))
            """,
            logger: self.logger
        )
    }

    /// Marks a channel retired: it is never sent to again.
    package func markRetired(appID: Int64, channelID: String) async throws {
        try await self.client.guardedQuery(
            "UPDATE channels SET state = \(unescaped: ChannelState.retired.sql), retired_at = now() WHERE app_id = \(appID) AND channel_id = \(channelID)",
            logger: self.logger
        )
    }

    /// One channel of the app, or `nil`.
    package func get(appID: Int64, channelID: String) async throws -> Channel? {
        try await self.channels(appID: appID, channelID: channelID).first
    }

    /// The app's channels, retired ones included, oldest first.
    package func list(appID: Int64) async throws -> [Channel] {
        try await self.channels(appID: appID, channelID: nil)
    }

    private func channels(appID: Int64, channelID: String?) async throws -> [Channel] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT c.channel_id, c.storage_policy::int, f.feed_key, c.state,
                (SELECT count(*)::int FROM activities a WHERE a.channel_id = c.id AND a.state IN \(unescaped: ActivityState.runningSQL))
            FROM channels c LEFT JOIN feeds f ON f.id = c.feed_id
            WHERE c.app_id = \(appID) AND (\(channelID)::text IS NULL OR c.channel_id = \(channelID))
            ORDER BY c.id
            """,
            logger: self.logger
        )
        var channels: [Channel] = []
        for try await (id, policy, feedKey, state, followers) in rows.decode((String, Int, String?, ChannelState, Int).self) {
            channels.append(Channel(channelID: id, storagePolicy: policy, feedKey: feedKey, state: state, followers: followers))
        }
        return channels
    }
}
