import Foundation
import LivecastCore
import LivecastTesting
import PostgresNIO
import Testing

/// `livecast activities show` and `livecast deliveries find` against a real PostgreSQL holding what a dispatcher
/// writes for a refused push: the activity's timeline and the push found by its apns-id.
@Suite struct RecordsCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func anActivityShowsItsTimelineAndItsPushIsFoundByItsAPNsID() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_records")
        let token = String(repeating: "ab", count: 32)
        let (updateID, activityID) = try await TestPostgres.withClient(database) { client in
            let rows = try await client.query(
                """
                WITH app AS (
                    INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
                    VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/a.p8') RETURNING id
                ), activity AS (
                    INSERT INTO activities (app_id, activity_key, attributes_type) SELECT id, 'order-7', 'DeliveryAttributes' FROM app
                    RETURNING id, app_id
                ), token AS (
                    INSERT INTO activity_tokens (app_id, activity_id, token, generation, invalidated_at, invalidation_reason)
                    SELECT app_id, id, \(token), 1, now(), 'BadDeviceToken' FROM activity RETURNING activity_id
                ), update AS (
                    INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, priority, status, completed_at)
                    SELECT app_id, id, 'update', 1767225600, '{"eta":5}', 5, 'failed', now() FROM activity RETURNING id
                )
                SELECT (SELECT id FROM update), (SELECT id FROM activity)
                """
            )
            for try await ids in rows.decode((Int64, Int64).self) { return ids }
            return (Int64(0), Int64(0))
        }
        let apnsID = try #require(PushID(updateID: updateID, targetKind: .activity, targetID: activityID)).uuidString
        try await TestPostgres.withClient(database) { client in
            _ = try await client.query(
                """
                INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
                VALUES (\(updateID), 'device', \(token), 400, 'BadDeviceToken', \(apnsID))
                """
            )
        }
        let app = ["--bundle-id", "com.example.game", "--database-url", url]

        let shown = try await ExternalProcess.run(self.livecast, ["activities", "show", "order-7"] + app)
        #expect(shown.status == 0, "\(shown.stderr)")
        let lines = shown.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "activity order-7: active, token-based, DeliveryAttributes", "\(shown.stdout)")
        #expect(lines.contains("token: none live"), "\(shown.stdout)")
        #expect(lines.contains { $0.hasSuffix("tokenInvalidated  \(token): BadDeviceToken") }, "\(shown.stdout)")
        let push = "update \(updateID) (update, timestamp 1767225600) → activity order-7 token \(token): failed 400 BadDeviceToken apns-id \(apnsID)"
        #expect(lines.contains { $0.hasSuffix("push  \(push)") }, "\(shown.stdout)")

        let found = try await ExternalProcess.run(self.livecast, ["deliveries", "find", "--apns-id", apnsID] + app)
        #expect(found.status == 0, "\(found.stderr)")
        #expect(found.stdout.hasSuffix("  \(push)\n"), "\(found.stdout)")
        let byReason = try await ExternalProcess.run(self.livecast, ["deliveries", "find", "--reason", "BadDeviceToken"] + app)
        #expect(byReason.stdout.contains(apnsID), "\(byReason.stdout)")

        let foreign = try await ExternalProcess.run(self.livecast, ["deliveries", "find", "--apns-id", UUID().uuidString] + app)
        #expect(foreign.status == 1 && foreign.stdout.hasPrefix("no push of Livecast's has apns-id"), "\(foreign.stdout)")
        let unknown = try await ExternalProcess.run(self.livecast, ["activities", "show", "nothing"] + app)
        #expect(unknown.status != 0 && unknown.stderr.contains("no activity nothing"), "\(unknown.stderr)")
    }

    @Test func aDevicesTokensAndAFeedsHistoryAreShown() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_reads")
        let updateID = try await TestPostgres.withClient(database) { client in
            let rows = try await client.query(
                """
                WITH app AS (
                    INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
                    VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/a.p8') RETURNING id
                ), tokens AS (
                    INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, invalidated_at, invalidation_reason)
                    SELECT id, 'phone-1', 'GameAttributes', 'aa01', now(), 'rotated' FROM app
                    UNION ALL SELECT id, 'phone-1', 'GameAttributes', 'aa02', NULL, NULL FROM app
                    RETURNING id
                ), feed AS (
                    INSERT INTO feeds (app_id, feed_key, attributes_type, attributes, state, last_timestamp)
                    SELECT id, 'game-1', 'GameAttributes', '{}', 'active', 1767225600 FROM app RETURNING id, app_id
                )
                INSERT INTO updates (app_id, feed_id, event, timestamp, content_state, priority, status, sent_count, completed_at)
                SELECT app_id, id, 'update', 1767225600, '{"home":1}', 5, 'sent', 3, now() FROM feed RETURNING id
                """
            )
            for try await id in rows.decode(Int64.self) { return id }
            return Int64(0)
        }
        let app = ["--bundle-id", "com.example.game", "--database-url", url]

        let tokens = try await ExternalProcess.run(self.livecast, ["tokens", "show", "--device-id", "phone-1"] + app)
        #expect(tokens.status == 0, "\(tokens.stderr)")
        let lines = tokens.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("GameAttributes\taa02\tlive\t"), "\(tokens.stdout)")
        #expect(lines.last?.hasPrefix("GameAttributes\taa01\tinvalidated rotated\t") == true, "\(tokens.stdout)")

        let history = try await ExternalProcess.run(self.livecast, ["feeds", "history", "--feed", "game-1"] + app)
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout == "\(updateID)\tupdate\t1767225600\tsent\tsent 3, pending 0, failed 0\n", "\(history.stdout)")

        let unknown = try await ExternalProcess.run(self.livecast, ["tokens", "show", "--device-id", "phone-9"] + app)
        #expect(unknown.status != 0 && unknown.stderr.contains("no push-to-start token of device phone-9"), "\(unknown.stderr)")
    }

    @Test func deadLettersAreListedAndReplayedOnce() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_dead_letters")
        let (letter, updateID) = try await TestPostgres.withClient(database) { client in
            let rows = try await client.query(
                """
                WITH app AS (
                    INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
                    VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/a.p8') RETURNING id
                ), activity AS (
                    INSERT INTO activities (app_id, activity_key, attributes_type) SELECT id, 'order-7', 'DeliveryAttributes' FROM app
                    RETURNING id, app_id
                ), token AS (
                    INSERT INTO activity_tokens (app_id, activity_id, token, generation) SELECT app_id, id, 'abcd', 1 FROM activity RETURNING id
                ), update AS (
                    INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, priority, status, payload, completed_at)
                    SELECT app_id, id, 'update', 1767225600, '{"eta":5}', 5, 'failed', '{"aps":{}}', now() FROM activity
                    RETURNING id, app_id, activity_id
                )
                INSERT INTO dead_letters (app_id, update_id, target_kind, target_id, reason, attempts)
                SELECT app_id, id, 'activity', activity_id, 'ServiceUnavailable', 7 FROM update RETURNING id, update_id
                """
            )
            for try await ids in rows.decode((Int64, Int64).self) { return ids }
            return (Int64(0), Int64(0))
        }
        let app = ["--bundle-id", "com.example.game", "--database-url", url]

        let listed = try await ExternalProcess.run(self.livecast, ["dead-letters", "list"] + app)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stdout.hasPrefix("\(letter)\tupdate \(updateID) (update)\tactivity order-7\tServiceUnavailable\t7 tries\t"),
            "\(listed.stdout)"
        )
        #expect(listed.stdout.hasSuffix("\tnot replayed\n"), "\(listed.stdout)")

        let replayed = try await ExternalProcess.run(self.livecast, ["dead-letters", "replay", "\(letter)"] + app)
        #expect(replayed.status == 0 && replayed.stdout == "requeued\n", "\(replayed.stdout)\(replayed.stderr)")
        let again = try await ExternalProcess.run(self.livecast, ["dead-letters", "replay", "\(letter)"] + app)
        #expect(again.status != 0 && again.stderr.contains("was replayed already (requeued)"), "\(again.stderr)")
        let relisted = try await ExternalProcess.run(self.livecast, ["dead-letters", "list"] + app)
        #expect(relisted.stdout.hasSuffix("\treplayed: requeued\n"), "\(relisted.stdout)")
    }
}
