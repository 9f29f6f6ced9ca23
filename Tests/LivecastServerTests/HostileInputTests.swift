import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import Testing

@testable import LivecastServer

/// Hostile or absurd input gets a 4xx in the API's error shape, naming the field, and writes nothing; the value at
/// each limit is still accepted (docs/ARCHITECTURE.md; the limits are ``InputLimits``'s and the OpenAPI document's).
@Suite struct HostileInputTests {
    private let app = "/v1/apps/com.example.game"

    @Test func aNULInAnyBodyStringIsRefusedWithoutWriting() async throws {
        try await APIFixture.with("hostile_nul_body") { fixture, client in
            let (backend, operatorKey) = (fixture.key(.backend), fixture.key(.operator))
            let feed = "\(self.app)/feeds/game-1"
            _ = try await client.send(.put, feed, key: operatorKey, body: #"{"attributesType": "GameAttributes", "attributes": {}}"#)
            let activity = "\(self.app)/activities/act-1"
            _ = try await client.send(.put, activity, key: backend, body: #"{"attributesType": "GameAttributes", "pushToken": "aa11"}"#)
            let now = Int(Date().timeIntervalSince1970)
            let cases: [(HTTPRequest.Method, String, String, String, String)] = [
                (.put, "\(self.app)/push-to-start-tokens/d1/GameAttributes", #"{"token": "aabb", "userId": "u\u0000"}"#, backend, "userId"),
                (.put, "\(self.app)/push-to-start-tokens/d1/GameAttributes", #"{"token": "aabb", "osVersion": "18\u0000"}"#, backend, "osVersion"),
                (.put, "\(self.app)/activities/act-2", #"{"attributesType": "Game\u0000Attributes"}"#, backend, "attributesType"),
                (.put, "\(self.app)/activities/act-2", #"{"attributesType": "GameAttributes", "deviceId": "\u0000"}"#, backend, "deviceId"),
                (
                    .put, "\(self.app)/feeds/game-2", #"{"attributesType": "GameAttributes", "attributes": {"home": "\u0000"}}"#, operatorKey,
                    "attributes"
                ),
                (.put, "\(self.app)/feeds/game-2", #"{"attributesType": "GameAttributes", "attributes": {"\u0000": 1}}"#, operatorKey, "attributes"),
                (.post, "\(self.app)/channels", #"{"storagePolicy": "noStorage", "feed": "game\u0000"}"#, operatorKey, "feed"),
                (.post, "\(activity)/updates", #"{"contentState": {"text": "goal\u0000"}, "timestamp": \#(now)}"#, backend, "contentState"),
                (.post, "\(activity)/updates", #"{"contentState": {}, "alert": {"title": "\u0000"}, "timestamp": \#(now)}"#, backend, "alert"),
                (.post, "\(activity)/end", #"{"contentState": {"a": ["\u0000"]}, "timestamp": \#(now)}"#, backend, "contentState"),
                (
                    .post, "\(feed)/start", #"{"contentState": {}, "alert": {"title": "x"}, "audience": {"deviceIds": ["d\u0000"]}}"#, backend,
                    "audience"
                ),
                (.post, "\(feed)/updates", #"{"contentState": {"s": "\u0000"}}"#, backend, "contentState"),
            ]
            for (method, path, body, key, field) in cases {
                Self.expectRefused(try await client.send(method, path, key: key, body: body), 422, field: field, body)
            }
            #expect(try await fixture.count("push_to_start_tokens") == 0)
            #expect(try await fixture.count("activities") == 1)
            #expect(try await fixture.count("feeds") == 1)
            #expect(try await fixture.count("channels") == 0)
            #expect(try await fixture.count("updates") == 0)
            // A backslash followed by the text `u0000` is no NUL.
            let literal = try await client.send(
                .post,
                "\(activity)/updates",
                key: backend,
                body: #"{"contentState": {"path": "C:\\u0000"}, "timestamp": \#(now)}"#
            )
            #expect(literal.status == .accepted, "\(literal.text)")
        }
    }

    /// Through a real socket, as `livecast serve` gets them.
    @Test func controlCharactersInPathSegmentsAreRefusedWithoutWriting() async throws {
        try await APIFixture.with("hostile_nul_path", testing: .live) { fixture, client in
            let (backend, operatorKey) = (fixture.key(.backend), fixture.key(.operator))
            let feedBody = #"{"attributesType": "GameAttributes", "attributes": {}}"#
            let cases: [(HTTPRequest.Method, String, String, String, String)] = [
                (.put, "/v1/apps/com.example.game%00/feeds/game-1", feedBody, operatorKey, "bundleId"),
                (.put, "\(self.app)/feeds/game%00", feedBody, operatorKey, "feedKey"),
                (.put, "\(self.app)/feeds/game%0A1", feedBody, operatorKey, "feedKey"),
                (.put, "\(self.app)/feeds/game%7F", feedBody, operatorKey, "feedKey"),
                (.put, "\(self.app)/push-to-start-tokens/d%00/GameAttributes", #"{"token": "aa"}"#, backend, "deviceId"),
                (.put, "\(self.app)/push-to-start-tokens/d1/Game%1FAttributes", #"{"token": "aa"}"#, backend, "attributesType"),
                (.put, "\(self.app)/activities/act%00", #"{"attributesType": "GameAttributes"}"#, backend, "activityId"),
                (.post, "\(self.app)/activities/act%00/updates", #"{"contentState": {}}"#, backend, "activityId"),
                (.post, "\(self.app)/feeds/game%00/updates", #"{"contentState": {}}"#, backend, "feedKey"),
                (.delete, "\(self.app)/push-to-start-tokens/d%00/GameAttributes", "", backend, "deviceId"),
                (.delete, "\(self.app)/activities/act%00", "", backend, "activityId"),
                (.get, "\(self.app)/feeds/game%00", "", operatorKey, "feedKey"),
                (.get, "\(self.app)/channels/abc%00", "", operatorKey, "channelId"),
            ]
            for (method, path, body, key, field) in cases {
                let response = try await client.send(method, path, key: key, body: body.isEmpty ? nil : body)
                Self.expectRefused(response, 422, field: field, path)
            }
            for table in ["feeds", "push_to_start_tokens", "activities", "updates"] {
                #expect(try await fixture.count(table) == 0, "\(table)")
            }
        }
    }

    @Test func identifiersAreRefusedOverTheirLimitAndAcceptedAtIt() async throws {
        try await APIFixture.with("hostile_long_ids") { fixture, client in
            let (backend, operatorKey) = (fixture.key(.backend), fixture.key(.operator))
            let (id128, id129) = (String(repeating: "k", count: 128), String(repeating: "k", count: 129))
            let feedBody = #"{"attributesType": "GameAttributes", "attributes": {}}"#
            let refused: [(HTTPRequest.Method, String, String, String, String)] = [
                (.put, "/v1/apps/\(String(repeating: "b", count: 256))/feeds/game-1", feedBody, operatorKey, "bundleId"),
                (.put, "\(self.app)/feeds/\(String(repeating: "f", count: 3000))", feedBody, operatorKey, "feedKey"),
                (.put, "\(self.app)/feeds/\(id129)", feedBody, operatorKey, "feedKey"),
                (.put, "\(self.app)/feeds/game-1", #"{"attributesType": "\#(id129)", "attributes": {}}"#, operatorKey, "attributesType"),
                (.put, "\(self.app)/push-to-start-tokens/\(String(repeating: "d", count: 3000))/T", #"{"token": "aa"}"#, backend, "deviceId"),
                (.put, "\(self.app)/push-to-start-tokens/d1/\(id129)", #"{"token": "aa"}"#, backend, "attributesType"),
                (.put, "\(self.app)/push-to-start-tokens/d1/T", #"{"token": "aa", "userId": "\#(id129)"}"#, backend, "userId"),
                (
                    .put, "\(self.app)/push-to-start-tokens/d1/T", #"{"token": "aa", "osVersion": "\#(String(repeating: "1", count: 33))"}"#, backend,
                    "osVersion"
                ),
                (.put, "\(self.app)/activities/\(id129)", #"{"attributesType": "T"}"#, backend, "activityId"),
                (.put, "\(self.app)/activities/a1", #"{"attributesType": "T", "deviceId": "\#(id129)"}"#, backend, "deviceId"),
                (.put, "\(self.app)/activities/a1", #"{"attributesType": "T", "feed": "\#(id129)"}"#, backend, "feed"),
                (.put, "\(self.app)/activities/a1", #"{"attributesType": "T", "channelId": "\#(id129)"}"#, backend, "channelId"),
                (
                    .post, "\(self.app)/feeds/game-1/start",
                    #"{"contentState": {}, "alert": {"title": "x"}, "audience": {"userIds": ["\#(id129)"]}}"#, backend, "audience.userIds"
                ),
            ]
            for (method, path, body, key, field) in refused {
                Self.expectRefused(
                    try await client.send(method, path, key: key, body: body),
                    422,
                    field: field,
                    "\(path.prefix(80)) \(body.prefix(80))"
                )
            }
            for table in ["feeds", "push_to_start_tokens", "activities", "updates"] {
                #expect(try await fixture.count(table) == 0, "\(table)")
            }
            // At the limits.
            let longBundle = try await client.send(.get, "/v1/apps/\(String(repeating: "b", count: 255))", key: fixture.key(.admin))
            #expect(longBundle.status == .notFound, "a 255-byte bundle id is looked up: \(longBundle.text)")
            let feed = try await client.send(
                .put,
                "\(self.app)/feeds/\(id128)",
                key: operatorKey,
                body: #"{"attributesType": "\#(id128)", "attributes": {}}"#
            )
            #expect(feed.status == .created, "\(feed.text)")
            let token = try await client.send(
                .put,
                "\(self.app)/push-to-start-tokens/\(id128)/\(id128)",
                key: backend,
                body: #"{"token": "aa", "userId": "\#(id128)", "osVersion": "\#(String(repeating: "1", count: 32))"}"#
            )
            #expect(token.status == .created, "\(token.text)")
            let activity = try await client.send(
                .put,
                "\(self.app)/activities/\(id128)",
                key: backend,
                body: #"{"attributesType": "\#(id128)", "feed": "\#(id128)", "deviceId": "\#(id128)", "userId": "\#(id128)"}"#
            )
            #expect(activity.status == .created, "\(activity.text)")
        }
    }

    @Test func idempotencyKeysAreCountedInBytes() async throws {
        try await APIFixture.with("hostile_idempotency") { fixture, client in
            let backend = fixture.key(.backend)
            let activity = "\(self.app)/activities/act-1"
            _ = try await client.send(.put, activity, key: backend, body: #"{"attributesType": "GameAttributes", "pushToken": "aa11"}"#)
            // 101 characters, 202 bytes.
            let over = try await client.send(
                .post,
                "\(activity)/updates",
                key: backend,
                body: #"{"contentState": {}}"#,
                headers: [.idempotencyKey: String(repeating: "é", count: 101)]
            )
            Self.expectRefused(over, 422, field: "Idempotency-Key", "202-byte key")
            #expect(try await fixture.count("updates") == 0)
            let atLimit = try await client.send(
                .post,
                "\(activity)/updates",
                key: backend,
                body: #"{"contentState": {}}"#,
                headers: [.idempotencyKey: String(repeating: "é", count: 100)]
            )
            #expect(atLimit.status == .accepted, "\(atLimit.text)")
        }
    }

    @Test func tokensAreHexOfAtMost200Digits() async throws {
        try await APIFixture.with("hostile_tokens") { fixture, client in
            let backend = fixture.key(.backend)
            let random6000 = (0..<3000).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
            let digits202 = String(repeating: "ab", count: 101)
            for token in [random6000, digits202] {
                let start = try await client.send(.put, "\(self.app)/push-to-start-tokens/d1/T", key: backend, body: #"{"token": "\#(token)"}"#)
                Self.expectRefused(start, 422, field: "token", "\(token.count) digits")
                let update = try await client.send(
                    .put,
                    "\(self.app)/activities/a1",
                    key: backend,
                    body: #"{"attributesType": "T", "pushToken": "\#(token)"}"#
                )
                Self.expectRefused(update, 422, field: "pushToken", "\(token.count) digits")
            }
            #expect(try await fixture.count("push_to_start_tokens") == 0)
            #expect(try await fixture.count("activities") == 0)
            let digits200 = String(random6000.prefix(200))
            let start = try await client.send(.put, "\(self.app)/push-to-start-tokens/d1/T", key: backend, body: #"{"token": "\#(digits200)"}"#)
            #expect(start.status == .created, "\(start.text)")
            let update = try await client.send(
                .put,
                "\(self.app)/activities/a1",
                key: backend,
                body: #"{"attributesType": "T", "pushToken": "\#(String(random6000.suffix(200)))"}"#
            )
            #expect(update.status == .created, "\(update.text)")
        }
    }

    @Test func secondsAndDatesAreBoundedToAnActivitysLife() async throws {
        try await APIFixture.with("hostile_dates") { fixture, client in
            let (backend, operatorKey) = (fixture.key(.backend), fixture.key(.operator))
            let feed = "\(self.app)/feeds/game-1"
            let feedBody = { (extra: String) in #"{"attributesType": "GameAttributes", "attributes": {}, \#(extra)}"# }
            for (extra, field) in [
                (#""staleAfterSeconds": 99999999999"#, "staleAfterSeconds"),
                (#""staleAfterSeconds": 28801"#, "staleAfterSeconds"),
                (#""staleAfterSeconds": 0"#, "staleAfterSeconds"),
                (#""staleGraceSeconds": 99999999999"#, "staleGraceSeconds"),
                (#""staleGraceSeconds": 28801"#, "staleGraceSeconds"),
            ] {
                Self.expectRefused(try await client.send(.put, feed, key: operatorKey, body: feedBody(extra)), 422, field: field, extra)
            }
            #expect(try await fixture.count("feeds") == 0)
            let created = try await client.send(
                .put,
                feed,
                key: operatorKey,
                body: feedBody(#""staleAfterSeconds": 28800, "staleGraceSeconds": 28800"#)
            )
            #expect(created.status == .created, "\(created.text)")

            let activity = "\(self.app)/activities/act-1"
            _ = try await client.send(.put, activity, key: backend, body: #"{"attributesType": "GameAttributes", "pushToken": "aa11"}"#)
            let now = Int(Date().timeIntervalSince1970)
            let nearMax = Int.max - 10
            let refused: [(String, String, String)] = [
                ("\(activity)/updates", #"{"contentState": {}, "timestamp": \#(now), "staleDate": \#(nearMax)}"#, "staleDate"),
                ("\(activity)/updates", #"{"contentState": {}, "timestamp": \#(now), "staleDate": \#(now + 9 * 3600 + 1)}"#, "staleDate"),
                ("\(activity)/updates", #"{"contentState": {}, "staleDate": \#(now + 10 * 3600)}"#, "staleDate"),
                ("\(activity)/end", #"{"timestamp": \#(now), "dismissalDate": \#(nearMax)}"#, "dismissalDate"),
                ("\(activity)/end", #"{"timestamp": \#(now), "dismissalDate": \#(now + 24 * 3600 + 1)}"#, "dismissalDate"),
                ("\(activity)/end", #"{"timestamp": \#(now), "dismissalDate": -1}"#, "dismissalDate"),
                ("\(feed)/updates", #"{"contentState": {}, "timestamp": \#(now), "staleDate": \#(nearMax)}"#, "staleDate"),
                (
                    "\(feed)/start", #"{"contentState": {}, "alert": {"title": "x"}, "audience": {"everyone": true}, "staleDate": \#(nearMax)}"#,
                    "staleDate"
                ),
            ]
            for (path, body, field) in refused {
                Self.expectRefused(try await client.send(.post, path, key: backend, body: body), 422, field: field, body)
            }
            #expect(try await fixture.count("updates") == 0)
            let update = try await client.send(
                .post,
                "\(activity)/updates",
                key: backend,
                body: #"{"contentState": {}, "timestamp": \#(now), "staleDate": \#(now + 9 * 3600)}"#
            )
            #expect(update.status == .accepted, "\(update.text)")
            let end = try await client.send(
                .post,
                "\(activity)/end",
                key: backend,
                body: #"{"timestamp": \#(now + 1), "dismissalDate": \#(now + 1 + 24 * 3600)}"#
            )
            #expect(end.status == .accepted, "\(end.text)")
            #expect(end.json["dismissalDateClamped"] == .bool(true))
        }
    }

    /// A 4xx with the API's error shape: `code`, `message` and the field.
    static func expectRefused(
        _ response: TestResponse,
        _ status: Int,
        field: String?,
        _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.status.code == status, "\(label.prefix(100)): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorCode == "invalid", "\(label.prefix(100)): \(response.text)", sourceLocation: sourceLocation)
        #expect(response.json["error"]?["message"]?.stringValue?.isEmpty == false, sourceLocation: sourceLocation)
        #expect(response.errorField == field, "\(label.prefix(100)): \(response.text)", sourceLocation: sourceLocation)
    }
}
