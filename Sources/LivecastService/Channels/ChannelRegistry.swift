package import APNs
package import LivecastStore
package import Logging

/// Broadcast channels, kept in step with APNs: created there first, then recorded; retired there, then marked.
/// A channel APNs created is never forgotten: if recording it fails, it is recorded as an orphan to reconcile.
package struct ChannelRegistry: Sendable {
    private let channels: Channels
    private let apns: APNsClient
    private let limit: Int
    private let logger: Logger

    /// - Parameters:
    ///   - channels: The registry in the database.
    ///   - apns: The APNs client of the app's team and environment.
    ///   - limit: Channels one app may have before creation is refused here, ahead of APNs. Defaults to 10,000.
    ///   - logger: Logs channels that could only be recorded as orphans.
    package init(channels: Channels, apns: APNsClient, limit: Int = Channels.apnsLimit, logger: Logger) {
        self.channels = channels
        self.apns = apns
        self.limit = limit
        self.logger = logger
    }

    /// Creates a channel at APNs and records it, attached to a feed if one is named.
    /// - Throws: ``StoreError``: `invalid` policy, `notFound` feed, `conflict` when the feed already has a channel,
    ///   `limitReached` at the cap (checked before APNs is asked); ``APNsRefusal`` when APNs says no.
    package func create(appID: Int64, bundleID: String, storagePolicy: Int, feedKey: String?) async throws -> Channels.Channel {
        guard let policy = APNsChannelStoragePolicy(rawValue: storagePolicy) else {
            throw StoreError(.invalid, "storage policy must be 0 (No Storage) or 1 (Most Recent Message)", field: "storagePolicy")
        }
        let live = try await self.channels.liveCount(appID: appID)
        guard live < self.limit else {
            throw StoreError(.limitReached, "the app has \(live) channels; APNs allows \(self.limit)")
        }
        var feedID: Int64?
        if let feedKey { feedID = try await self.channels.feedAwaitingChannel(appID: appID, feedKey: feedKey) }
        let outcome = await self.apns.createChannel(bundleID: bundleID, storagePolicy: policy)
        guard outcome.status == 201, let channelID = outcome.channelID else {
            throw APNsRefusal("APNs did not create the channel: \(outcome)")
        }
        do {
            try await self.channels.recordActive(appID: appID, channelID: channelID, storagePolicy: storagePolicy, feedID: feedID)
            return Channels.Channel(
                channelID: channelID,
                storagePolicy: storagePolicy,
                feedKey: feedKey,
                state: .active,
                followers: 0
            )
        } catch {
            // APNs has the channel: record it as an orphan so reconciliation finds it, never forget it.
            self.logger.error(
                "Channel created at APNs but not recorded for its feed; recording it as an orphan",
                metadata: ["apns.channel_id": "\(channelID)", "error": "\(String(reflecting: error))"]
            )
            try await self.channels.recordOrphan(appID: appID, channelID: channelID, storagePolicy: storagePolicy)
            throw StoreError(
                .conflict,
                "the channel \(channelID) was created at APNs but could not be attached to the feed; it is recorded as an orphan"
            )
        }
    }

    /// One channel of the app, or `nil`.
    package func get(appID: Int64, channelID: String) async throws -> Channels.Channel? {
        try await self.channels.get(appID: appID, channelID: channelID)
    }

    /// The app's channels as Livecast records them, retired ones included.
    package func list(appID: Int64) async throws -> [Channels.Channel] {
        try await self.channels.list(appID: appID)
    }

    /// The app's channels as APNs lists them.
    /// - Throws: ``APNsRefusal`` when APNs does not answer 200.
    package func listAtAPNs(bundleID: String) async throws -> [String] {
        let (channels, outcome) = await self.apns.listChannels(bundleID: bundleID)
        guard outcome.isSuccess else { throw APNsRefusal("APNs did not list the channels: \(outcome)") }
        return channels
    }

    /// Retires a channel: deletes it at APNs, then marks it retired; it is never sent to again. Retiring a retired
    /// channel changes nothing.
    /// - Parameter force: Retire even while activities follow it.
    /// - Throws: ``StoreError``: `notFound`; `conflict` while followed and not forced; ``APNsRefusal`` when APNs
    ///   refuses the deletion (a channel APNs no longer has counts as deleted).
    package func retire(appID: Int64, bundleID: String, channelID: String, force: Bool) async throws -> Channels.Channel {
        guard var channel = try await self.channels.get(appID: appID, channelID: channelID) else {
            throw StoreError(.notFound, "no channel \(channelID)", field: "channelId")
        }
        if channel.state == .retired { return channel }
        guard force || channel.followers == 0 else {
            throw StoreError(
                .conflict,
                "\(channel.followers) running activities follow the channel; retire with force to stop them",
                field: "channelId"
            )
        }
        let (outcome, deleted) = await self.deleteAtAPNs(bundleID: bundleID, channelID: channelID)
        guard deleted else { throw APNsRefusal("APNs did not delete the channel: \(outcome)") }
        try await self.channels.markRetired(appID: appID, channelID: channelID)
        channel.state = .retired
        return channel
    }

    /// Deletes a channel at APNs only; the registry is left as it is.
    /// - Returns: APNs' answer, and whether the channel is gone there (deleted, or APNs did not have it).
    func deleteAtAPNs(bundleID: String, channelID: String) async -> (outcome: APNsOutcome, deleted: Bool) {
        let outcome = await self.apns.deleteChannel(bundleID: bundleID, channelID: channelID)
        return (outcome, outcome.status == 204 || outcome.reason == .channelNotRegistered)
    }
}
