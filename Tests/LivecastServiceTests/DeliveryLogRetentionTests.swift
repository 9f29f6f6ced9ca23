import APNs
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
        // nginx answers every push 200 at once (as APNs does a valid one), so the fan-out costs the suite little.
        try await NginxReturn200.with { nginx in
            var configuration = APNsClient.Configuration()
            configuration.pushEndpoint = .init(host: "localhost", port: nginx.port)
            configuration.additionalTrustRootFiles = [nginx.certificate]
            configuration.requestTimeout = .seconds(60)
            let key = try await ProviderKey.make()
            let apns = try APNsClient(
                configuration: configuration,
                credentials: try APNsCredentials(teamID: key.teamID, keyID: key.keyID, p8File: key.path)
            )
            defer { Task { await apns.shutdown() } }
            try await StoreFixture.with("delivery_log_retention") { store in
                _ = try await Feeds(client: store.client, logger: store.logger).put(
                    .init(appID: store.appID, feedKey: "game-1", attributesType: "GameAttributes", attributes: try RawJSON(validating: "{}"))
                )
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
                let update = try await FeedUpdates(client: store.client, logger: store.logger).accept(
                    .init(appID: store.appID, feedKey: "game-1", event: .update, contentState: try RawJSON(validating: #"{"home":1}"#))
                )
                let dispatcher = Dispatcher(
                    database: store.client,
                    appClients: FixedAppClients(apns, bundleID: "com.example.game"),
                    settings: Dispatcher.Settings(pageSize: 5000),
                    logger: store.logger
                )
                let started = ContinuousClock.now
                // The update, split into two slices of 50,000 followers, then the slices.
                #expect(try await dispatcher.drain() == 3)
                print("fan-out of \(Self.followerCount) pushes took \(ContinuousClock.now - started)")
                let counts = try await store.client.query("SELECT sent_count::int, failed_count::int FROM updates WHERE id = \(update.updateID)")
                for try await (sent, failed) in counts.decode((Int, Int).self) { #expect(sent == Self.followerCount && failed == 0) }
                let after = try await self.rowCounts(store)
                #expect(after.deliveries == before.deliveries, "a row was written per push")
                #expect(after.owed == before.owed && after.deadLetters == before.deadLetters)

                let log = DeliveryLog(client: store.client, logger: store.logger)
                let follower = try await self.activityRowID(store, key: "follower-54321")
                let apnsID = try #require(PushID(updateID: update.updateID, targetKind: .activity, targetID: follower))
                var onePush = DeliveryLog.Query()
                onePush.apnsID = apnsID
                let found = try await log.find(onePush, appID: store.appID)
                #expect(found.records.count == 1)
                #expect(found.records.first?.outcome == .delivered && found.records.first?.activityID == "follower-54321")
                let token = String(repeating: "0", count: 64 - String(follower, radix: 16).count) + String(follower, radix: 16)
                #expect(found.records.first?.target == token)
                var theUpdatesPushes = DeliveryLog.Query()
                theUpdatesPushes.updateID = update.updateID
                theUpdatesPushes.limit = 1000
                let page = try await log.find(theUpdatesPushes, appID: store.appID)
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
