import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastServer

/// `GET …/events`: the event feed pages an app's events with a cursor that a backend polls with, narrowed by type,
/// refused to client keys and to other apps' keys.
@Suite struct EventFeedRouteTests {
    @Test func aBackendPagesItsEventsWithTheCursorAndTypes() async throws {
        try await APIFixture.with("event_feed_route") { fixture, client in
            let app = "/v1/apps/com.example.game"
            for key in ["order-1", "order-2", "order-3"] {
                let registered = try await client.send(
                    .put,
                    "\(app)/activities/\(key)",
                    key: fixture.key(.backend),
                    body: #"{"attributesType": "DeliveryAttributes", "pushToken": "abcd0\#(key.suffix(1))"}"#
                )
                #expect(registered.status == .created, "\(registered.text)")
            }
            let ended = try await client.send(.post, "\(app)/activities/order-2/end", key: fixture.key(.backend), body: "{}")
            #expect(ended.status.code < 300, "\(ended.text)")

            // The feed shows an event once every older transaction of the server has finished (other tests' too).
            let deadline = ContinuousClock.now + .seconds(30)
            while ContinuousClock.now < deadline {
                let ends = try await client.send(.get, "\(app)/events?types=activity.ended", key: fixture.key(.backend))
                if !ends.json["events"].items.isEmpty { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let first = try await client.send(.get, "\(app)/events?limit=2", key: fixture.key(.backend))
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.json["events"].items.map { $0["subject"]?["id"]?.stringValue } == ["order-1", "order-2"])
            #expect(first.json["events"].items.first?["type"]?.stringValue == "activity.registered")
            #expect(first.json["events"].items.first?["app"]?["bundleId"]?.stringValue == "com.example.game")
            #expect(first.json["hasMore"] == .bool(true))
            let next = try #require(first.json["next"]?.stringValue)
            let rest = try await client.send(.get, "\(app)/events?after=\(next)", key: fixture.key(.backend))
            #expect(rest.json["events"].items.map { $0["type"]?.stringValue } == ["activity.registered", "activity.ended"])
            #expect(rest.json["events"].items.last?["data"]?["endedBy"]?.stringValue == "backend")
            #expect(rest.json["hasMore"] == .bool(false))
            let last = try #require(rest.json["next"]?.stringValue)
            let empty = try await client.send(.get, "\(app)/events?after=\(last)", key: fixture.key(.backend))
            #expect(empty.json["events"].items.isEmpty && empty.json["next"]?.stringValue == last, "an empty page keeps the cursor")

            let ends = try await client.send(.get, "\(app)/events?types=activity.ended,token.invalidated", key: fixture.key(.backend))
            #expect(ends.json["events"].items.map { $0["subject"]?["id"]?.stringValue } == ["order-2"])

            for types in ["activity.exploded", "", "activity.ended,,token.invalidated"] {
                let badType = try await client.send(.get, "\(app)/events?types=\(types)", key: fixture.key(.backend))
                #expect(badType.status.code == 422 && badType.errorField == "types", "\(types): \(badType.text)")
            }
            for cursor in ["abc", "1-", "-1-2", "1-2-3", "99999999999999999999999-1"] {
                let badCursor = try await client.send(.get, "\(app)/events?after=\(cursor)", key: fixture.key(.backend))
                #expect(badCursor.status.code == 422 && badCursor.errorField == "after", "\(cursor): \(badCursor.text)")
            }
            let byClient = try await client.send(.get, "\(app)/events", key: fixture.key(.client))
            #expect(byClient.status == .forbidden)
            let otherApps = try await client.send(.get, "\(app)/events", key: fixture.otherKey)
            #expect(otherApps.status == .forbidden || otherApps.status == .notFound, "\(otherApps.text)")
            let ownApp = try await client.send(.get, "/v1/apps/com.example.other/events", key: fixture.otherKey)
            #expect(ownApp.status == .ok && ownApp.json["events"].items.isEmpty, "another app's events are not its own")
        }
    }
}
