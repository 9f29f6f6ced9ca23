import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import Testing

/// Feeds and channels, with the channels created, listed and deleted at the APNs emulator.
@Suite struct FeedAndChannelTests {
    @Test func aFeedIsCreatedWithItsChannelAndReadWithItsFollowers() async throws {
        try await EmulatorFixture.with { emulator in
            try await APIFixture.with("feeds_channel", emulator: emulator) { fixture, client in
                let key = fixture.key(.operator)
                let path = "/v1/apps/com.example.game/feeds/game-4711"
                let created = try await client.send(
                    .put,
                    path,
                    key: key,
                    body:
                        #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}, "channel": {"storagePolicy": "mostRecentMessage"}, "staleAfterSeconds": 900}"#
                )
                #expect(created.status == .created, "\(created.text)")
                let channelID = try #require(created.json["channelId"]?.stringValue)
                let again = try await client.send(
                    .put,
                    path,
                    key: key,
                    body:
                        #"{"attributesType": "GameAttributes", "attributes": {"home": "Dodgers"}, "channel": {"storagePolicy": "mostRecentMessage"}}"#
                )
                #expect(again.status == .ok)
                #expect(again.json["channelId"]?.stringValue == channelID)
                #expect(try await fixture.count("channels") == 1)

                let follower = try await client.send(
                    .put,
                    "/v1/apps/com.example.game/activities/act-1",
                    key: fixture.key(.backend),
                    body: #"{"attributesType": "GameAttributes", "feed": "game-4711", "channelId": "\#(channelID)"}"#
                )
                #expect(follower.status == .created, "\(follower.text)")
                let feed = try await client.send(.get, path, key: key)
                #expect(feed.status == .ok)
                #expect(feed.json["attributes"]?["home"]?.stringValue == "Dodgers")
                #expect(feed.json["state"]?.stringValue == "created")
                #expect(feed.json["followers"]?["channel"]?.intValue == 1)
                #expect(feed.json["followers"]?["token"]?.intValue == 0)
                #expect(try await client.send(.get, "/v1/apps/com.example.game/feeds/none", key: key).status == .notFound)
            }
        }
    }

    @Test func badFeedsAreRefusedWithoutWriting() async throws {
        try await APIFixture.with("feeds_bad") { fixture, client in
            let path = "/v1/apps/com.example.game/feeds/game-1"
            let cases: [(String, Int, String?)] = [
                (#"{"attributesType": "GameAttributes"}"#, 400, "attributes"),
                (#"{"attributesType": "GameAttributes", "attributes": [1]}"#, 422, "attributes"),
                (#"{"attributesType": "", "attributes": {}}"#, 422, "attributesType"),
                (#"{"attributesType": "GameAttributes", "attributes": {}, "staleAfterSeconds": -1}"#, 422, "staleAfterSeconds"),
                (#"{"attributesType": "GameAttributes", "attributes": {}, "channel": {"storagePolicy": "forever"}}"#, 422, "storagePolicy"),
                (#"{"attributesType": "GameAttributes", "attributes": {}, "channel": {}}"#, 400, "channel.storagePolicy"),
            ]
            for (body, status, field) in cases {
                let response = try await client.send(.put, path, key: fixture.key(.operator), body: body)
                #expect(response.status.code == status, "\(body): \(response.text)")
                #expect(response.errorField == field, "\(body)")
            }
            #expect(try await fixture.count("feeds") == 0)
        }
    }

    @Test func channelsAreCreatedListedShownAndRetired() async throws {
        try await EmulatorFixture.with { emulator in
            try await APIFixture.with("channels_lifecycle", emulator: emulator) { fixture, client in
                let key = fixture.key(.operator)
                let created = try await client.send(.post, "/v1/apps/com.example.game/channels", key: key, body: #"{"storagePolicy": "noStorage"}"#)
                #expect(created.status == .created, "\(created.text)")
                let channelID = try #require(created.json["channelId"]?.stringValue)
                let encoded = try #require(channelID.addingPercentEncoding(withAllowedCharacters: .alphanumerics))

                let listed = try await client.send(.get, "/v1/apps/com.example.game/channels", key: key)
                #expect(listed.status == .ok)
                #expect(listed.text.contains(channelID))
                let atAPNs = try await client.send(.get, "/v1/apps/com.example.game/channels?source=apns", key: key)
                #expect(atAPNs.status == .ok, "\(atAPNs.text)")
                #expect(atAPNs.json["channelIds"] == .array([.string(channelID)]))
                #expect(try await client.send(.get, "/v1/apps/com.example.game/channels?source=x", key: key).status == .unprocessableContent)

                let shown = try await client.send(.get, "/v1/apps/com.example.game/channels/\(encoded)", key: key)
                #expect(shown.status == .ok)
                #expect(shown.json["storagePolicy"]?.stringValue == "noStorage")
                #expect(shown.json["state"]?.stringValue == "active")

                _ = try await client.send(
                    .put,
                    "/v1/apps/com.example.game/activities/act-1",
                    key: key,
                    body: #"{"attributesType": "T", "channelId": "\#(channelID)"}"#
                )
                let followed = try await client.send(.delete, "/v1/apps/com.example.game/channels/\(encoded)", key: key)
                #expect(followed.status == .conflict)
                let forced = try await client.send(.delete, "/v1/apps/com.example.game/channels/\(encoded)?force=true", key: key)
                #expect(forced.status == .ok, "\(forced.text)")
                #expect(forced.json["state"]?.stringValue == "retired")
                let gone = try await client.send(.get, "/v1/apps/com.example.game/channels?source=apns", key: key)
                #expect(gone.json["channelIds"] == .array([]))
            }
        }
    }

    @Test func badChannelRequestsAreRefused() async throws {
        try await APIFixture.with("channels_bad") { fixture, client in
            let key = fixture.key(.operator)
            let policy = try await client.send(.post, "/v1/apps/com.example.game/channels", key: key, body: #"{"storagePolicy": 1}"#)
            #expect(policy.status == .badRequest)
            #expect(policy.errorField == "storagePolicy")
            let name = try await client.send(.post, "/v1/apps/com.example.game/channels", key: key, body: #"{"storagePolicy": "some"}"#)
            #expect(name.status == .unprocessableContent)
            let encoding = try await client.send(.get, "/v1/apps/com.example.game/channels/abc%G1", key: key)
            #expect(encoding.status == .badRequest)
            #expect(encoding.errorField == "channelId")
            let unencodedSlash = try await client.send(.get, "/v1/apps/com.example.game/channels/ab/cd==", key: key)
            #expect(unencodedSlash.status == .notFound)
            let force = try await client.send(.delete, "/v1/apps/com.example.game/channels/abc?force=yes", key: key)
            #expect(force.status == .unprocessableContent)
            #expect(try await fixture.count("channels") == 0)
        }
    }
}
