import APNs
import Foundation
import Logging
import PostgresNIO

/// Broadcast channels, kept in step with APNs: created there first, then recorded; retired there, then marked.
/// A channel APNs created is never forgotten: if recording it fails, it is recorded as an orphan to reconcile.
public struct ChannelRegistry: Sendable {
    /// A channel as the registry holds it.
    public struct Channel: Sendable, Hashable {
        /// APNs' base64 id.
        public var channelID: String
        /// `0` No Message Stored, `1` Most Recent Message Stored.
        public var storagePolicy: Int
        /// The feed it belongs to, if any.
        public var feedKey: String?
        /// `active`, `orphan`, `retired` or `missing`.
        public var state: String
        /// Running activities subscribed to it.
        public var followers: Int
    }

    /// APNs' cap on channels per app and environment.
    public static let apnsLimit = 10_000

    private let client: PostgresClient
    private let apns: APNsClient
    private let limit: Int
    private let logger: Logger

    /// - Parameters:
    ///   - client: The database.
    ///   - apns: The APNs client of the app's team and environment.
    ///   - limit: Channels one app may have before creation is refused here, ahead of APNs. Defaults to 10,000.
    ///   - logger: Logs channels that could only be recorded as orphans.
    public init(client: PostgresClient, apns: APNsClient, limit: Int = ChannelRegistry.apnsLimit, logger: Logger) {
        self.client = client
        self.apns = apns
        self.limit = limit
        self.logger = logger
    }

    /// Creates a channel at APNs and records it, attached to a feed if one is named.
    /// - Throws: ``StoreError``: `invalid` policy, `notFound` feed, `conflict` when the feed already has a channel,
    ///   `limitReached` at the cap (checked before APNs is asked), `apnsRefused` when APNs says no.
    public func create(appID: Int64, bundleID: String, storagePolicy: Int, feedKey: String?) async throws -> Channel {
        guard storagePolicy == 0 || storagePolicy == 1 else {
            throw StoreError(.invalid, "storage policy must be 0 (No Storage) or 1 (Most Recent Message)", field: "storagePolicy")
        }
        let live = try await self.count("SELECT count(*)::int FROM channels WHERE app_id = \(appID) AND state <> 'retired'")
        guard live < self.limit else {
            throw StoreError(.limitReached, "the app has \(live) channels; APNs allows \(self.limit)")
        }
        var feedID: Int64?
        if let feedKey {
            let rows = try await self.client.query(
                "SELECT id, (SELECT count(*)::int FROM channels c WHERE c.feed_id = f.id AND c.state = 'active') FROM feeds f WHERE app_id = \(appID) AND feed_key = \(feedKey)",
                logger: self.logger
            )
            for try await (id, channels) in rows.decode((Int64, Int).self) {
                guard channels == 0 else { throw StoreError(.conflict, "the feed already has a channel", field: "feed") }
                feedID = id
            }
            guard feedID != nil else { throw StoreError(.notFound, "no feed \(feedKey)", field: "feed") }
        }
        let outcome = await self.apns.createChannel(bundleID: bundleID, storagePolicy: storagePolicy)
        guard outcome.status == 201, let channelID = outcome.channelID else {
            throw StoreError(.apnsRefused, "APNs did not create the channel: \(outcome)")
        }
        do {
            try await self.client.query(
                "INSERT INTO channels (app_id, channel_id, storage_policy, feed_id) VALUES (\(appID), \(channelID), \(storagePolicy), \(feedID))",
                logger: self.logger
            )
            return Channel(channelID: channelID, storagePolicy: storagePolicy, feedKey: feedKey, state: "active", followers: 0)
        } catch {
            // APNs has the channel: record it as an orphan so reconciliation finds it, never forget it.
            self.logger.error(
                "Channel created at APNs but not recorded for its feed; recording it as an orphan",
                metadata: ["apns.channel_id": "\(channelID)", "error": "\(String(reflecting: error))"]
            )
            try await self.client.query(
                "INSERT INTO channels (app_id, channel_id, storage_policy, state) VALUES (\(appID), \(channelID), \(storagePolicy), 'orphan')",
                logger: self.logger
            )
            throw StoreError(.conflict, "the channel \(channelID) was created at APNs but could not be attached to the feed; it is recorded as an orphan")
        }
    }

    /// One channel of the app, or `nil`.
    public func get(appID: Int64, channelID: String) async throws -> Channel? {
        try await self.channels(appID: appID, channelID: channelID).first
    }

    /// The app's channels as Livecast records them, retired ones included.
    public func list(appID: Int64) async throws -> [Channel] {
        try await self.channels(appID: appID, channelID: nil)
    }

    /// The app's channels as APNs lists them.
    /// - Throws: ``StoreError`` `apnsRefused` when APNs does not answer 200.
    public func listAtAPNs(bundleID: String) async throws -> [String] {
        let (channels, outcome) = await self.apns.listChannels(bundleID: bundleID)
        guard outcome.isSuccess else { throw StoreError(.apnsRefused, "APNs did not list the channels: \(outcome)") }
        return channels
    }

    /// Retires a channel: deletes it at APNs, then marks it retired; it is never sent to again. Retiring a retired
    /// channel changes nothing.
    /// - Parameter force: Retire even while activities follow it.
    /// - Throws: ``StoreError``: `notFound`; `conflict` while followed and not forced; `apnsRefused` when APNs
    ///   refuses the deletion (a channel APNs no longer has counts as deleted).
    public func retire(appID: Int64, bundleID: String, channelID: String, force: Bool) async throws -> Channel {
        guard var channel = try await self.get(appID: appID, channelID: channelID) else {
            throw StoreError(.notFound, "no channel \(channelID)", field: "channelId")
        }
        if channel.state == "retired" { return channel }
        guard force || channel.followers == 0 else {
            throw StoreError(.conflict, "\(channel.followers) running activities follow the channel; retire with force to stop them", field: "channelId")
        }
        let outcome = await self.apns.deleteChannel(bundleID: bundleID, channelID: channelID)
        guard outcome.status == 204 || outcome.reason == .channelNotRegistered else {
            throw StoreError(.apnsRefused, "APNs did not delete the channel: \(outcome)")
        }
        try await self.client.query(
            "UPDATE channels SET state = 'retired', retired_at = now() WHERE app_id = \(appID) AND channel_id = \(channelID)",
            logger: self.logger
        )
        channel.state = "retired"
        return channel
    }

    private func channels(appID: Int64, channelID: String?) async throws -> [Channel] {
        let rows = try await self.client.query(
            """
            SELECT c.channel_id, c.storage_policy::int, f.feed_key, c.state,
                (SELECT count(*)::int FROM activities a WHERE a.channel_id = c.id AND a.state IN ('starting', 'active'))
            FROM channels c LEFT JOIN feeds f ON f.id = c.feed_id
            WHERE c.app_id = \(appID) AND (\(channelID)::text IS NULL OR c.channel_id = \(channelID))
            ORDER BY c.id
            """,
            logger: self.logger
        )
        var channels: [Channel] = []
        for try await (id, policy, feedKey, state, followers) in rows.decode((String, Int, String?, String, Int).self) {
            channels.append(Channel(channelID: id, storagePolicy: policy, feedKey: feedKey, state: state, followers: followers))
        }
        return channels
    }

    private func count(_ query: PostgresQuery) async throws -> Int {
        let rows = try await self.client.query(query, logger: self.logger)
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
