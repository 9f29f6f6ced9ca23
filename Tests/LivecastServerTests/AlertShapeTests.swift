import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import PostgresNIO
import Testing

@testable import LivecastServer

/// An alert takes only what ActivityKit documents for a Live Activity, and localized text is stored in its nested
/// shape: a key a device would make it discard the push is refused before anything is written.
@Suite struct AlertShapeTests {
    private let activity = "/v1/apps/com.example.game/activities/act-1"

    @Test func undocumentedAlertKeysAreRefusedNamingTheFieldAndWriteNothing() async throws {
        try await APIFixture.with("alert_shape_refused") { fixture, client in
            let key = fixture.key(.backend)
            #expect(
                try await client.send(.put, self.activity, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#).status
                    == .created
            )
            let refusals: [(alert: String, field: String)] = [
                (#"{"title": "Goal!", "subtitle": "1-0"}"#, "alert.subtitle"),
                (#"{"title-loc-key": "GOAL_TITLE"}"#, "alert.title-loc-key"),
                (#"{"body": {"loc-key": "GOAL_BODY"}}"#, "alert.body.loc-key"),
                (#"{"title": {"locKey": "GOAL", "locArgs": ["Home"], "subtitle": "x"}}"#, "alert.title.subtitle"),
            ]
            for (alert, field) in refusals {
                let refused = try await client.send(
                    .post,
                    "\(self.activity)/updates",
                    key: key,
                    body: #"{"contentState": {"home": 1}, "alert": \#(alert)}"#
                )
                #expect(refused.status == .unprocessableContent, "\(alert): \(refused.text)")
                #expect(refused.errorCode == "invalid")
                #expect(refused.json["error"]?["field"]?.stringValue == field)
            }
            let start = try await client.send(
                .put,
                "/v1/apps/com.example.game/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            #expect(start.status == .created)
            let refusedStart = try await client.send(
                .post,
                "/v1/apps/com.example.game/feeds/game-1/start",
                key: key,
                body: #"{"contentState": {}, "alert": {"title": "Kick-off", "subtitle": "Giants"}, "audience": {"everyone": true}}"#
            )
            #expect(refusedStart.status == .unprocessableContent)
            #expect(refusedStart.json["error"]?["field"]?.stringValue == "alert.subtitle")
            #expect(try await fixture.count("updates") == 0)
        }
    }

    @Test func localizedTextIsStoredNestedAsActivityKitReadsIt() async throws {
        try await APIFixture.with("alert_shape_nested") { fixture, client in
            let key = fixture.key(.backend)
            #expect(
                try await client.send(.put, self.activity, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#).status
                    == .created
            )
            let update = try await client.send(
                .post,
                "\(self.activity)/updates",
                key: key,
                body:
                    #"{"contentState": {"home": 1}, "alert": {"title": {"locKey": "GOAL_TITLE", "locArgs": ["Home"]}, "body": {"locKey": "GOAL_BODY"}}}"#
            )
            #expect(update.status == .accepted, "\(update.text)")
            let updateID = try #require(update.json["updateId"]?.intValue)
            let payloads = try await fixture.client.query("SELECT payload FROM updates WHERE id = \(updateID)")
            for try await payload in payloads.decode(String.self) {
                #expect(
                    payload.contains(#""alert":{"title":{"loc-key":"GOAL_TITLE","loc-args":["Home"]},"body":{"loc-key":"GOAL_BODY"}}"#),
                    "\(payload)"
                )
                #expect(!payload.contains("title-loc-key"))
            }
        }
    }
}
