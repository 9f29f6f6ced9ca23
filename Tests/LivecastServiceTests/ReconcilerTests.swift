import APNs
import APNsEmulator
import Foundation
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The channel reconciler between the registry and the emulator's channel list, with orphans on both sides.
@Suite struct ReconcilerTests {
    @Test func orphansAreReportedThenDeletedAndMissingChannelsMarked() async throws {
        try await DispatchFixture.with("reconcile") { fixture in
            let live = try #require(try await fixture.feed("game-1", channelPolicy: 0))
            // At APNs only; at APNs and recorded as an orphan; in the registry only (recorded an hour ago).
            let unknown = try await fixture.emulator.createChannel()
            let recordedOrphan = try await fixture.emulator.createChannel()
            let gone = "bm90LWF0LWFwbnM="
            try await fixture.sql(
                "INSERT INTO channels (app_id, channel_id, storage_policy, state) VALUES (\(fixture.store.appID), \(recordedOrphan), 0, 'orphan')"
            )
            try await fixture.sql(
                "INSERT INTO channels (app_id, channel_id, storage_policy, created_at) VALUES (\(fixture.store.appID), \(gone), 0, now() - interval '1 hour')"
            )
            let reconciler = ChannelReconciler(database: fixture.store.client, apns: fixture.apns, logger: fixture.store.logger)

            let report = try await reconciler.reconcile(
                appID: fixture.store.appID,
                bundleID: EmulatorFixture.bundleID,
                environment: "sandbox",
                deleteOrphans: false
            )
            #expect(
                Set(report.findings.map(\.line)) == [
                    "orphan \(unknown): kept",
                    "recorded orphan \(recordedOrphan): kept",
                    "missing \(gone): marked missing",
                ]
            )
            #expect(
                report.summary
                    == "com.example.game (sandbox): 3 channels at APNs, 2 active in the registry; 1 orphans (0 deleted), 1 missing, 1 recorded orphans (0 retired)"
            )
            let registry = ChannelRegistry(
                channels: Channels(client: fixture.store.client, logger: fixture.store.logger),
                apns: fixture.apns,
                logger: fixture.store.logger
            )
            #expect(try await registry.get(appID: fixture.store.appID, channelID: gone)?.state == .missing)
            #expect(Set(try await registry.listAtAPNs(bundleID: EmulatorFixture.bundleID)) == [live, unknown, recordedOrphan])

            let cleaned = try await reconciler.reconcile(
                appID: fixture.store.appID,
                bundleID: EmulatorFixture.bundleID,
                environment: "sandbox",
                deleteOrphans: true
            )
            #expect(
                Set(cleaned.findings.map(\.line)) == [
                    "orphan \(unknown): deleted at APNs",
                    "recorded orphan \(recordedOrphan): retired (deleted at APNs)",
                ]
            )
            #expect(try await registry.listAtAPNs(bundleID: EmulatorFixture.bundleID) == [live])
            #expect(try await registry.get(appID: fixture.store.appID, channelID: recordedOrphan)?.state == .retired)
            #expect(try await registry.get(appID: fixture.store.appID, channelID: live)?.state == .active)

            let settled = try await reconciler.reconcile(
                appID: fixture.store.appID,
                bundleID: EmulatorFixture.bundleID,
                environment: "sandbox",
                deleteOrphans: true
            )
            #expect(settled.findings.isEmpty)
        }
    }

    @Test func aRecentlyRecordedChannelIsNotTakenForMissing() async throws {
        try await DispatchFixture.with("reconcile_recent") { fixture in
            try await fixture.sql("INSERT INTO channels (app_id, channel_id, storage_policy) VALUES (\(fixture.store.appID), 'cmVjZW50', 0)")
            let report = try await ChannelReconciler(database: fixture.store.client, apns: fixture.apns, logger: fixture.store.logger)
                .reconcile(appID: fixture.store.appID, bundleID: EmulatorFixture.bundleID, environment: "sandbox", deleteOrphans: false)
            #expect(report.findings.isEmpty)
        }
    }

    @Test func theScheduledJobRunsOnOneInstanceAtATime() async throws {
        try await DispatchFixture.with("reaper_service") { fixture in
            let service = ReaperService(reaper: fixture.reaper(), interval: .seconds(60))
            let unknown = try await fixture.emulator.createChannel()
            try await fixture.feed("game-1", channelPolicy: 0)
            // Another instance holds the schedule lock: this one skips its tick.
            let skipped = try await fixture.store.client.withTransaction(logger: fixture.store.logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(4, 0)", logger: fixture.store.logger)
                return await service.tick()
            }
            #expect(!skipped)
            #expect(await service.tick())
            // Report only: the orphan is still at APNs.
            #expect(
                try await ChannelRegistry(
                    channels: Channels(client: fixture.store.client, logger: fixture.store.logger),
                    apns: fixture.apns,
                    logger: fixture.store.logger
                )
                .listAtAPNs(bundleID: EmulatorFixture.bundleID).contains(unknown)
            )
        }
    }
}
