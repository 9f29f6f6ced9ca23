import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Channels kept in step with APNs (the emulator) and PostgreSQL.
@Suite struct ChannelRegistryTests {
    private static let bundleID = EmulatorFixture.bundleID

    private func withRegistry(
        _ name: String,
        limit: Int = Channels.apnsLimit,
        _ body: (StoreFixture, EmulatorFixture, ChannelRegistry) async throws -> Void
    ) async throws {
        try await EmulatorFixture.with { emulator in
            let apns = try emulator.makeClient()
            do {
                try await StoreFixture.with(name) { store in
                    try await body(
                        store,
                        emulator,
                        ChannelRegistry(
                            channels: Channels(client: store.client, logger: store.logger),
                            apns: apns,
                            limit: limit,
                            logger: store.logger
                        )
                    )
                }
            } catch {
                await apns.shutdown()
                throw error
            }
            await apns.shutdown()
        }
    }

    private func feed(_ store: StoreFixture, _ key: String) async throws {
        _ = try await Feeds(client: store.client, logger: store.logger).put(
            .init(appID: store.appID, feedKey: key, attributesType: "GameAttributes", attributes: try RawJSON(validating: "{}"))
        )
    }

    @Test func createRecordsWhatAPNsMadeAndRetireDeletesIt() async throws {
        try await self.withRegistry("channels_create") { store, emulator, registry in
            try await self.feed(store, "game-1")
            let channel = try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 1, feedKey: "game-1")
            #expect(channel.state == .active)
            #expect(emulator.emulator.devices().isEmpty)
            #expect(try await registry.listAtAPNs(bundleID: Self.bundleID) == [channel.channelID])
            #expect(try await registry.list(appID: store.appID).map(\.channelID) == [channel.channelID])
            #expect(
                try await Feeds(client: store.client, logger: store.logger).get(appID: store.appID, feedKey: "game-1")?.channelID == channel.channelID
            )
            // One channel per feed.
            await #expect(throws: StoreError.self) {
                try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 0, feedKey: "game-1")
            }
            #expect(try await registry.listAtAPNs(bundleID: Self.bundleID).count == 1)

            let retired = try await registry.retire(appID: store.appID, bundleID: Self.bundleID, channelID: channel.channelID, force: false)
            #expect(retired.state == .retired)
            #expect(try await registry.listAtAPNs(bundleID: Self.bundleID).isEmpty)
            // Retiring again changes nothing; the registry keeps the retired channel.
            #expect(
                try await registry.retire(appID: store.appID, bundleID: Self.bundleID, channelID: channel.channelID, force: false).state == .retired
            )
            #expect(try await registry.get(appID: store.appID, channelID: channel.channelID)?.state == .retired)
        }
    }

    @Test func aFollowedChannelRetiresOnlyWhenForced() async throws {
        try await self.withRegistry("channels_followed") { store, _, registry in
            let channel = try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 0, feedKey: nil)
            _ = try await Activities(client: store.client, logger: store.logger).register(
                .init(appID: store.appID, activityKey: "activity-1", attributesType: "GameAttributes", channelID: channel.channelID)
            )
            #expect(try await registry.get(appID: store.appID, channelID: channel.channelID)?.followers == 1)
            await #expect(throws: StoreError.self) {
                try await registry.retire(appID: store.appID, bundleID: Self.bundleID, channelID: channel.channelID, force: false)
            }
            #expect(try await registry.listAtAPNs(bundleID: Self.bundleID) == [channel.channelID])
            #expect(
                try await registry.retire(appID: store.appID, bundleID: Self.bundleID, channelID: channel.channelID, force: true).state == .retired
            )
        }
    }

    @Test func theCapIsReportedBeforeAPNsRefuses() async throws {
        try await self.withRegistry("channels_cap", limit: 2) { store, _, registry in
            for _ in 0..<2 {
                _ = try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 0, feedKey: nil)
            }
            do {
                _ = try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 0, feedKey: nil)
                Issue.record("a third channel was created")
            } catch let error as StoreError {
                #expect(error.code == .limitReached)
            }
            #expect(try await registry.listAtAPNs(bundleID: Self.bundleID).count == 2)
        }
    }

    @Test func apnsRefusalsAndBadInputRecordNothing() async throws {
        try await self.withRegistry("channels_refused") { store, _, registry in
            do {
                _ = try await registry.create(
                    appID: store.appID,
                    bundleID: APNsPushType.liveactivity.topic(forBundleID: Self.bundleID)!,
                    storagePolicy: 0,
                    feedKey: nil
                )
                Issue.record("APNs' refusal was not reported")
            } catch let refusal as APNsRefusal {
                #expect(refusal.message.contains("TopicDisallowed"))
            }
            await #expect(throws: StoreError.self) {
                try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 2, feedKey: nil)
            }
            await #expect(throws: StoreError.self) {
                try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 0, feedKey: "no-such-feed")
            }
            #expect(try await registry.list(appID: store.appID).isEmpty)
            #expect(try await registry.listAtAPNs(bundleID: Self.bundleID).isEmpty)
        }
    }

    @Test func aChannelAPNsMadeButTheRegistryCouldNotAttachIsKeptAsAnOrphan() async throws {
        try await self.withRegistry("channels_orphan") { store, _, registry in
            try await self.feed(store, "game-2")
            // The registry's write for the feed fails after APNs said yes.
            try await store.client.query(
                """
                CREATE FUNCTION refuse_feed_channels() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN IF NEW.feed_id IS NOT NULL THEN RAISE EXCEPTION 'registry unavailable'; END IF; RETURN NEW; END $$
                """
            )
            try await store.client.query("CREATE TRIGGER refuse BEFORE INSERT ON channels FOR EACH ROW EXECUTE FUNCTION refuse_feed_channels()")
            await #expect(throws: StoreError.self) {
                try await registry.create(appID: store.appID, bundleID: Self.bundleID, storagePolicy: 0, feedKey: "game-2")
            }
            let atAPNs = try await registry.listAtAPNs(bundleID: Self.bundleID)
            #expect(atAPNs.count == 1)
            let recorded = try await registry.list(appID: store.appID)
            #expect(recorded.map(\.channelID) == atAPNs)
            #expect(recorded.map(\.state) == [.orphan])
        }
    }
}
