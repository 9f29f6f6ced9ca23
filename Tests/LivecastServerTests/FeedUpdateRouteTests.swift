import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Testing

@testable import LivecastServer

/// A feed's start, updates and end through the router, the outbox, the dispatcher and the emulator's devices.
@Suite struct FeedUpdateRouteTests {
    @Test func aGameThroughTheAPIReachesTheDevices() async throws {
        try await APIFixture.withEmulator("feed_routes_game") { fixture, client, emulator, dispatcher in
            let backend = fixture.key(.backend)
            let feed = "/v1/apps/com.example.game/feeds/game-4711"
            let created = try await client.send(
                .put,
                feed,
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}, "channel": {"storagePolicy": "noStorage"}}"#
            )
            #expect(created.status == .created, "\(created.text)")
            var devices: [DeviceSnapshot] = []
            for osVersion in ["18.2", "17.5"] {
                devices.append(try await fixture.registeredDevice(osVersion: osVersion, emulator: emulator, client: client))
            }
            let start = try await client.send(
                .post,
                "\(feed)/start",
                key: backend,
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            #expect(start.status == .accepted, "\(start.text)")
            #expect(start.json["priority"]?.intValue == 10)
            #expect(try await dispatcher.drain() == 1)
            for device in devices {
                let activity = try #require(emulator.emulator.device(id: device.id)?.activities.first)
                let registered = try await client.send(
                    .put,
                    "/v1/apps/com.example.game/activities/\(activity.id)",
                    key: backend,
                    body: activity.updateToken.map { #"{"attributesType": "GameAttributes", "feed": "game-4711", "pushToken": "\#($0)"}"# }
                        ?? #"{"attributesType": "GameAttributes", "feed": "game-4711", "channelId": "\#(activity.channelId ?? "")"}"#
                )
                #expect(registered.status == .created, "\(registered.text)")
            }

            let timestamp = Int(Date().timeIntervalSince1970) + 5  // after the start's (same-second updates wait a second)
            let update = try await client.send(
                .post,
                "\(feed)/updates",
                key: backend,
                body: #"{"contentState": {"home": 1}, "timestamp": \#(timestamp)}"#,
                headers: [.idempotencyKey: "goal-1"]
            )
            #expect(update.status == .accepted, "\(update.text)")
            let replay = try await client.send(
                .post,
                "\(feed)/updates",
                key: backend,
                body: #"{"contentState": {"home": 1}, "timestamp": \#(timestamp)}"#,
                headers: [.idempotencyKey: "goal-1"]
            )
            #expect(replay.status == .accepted && replay.text == update.text)
            #expect(replay.headers[.idempotentReplayed] == "true")
            let stale = try await client.send(
                .post,
                "\(feed)/updates",
                key: backend,
                body: #"{"contentState": {"home": 9}, "timestamp": \#(timestamp - 10)}"#
            )
            #expect(stale.status == .conflict && stale.errorCode == "stale_timestamp")
            #expect(try await dispatcher.drain() == 1)
            for device in devices {
                #expect(emulator.emulator.device(id: device.id)?.activities.first?.contentState == .object(["home": .int(1)]))
            }

            let end = try await client.send(
                .post,
                "\(feed)/end",
                key: backend,
                body: #"{"contentState": {"home": 2}, "timestamp": \#(timestamp + 1), "dismissalDate": \#(timestamp + 60)}"#
            )
            #expect(end.status == .accepted, "\(end.text)")
            #expect(try await dispatcher.drain() == 1)
            for device in devices {
                let activity = try #require(emulator.emulator.device(id: device.id)?.activities.first)
                #expect(activity.state == .ended && activity.dismissalDate == timestamp + 60)
            }
            let after = try await client.send(.post, "\(feed)/updates", key: backend, body: #"{"contentState": {"home": 3}}"#)
            #expect(after.status == .conflict && after.errorCode == "feed_ended")
            #expect(try await fixture.count("updates") == 3)
        }
    }

    @Test func aTimestampFurtherAheadThanTheClockSkewIsRefused() async throws {
        try await APIFixture.with("feed_routes_skew", configuration: .init(maximumClockSkew: .seconds(30))) { fixture, client in
            let backend = fixture.key(.backend)
            let feed = "/v1/apps/com.example.game/feeds/game-1"
            _ = try await client.send(.put, feed, key: fixture.key(.operator), body: #"{"attributesType": "GameAttributes", "attributes": {}}"#)
            let now = Int(Date().timeIntervalSince1970)
            let bodies = [
                ("start", #"{"contentState": {}, "alert": {"title": "x"}, "audience": {"everyone": true}, "timestamp": \#(now + 90)}"#),
                ("updates", #"{"contentState": {}, "timestamp": \#(now + 90)}"#),
                ("end", #"{"timestamp": \#(now + 90)}"#),
            ]
            for (action, body) in bodies {
                let refused = try await client.send(.post, "\(feed)/\(action)", key: backend, body: body)
                #expect(refused.status.code == 422, "\(action): \(refused.text)")
                #expect(refused.errorCode == "timestamp_too_far_ahead", "\(action): \(refused.text)")
                #expect(refused.errorField == "timestamp")
            }
            #expect(try await fixture.count("updates") == 0)
            // Within the skew, it is accepted as given.
            let accepted = try await client.send(.post, "\(feed)/updates", key: backend, body: #"{"contentState": {}, "timestamp": \#(now + 20)}"#)
            #expect(accepted.status == .accepted, "\(accepted.text)")
            #expect(accepted.json["timestamp"]?.intValue == now + 20)
        }
    }

    @Test func badStartsAndUpdatesAreRefusedWithoutWriting() async throws {
        try await APIFixture.with("feed_routes_bad") { fixture, client in
            let backend = fixture.key(.backend)
            let feed = "/v1/apps/com.example.game/feeds/game-1"
            _ = try await client.send(.put, feed, key: fixture.key(.operator), body: #"{"attributesType": "GameAttributes", "attributes": {}}"#)
            let cases: [(String, String, Int, String?)] = [
                ("start", #"{"contentState": {}, "alert": {"title": "x"}}"#, 400, "audience"),
                ("start", #"{"contentState": {}, "alert": {"title": "x"}, "audience": {}}"#, 422, "audience"),
                ("start", #"{"contentState": {}, "alert": {"title": "x"}, "audience": {"everyone": true, "userIds": ["u"]}}"#, 422, "audience"),
                ("start", #"{"contentState": {}, "alert": {"title": "x"}, "audience": {"deviceIds": []}}"#, 422, "audience"),
                ("start", #"{"contentState": {}, "audience": {"everyone": true}}"#, 400, "alert"),
                ("updates", #"{"contentState": "score"}"#, 422, "contentState"),
                ("updates", #"{"contentState": {}, "priority": 7}"#, 422, "priority"),
                ("updates", #"{"contentState": {}, "staleDate": 1000}"#, 422, "staleDate"),
                ("updates", #"{"contentState": {}, "timestamp": 99999999999}"#, 422, "timestamp"),
                ("updates", #"{"contentState": {"text": "\#(String(repeating: "x", count: 5000))"}}"#, 413, "contentState"),
                ("end", #"{"dismissalDate": "later"}"#, 400, "dismissalDate"),
            ]
            for (action, body, status, field) in cases {
                let response = try await client.send(.post, "\(feed)/\(action)", key: backend, body: body)
                #expect(response.status.code == status, "\(action) \(body.prefix(80)): \(response.text)")
                #expect(response.errorField == field, "\(action) \(body.prefix(80)): \(response.text)")
            }
            let unknown = try await client.send(.post, "/v1/apps/com.example.game/feeds/none/updates", key: backend, body: #"{"contentState": {}}"#)
            #expect(unknown.status == .notFound)
            let otherApp = try await client.send(.post, "\(feed)/updates", key: fixture.otherKey, body: #"{"contentState": {}}"#)
            #expect(otherApp.status == .notFound)
            #expect(try await fixture.count("updates") == 0)
        }
    }
}
