import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The delivery log finds every push, successes included, without a row written per successful push: a
/// 100,000-follower fan-out adds no delivery row, and any follower's push is still found by its apns-id.
@Suite struct DeliveryLogRetentionTests {
    private static let followerCount = 100_000

    @Test(.timeLimit(.minutes(10))) func aHundredThousandFollowerFanOutWritesNoRowPerPushAndEachPushIsFound() async throws {
        try await EmulatorFixture.with({ $0.acceptsUnknownTokens = true }) { emulator in
            let apns = try emulator.makeClient()
            defer { Task { await apns.shutdown() } }
            try await StoreFixture.with("delivery_log_retention") { store in
                let fixture = DispatchFixture(emulator: emulator, store: store, apns: apns)
                try await fixture.feed("game-1")
                // Followers with tokens of their own, which the emulator answers 200 without simulating a device.
                try await store.client.query(
                    """
                    WITH followers AS (
                        INSERT INTO activities (app_id, activity_key, attributes_type, feed_id, state)
                        SELECT \(store.appID), 'follower-' || n, 'GameAttributes', (SELECT id FROM feeds WHERE feed_key = 'game-1'), 'active'
                        FROM generate_series(1, \(Self.followerCount)) AS n
                        RETURNING id
                    )
                    INSERT INTO activity_tokens (app_id, activity_id, token, generation)
                    SELECT \(store.appID), id, lpad(to_hex(id), 64, '0'), 1 FROM followers
                    """
                )
                let before = try await self.rowCounts(store)
                let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
                let started = ContinuousClock.now
                #expect(try await fixture.dispatcher(Dispatcher.Settings(pageSize: 5000)).drain() == 1)
                print("fan-out of \(Self.followerCount) pushes took \(ContinuousClock.now - started)")
                #expect(try await fixture.counts(update.updateID) == (Self.followerCount, 0))
                let after = try await self.rowCounts(store)
                #expect(after.deliveries == before.deliveries, "a row was written per push")
                #expect(after.owed == before.owed && after.deadLetters == before.deadLetters)

                let log = DeliveryLog(client: store.client, logger: store.logger)
                let follower = try await self.activityRowID(store, key: "follower-54321")
                let apnsID = try #require(PushID(updateID: update.updateID, targetKind: .activity, targetID: follower))
                let found = try await log.find(.init(apnsID: apnsID), appID: store.appID)
                #expect(found.records.count == 1)
                #expect(found.records.first?.outcome == .delivered && found.records.first?.activityID == "follower-54321")
                #expect(
                    found.records.first?.target == String(repeating: "0", count: 64 - String(follower, radix: 16).count) + String(follower, radix: 16)
                )
                let page = try await log.find(.init(updateID: update.updateID, limit: 1000), appID: store.appID)
                #expect(page.records.count == 1000 && page.records.allSatisfy { $0.outcome == .delivered })
                #expect(page.next != nil)
            }
        }
    }

    private func rowCounts(_ store: StoreFixture) async throws -> (deliveries: Int, owed: Int, deadLetters: Int) {
        let rows = try await store.client.query(
            "SELECT (SELECT count(*) FROM deliveries)::int, (SELECT count(*) FROM owed_pushes)::int, (SELECT count(*) FROM dead_letters)::int"
        )
        for try await counts in rows.decode((Int, Int, Int).self) { return counts }
        return (-1, -1, -1)
    }

    private func activityRowID(_ store: StoreFixture, key: String) async throws -> Int64 {
        let rows = try await store.client.query("SELECT id FROM activities WHERE activity_key = \(key)")
        for try await id in rows.decode(Int64.self) { return id }
        return 0
    }
}
