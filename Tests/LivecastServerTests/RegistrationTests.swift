import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import Testing

/// Push-to-start tokens and activities.
@Suite struct RegistrationTests {
    private let tokenPath = "/v1/apps/com.example.game/push-to-start-tokens/device-1/GameAttributes"

    @Test func pushToStartTokensAreCreatedRotatedAndDeleted() async throws {
        try await APIFixture.with("reg_tokens") { fixture, client in
            let key = fixture.key(.backend)
            let created = try await client.send(.put, self.tokenPath, key: key, body: #"{"token": "AABB", "userId": "u1", "osVersion": "18.2"}"#)
            #expect(created.status == .created)
            #expect(created.json["result"]?.stringValue == "created")
            let same = try await client.send(.put, self.tokenPath, key: key, body: #"{"token": "aabb"}"#)
            #expect(same.json["result"]?.stringValue == "unchanged")
            let rotated = try await client.send(.put, self.tokenPath, key: key, body: #"{"token": "ccdd", "frequentUpdatesEnabled": false}"#)
            #expect(rotated.status == .ok)
            #expect(rotated.json["result"]?.stringValue == "rotated")
            let rows = try await fixture.store.rows(device: "device-1")
            #expect(rows.map(\.token) == ["aabb", "ccdd"])
            #expect(rows.map(\.live) == [false, true])
            #expect(try await client.send(.delete, self.tokenPath, key: key).status == .noContent)
            #expect(try await client.send(.delete, self.tokenPath, key: key).status == .notFound)
        }
    }

    @Test func percentEncodedPathParametersAreDecoded() async throws {
        try await APIFixture.with("reg_encoded") { fixture, client in
            let response = try await client.send(
                .put,
                "/v1/apps/com.example.game/push-to-start-tokens/device%2F2%20x/GameAttributes",
                key: fixture.key(.backend),
                body: #"{"token": "ab"}"#
            )
            #expect(response.status == .created)
            #expect(try await fixture.store.rows(device: "device/2 x").count == 1)
            let broken = try await client.send(
                .put,
                "/v1/apps/com.example.game/push-to-start-tokens/dev%ZZ/GameAttributes",
                key: fixture.key(.backend),
                body: #"{"token": "ab"}"#
            )
            #expect(broken.status == .badRequest)
            #expect(broken.errorField == "deviceId")
        }
    }

    @Test func badTokenRequestsAreRefusedWithoutWriting() async throws {
        try await APIFixture.with("reg_tokens_bad") { fixture, client in
            let cases: [(String, Int, String?, String)] = [
                (#"{"token": "xyz"}"#, 422, "token", "invalid"),
                (#"{"token": "abc"}"#, 422, "token", "invalid"),
                (#"{"token": 12}"#, 400, "token", "malformed_request"),
                (#"{"userId": "u"}"#, 400, "token", "malformed_request"),
                (#"{"token": null}"#, 400, "token", "malformed_request"),
                (#"{"token": "aa", "frequentUpdatesEnabled": "yes"}"#, 400, "frequentUpdatesEnabled", "malformed_request"),
                (#"{"token": "aa""#, 400, nil, "malformed_request"),
                (#"["aa"]"#, 400, nil, "malformed_request"),
                ("", 400, nil, "malformed_request"),
                (#"{"token": "aa", "userId": "\#(String(repeating: "u", count: 70_000))"}"#, 413, nil, "payload_too_large"),
            ]
            for (body, status, field, code) in cases {
                let response = try await client.send(.put, self.tokenPath, key: fixture.key(.backend), body: body)
                #expect(response.status.code == status, "\(body.prefix(60)): \(response.text)")
                #expect(response.errorCode == code, "\(body.prefix(60))")
                #expect(response.errorField == field, "\(body.prefix(60))")
            }
            #expect(try await fixture.count("push_to_start_tokens") == 0)
        }
    }

    @Test func activitiesRegisterRotateAndEnd() async throws {
        try await APIFixture.with("reg_activities") { fixture, client in
            let key = fixture.key(.backend)
            let path = "/v1/apps/com.example.game/activities/act-1"
            let created = try await client.send(
                .put,
                path,
                key: key,
                body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1", "deviceId": "d1"}"#
            )
            #expect(created.status == .created)
            let rotated = try await client.send(.put, path, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "b2b2"}"#)
            #expect(rotated.json["result"]?.stringValue == "tokenRotated")
            let wrongType = try await client.send(.put, path, key: key, body: #"{"attributesType": "Other", "pushToken": "b2b2"}"#)
            #expect(wrongType.status == .conflict)
            #expect(wrongType.errorField == "attributesType")
            let noFeed = try await client.send(
                .put,
                "/v1/apps/com.example.game/activities/act-2",
                key: key,
                body: #"{"attributesType": "GameAttributes", "feed": "nope"}"#
            )
            #expect(noFeed.status == .notFound)
            #expect(noFeed.errorField == "feed")
            let both = try await client.send(
                .put,
                "/v1/apps/com.example.game/activities/act-3",
                key: key,
                body: #"{"attributesType": "GameAttributes", "pushToken": "c3", "channelId": "x"}"#
            )
            #expect(both.status == .unprocessableContent)
            #expect(try await client.send(.delete, path, key: key).status == .noContent)
            let afterEnd = try await client.send(.put, path, key: key, body: #"{"attributesType": "GameAttributes", "pushToken": "d4d4"}"#)
            #expect(afterEnd.status == .conflict)
            #expect(try await fixture.count("activities") == 1)
            #expect(try await fixture.count("activity_tokens") == 2)
        }
    }
}
