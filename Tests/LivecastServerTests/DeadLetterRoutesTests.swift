import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
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
            let letter = try await fixture.deadLetter(activityKey: "order-7")

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
}
