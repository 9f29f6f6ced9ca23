import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import PostgresNIO
import Testing

@testable import LivecastServer

/// Updates and ends of a standalone activity, and their status.
@Suite struct ActivityUpdateTests {
    private let activity = "/v1/apps/com.example.game/activities/act-1"

    @Test func anUpdateIsAcceptedOnceStoredAndItsStatusRead() async throws {
        try await APIFixture.with("upd_accept") { fixture, client in
            let key = fixture.key(.backend)
            #expect(
                try await client.send(.put, self.activity, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#).status
                    == .created
            )
            let now = Int(Date().timeIntervalSince1970)
            let update = try await client.send(
                .post,
                "\(self.activity)/updates",
                key: key,
                body:
                    #"{"contentState": {"home": 1, "away": 0, "clock": 2.50}, "timestamp": \#(now - 10), "staleDate": \#(now + 900), "alert": {"title": "Goal!", "body": {"locKey": "GOAL", "locArgs": ["Giants"]}, "sound": "default"}}"#
            )
            #expect(update.status == .accepted, "\(update.text)")
            #expect(update.json["timestamp"]?.intValue == now - 10)
            #expect(update.json["priority"]?.intValue == 10)
            #expect(update.json["coalesced"] == .bool(false))
            let updateID = try #require(update.json["updateId"]?.intValue)
            let payloads = try await fixture.client.query("SELECT payload FROM updates WHERE id = \(updateID)")
            for try await payload in payloads.decode(String.self) {
                // The content state goes out exactly as sent: key order, spacing and 2.50 kept.
                #expect(payload.contains(#""content-state":{"home": 1, "away": 0, "clock": 2.50}"#), "\(payload)")
                #expect(payload.contains(#""title":"Goal!""#))
                #expect(payload.contains(#""loc-key":"GOAL""#))
            }
            let status = try await client.send(.get, "/v1/apps/com.example.game/updates/\(updateID)", key: key)
            #expect(status.status == .ok)
            #expect(status.json["status"]?.stringValue == "pending")
            #expect(status.json["targets"]?["pending"]?.intValue == 1)

            let end = try await client.send(
                .post,
                "\(self.activity)/end",
                key: key,
                body: #"{"timestamp": \#(now), "dismissalDate": \#(now + 6 * 3600)}"#
            )
            #expect(end.status == .accepted, "\(end.text)")
            #expect(end.json["dismissalDateClamped"] == .bool(true))
            let afterEnd = try await client.send(.post, "\(self.activity)/updates", key: key, body: #"{"contentState": {"home": 2}}"#)
            #expect(afterEnd.status == .conflict)
            #expect(afterEnd.errorCode == "activity_ended")
            #expect(try await fixture.count("updates") == 2)
        }
    }

    @Test func anIdempotencyKeyReplaysTheSameRequestOnItsRouteAndTargetOnly() async throws {
        try await APIFixture.with("upd_idempotent") { fixture, client in
            let key = fixture.key(.backend)
            for (activity, token) in [(self.activity, "a1a1"), ("\(self.activity)-b", "b1b1")] {
                let body = #"{"attributesType": "GameAttributes", "pushToken": "\#(token)"}"#
                #expect(try await client.send(.put, activity, key: key, body: body).status == .created)
            }
            let body = #"{"contentState": {"home": 1}}"#
            let first = try await client.send(.post, "\(self.activity)/updates", key: key, body: body, headers: [.idempotencyKey: "req-1"])
            #expect(first.status == .accepted)
            #expect(first.headers[.idempotentReplayed] == nil)
            let again = try await client.send(.post, "\(self.activity)/updates", key: key, body: body, headers: [.idempotencyKey: "req-1"])
            #expect(again.status == .accepted)
            #expect(again.text == first.text)
            #expect(again.headers[.idempotentReplayed] == "true")
            #expect(try await fixture.count("updates") == 1)

            // The same key with another body on the same route and target is refused, and nothing is stored.
            let reused = try await client.send(
                .post,
                "\(self.activity)/updates",
                key: key,
                body: #"{"contentState": {"home": 9}}"#,
                headers: [.idempotencyKey: "req-1"]
            )
            #expect(reused.status == .unprocessableContent)
            #expect(reused.errorCode == "idempotency_key_reused")
            #expect(try await fixture.count("updates") == 1)

            // On another target, or another route, the same key is another key.
            let otherTarget = try await client.send(.post, "\(self.activity)-b/updates", key: key, body: body, headers: [.idempotencyKey: "req-1"])
            #expect(otherTarget.status == .accepted)
            #expect(otherTarget.headers[.idempotentReplayed] == nil)
            let otherRoute = try await client.send(.post, "\(self.activity)/end", key: key, body: "{}", headers: [.idempotencyKey: "req-1"])
            #expect(otherRoute.status == .accepted, "\(otherRoute.text)")
            #expect(otherRoute.headers[.idempotentReplayed] == nil)
            #expect(try await fixture.count("updates") == 3)

            let tooLong = try await client.send(
                .post,
                "\(self.activity)/updates",
                key: key,
                body: body,
                headers: [.idempotencyKey: String(repeating: "k", count: 201)]
            )
            #expect(tooLong.status == .unprocessableContent)
            #expect(try await fixture.count("updates") == 3)
        }
    }

    /// A retry is answered as its first request was even when the clock has moved past a date in its body: a stale
    /// date now past (the check that refuses it runs before the outbox, so the kept answer is looked up on that
    /// refusal), or a `sendAt` now reached (the retry goes to the outbox, whose transaction finds the scheduled
    /// request's answer). Either way nothing new is stored, and another body under the key is still refused.
    @Test func aRetryIsReplayedAfterItsStaleDateOrItsSendAtHasPassed() async throws {
        try await APIFixture.with("upd_idempotent_later") { fixture, client in
            let key = fixture.key(.backend)
            let registration = #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#
            #expect(try await client.send(.put, self.activity, key: key, body: registration).status == .created)
            let soon = Int(Date().timeIntervalSince1970) + 3
            let stale = #"{"contentState": {"home": 1}, "staleDate": \#(soon)}"#
            let scheduled = #"{"contentState": {"home": 2}, "sendAt": \#(soon)}"#
            let path = "\(self.activity)/updates"
            let first = try await client.send(.post, path, key: key, body: stale, headers: [.idempotencyKey: "stale"])
            let later = try await client.send(.post, path, key: key, body: scheduled, headers: [.idempotencyKey: "later"])
            #expect(first.status == .accepted, "\(first.text)")
            #expect(later.status == .accepted && later.json["status"]?.stringValue == "scheduled", "\(later.text)")
            try await Task.sleep(until: .now + .seconds(Double(soon + 1) - Date().timeIntervalSince1970))

            let unkeyed = try await client.send(.post, path, key: key, body: stale)
            #expect(unkeyed.status == .unprocessableContent && unkeyed.errorField == "staleDate", "\(unkeyed.text)")
            for (body, idempotencyKey, answer) in [(stale, "stale", first), (scheduled, "later", later)] {
                let again = try await client.send(.post, path, key: key, body: body, headers: [.idempotencyKey: idempotencyKey])
                #expect(again.status == .accepted && again.text == answer.text, "\(idempotencyKey): \(again.text)")
                #expect(again.headers[.idempotentReplayed] == "true")
            }
            #expect(try await fixture.count("updates") == 1)
            #expect(try await fixture.count("scheduled_updates") == 1)
            for other in [#"{"contentState": {"home": 9}}"#, "{"] {
                let reused = try await client.send(.post, path, key: key, body: other, headers: [.idempotencyKey: "later"])
                #expect(reused.status == .unprocessableContent && reused.errorCode == "idempotency_key_reused", "\(other): \(reused.text)")
            }
            #expect(try await fixture.count("updates") == 1)
        }
    }

    @Test func orderingIsEnforced() async throws {
        try await APIFixture.with("upd_ordering") { fixture, client in
            let key = fixture.key(.backend)
            #expect(
                try await client.send(.put, self.activity, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#).status
                    == .created
            )
            let now = Int(Date().timeIntervalSince1970)
            #expect(
                try await client.send(.post, "\(self.activity)/updates", key: key, body: #"{"contentState": {"s": 1}, "timestamp": \#(now)}"#).status
                    == .accepted
            )
            let same = try await client.send(.post, "\(self.activity)/updates", key: key, body: #"{"contentState": {"s": 2}, "timestamp": \#(now)}"#)
            // The first is still waiting (no dispatcher here): the second takes its place and its timestamp.
            #expect(same.json["coalesced"] == .bool(true))
            #expect(same.json["timestamp"]?.intValue == now)
            let older = try await client.send(
                .post,
                "\(self.activity)/updates",
                key: key,
                body: #"{"contentState": {"s": 3}, "timestamp": \#(now - 60)}"#
            )
            #expect(older.status == .conflict)
            #expect(older.errorCode == "stale_timestamp")
            #expect(older.errorField == "timestamp")
            let firstID = try #require(same.json["updateId"]?.intValue) - 1
            let superseded = try await client.send(.get, "/v1/apps/com.example.game/updates/\(firstID)", key: key)
            #expect(superseded.json["status"]?.stringValue == "superseded")
            #expect(superseded.json["targets"]?["superseded"]?.intValue == 1)
            #expect(try await fixture.count("updates") == 2)
        }
    }

    @Test func badUpdatesAreRefusedWithoutWriting() async throws {
        try await APIFixture.with("upd_bad") { fixture, client in
            let key = fixture.key(.backend)
            #expect(
                try await client.send(.put, self.activity, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#).status
                    == .created
            )
            let now = Int(Date().timeIntervalSince1970)
            let big = String(repeating: "x", count: 5000)
            let cases: [(String, Int, String, String?)] = [
                (#"{"timestamp": \#(now)}"#, 400, "malformed_request", "contentState"),
                (#"{"contentState": {"a": 1}, "timestamp": "now"}"#, 400, "malformed_request", "timestamp"),
                (#"{"contentState": {"a": 1}, "timestamp": 1e300}"#, 400, "malformed_request", nil),
                (#"{"contentState": {"a": 1}, "timestamp": 99999999999999999999999}"#, 400, "malformed_request", nil),
                (#"{"contentState": {"a": 1}, "timestamp": 9999999999999}"#, 422, "timestamp_too_far_ahead", "timestamp"),
                (#"{"contentState": {"a": 1}, "timestamp": 0}"#, 422, "invalid", "timestamp"),
                (#"{"contentState": {"a": 1}, "staleDate": \#(now - 60)}"#, 422, "invalid", "staleDate"),
                (#"{"contentState": {"a": 1}, "priority": 7}"#, 422, "invalid", "priority"),
                (#"{"contentState": [1, 2]}"#, 422, "invalid", "contentState"),
                (#"{"contentState": {"a": 1}, "alert": {"title": 3}}"#, 400, "malformed_request", "alert.title"),
                (
                    #"{"contentState": {"a": 1}, "alert": {"sound": {"critical": true, "name": "x", "volume": 4}}}"#, 400, "malformed_request",
                    "alert.sound"
                ),
                (#"{"contentState": {"big": "\#(big)"}}"#, 413, "payload_too_large", "contentState"),
                (#"{"contentState": {"a": 1}"#, 400, "malformed_request", nil),
            ]
            for (body, status, code, field) in cases {
                let response = try await client.send(.post, "\(self.activity)/updates", key: key, body: body)
                #expect(response.status.code == status, "\(body.prefix(80)): \(response.text)")
                #expect(response.errorCode == code, "\(body.prefix(80))")
                #expect(response.errorField == field, "\(body.prefix(80))")
            }
            let unknown = try await client.send(
                .post,
                "/v1/apps/com.example.game/activities/nope/updates",
                key: key,
                body: #"{"contentState": {"a": 1}}"#
            )
            #expect(unknown.status == .notFound)
            let unknownApp = try await client.send(
                .post,
                "/v1/apps/com.example.none/activities/act-1/updates",
                key: key,
                body: #"{"contentState": {"a": 1}}"#
            )
            #expect(unknownApp.status == .notFound)
            #expect(try await fixture.count("updates") == 0)
            #expect(try await client.send(.get, "/v1/apps/com.example.game/updates/\(Int64.max)0", key: key).status == .badRequest)
        }
    }
}
