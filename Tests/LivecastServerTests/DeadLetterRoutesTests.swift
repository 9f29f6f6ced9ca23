import Foundation
import LivecastCore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// `GET …/dead-letters` and `POST …/dead-letters/{id}/replay` through the router, over a dead letter as the
/// dispatcher keeps one (the replay's sending is DeadLetterReplayTests').
@Suite struct DeadLetterRoutesTests {
    @Test func deadLettersAreListedAndReplayedOnceByAnOperator() async throws {
        try await APIFixture.with("dead_letter_routes") { fixture, client in
            let app = "/v1/apps/com.example.game"
            let registered = try await client.send(
                .put,
                "\(app)/activities/order-7",
                key: fixture.key(.backend),
                body: #"{"attributesType": "DeliveryAttributes", "pushToken": "abcd"}"#
            )
            #expect(registered.status == .created, "\(registered.text)")
            let letter = try await self.deadLetter(fixture, activityKey: "order-7")

            let listed = try await client.send(.get, "\(app)/dead-letters", key: fixture.key(.backend))
            #expect(listed.status == .ok, "\(listed.text)")
            let first = try #require(listed.json["deadLetters"].items.first)
            #expect(first["id"]?.intValue == Int(letter))
            #expect(first["targetKind"]?.stringValue == "activity" && first["target"]?.stringValue == "order-7")
            #expect(first["reason"]?.stringValue == "ServiceUnavailable" && first["attempts"]?.intValue == 7)
            #expect(first["replayOutcome"] == nil)

            let path = "\(app)/dead-letters/\(letter)/replay"
            let byBackend = try await client.send(.post, path, key: fixture.key(.backend))
            #expect(byBackend.status == .forbidden)
            let replayed = try await client.send(.post, path, key: fixture.key(.operator))
            #expect(replayed.status == .accepted, "\(replayed.text)")
            #expect(replayed.json["outcome"]?.stringValue == "requeued" && replayed.json["deadLetterId"]?.intValue == Int(letter))
            #expect(try await fixture.count("owed_pushes") == 1)
            let again = try await client.send(.post, path, key: fixture.key(.operator))
            #expect(again.status == .conflict && again.errorCode == "conflict", "\(again.text)")
            #expect(try await fixture.count("owed_pushes") == 1)
            let after = try await client.send(.get, "\(app)/dead-letters", key: fixture.key(.backend))
            #expect(after.json["deadLetters"].items.first?["replayOutcome"]?.stringValue == "requeued")

            let unknown = try await client.send(.post, "\(app)/dead-letters/\(letter + 100)/replay", key: fixture.key(.operator))
            #expect(unknown.status == .notFound && unknown.errorField == "deadLetterId")
            let otherApp = try await client.send(.post, "/v1/apps/com.example.other/dead-letters/\(letter)/replay", key: fixture.otherKey)
            #expect(otherApp.status == .notFound)
            let malformed = try await client.send(.post, "\(app)/dead-letters/abc/replay", key: fixture.key(.operator))
            #expect(malformed.status == .badRequest)
            let badLimit = try await client.send(.get, "\(app)/dead-letters?limit=0", key: fixture.key(.backend))
            #expect(badLimit.status.code == 422 && badLimit.errorField == "limit")
        }
    }

    /// An update of a standalone activity given up after seven tries, as the dispatcher records it.
    private func deadLetter(_ fixture: APIFixture, activityKey: String) async throws -> Int64 {
        let rows = try await fixture.client.query(
            """
            WITH update AS (
                INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, priority, status, payload, completed_at)
                SELECT app_id, id, 'update', extract(epoch FROM now())::bigint, '{"eta":5}', 5, 'failed', '{"aps":{}}', now()
                FROM activities WHERE activity_key = \(activityKey) RETURNING id, app_id, activity_id
            )
            INSERT INTO dead_letters (app_id, update_id, target_kind, target_id, reason, attempts)
            SELECT app_id, id, 'activity', activity_id, 'ServiceUnavailable', 7 FROM update RETURNING id
            """
        )
        for try await id in rows.decode(Int64.self) { return id }
        return 0
    }
}
