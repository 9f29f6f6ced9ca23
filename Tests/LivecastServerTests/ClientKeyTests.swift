import APNsEmulator
import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing
import Yams

@testable import LivecastServer

/// Client keys (#47): the key an app embeds, which may only register its own device's push-to-start tokens and
/// activities, the device each request names in `Livecast-Device-ID`.
@Suite struct ClientKeyTests {
    private static let app = "/v1/apps/com.example.game"
    private static let phone: HTTPFields = [ClientKeys.deviceHeader: "phone-1"]

    /// The operations a client key may call: the contract LivecastKit depends on.
    private static let clientRoutes: Set<String> = [
        "PUT /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}",
        "DELETE /v1/apps/{bundleId}/push-to-start-tokens/{deviceId}/{attributesType}",
        "PUT /v1/apps/{bundleId}/activities/{activityId}",
        "DELETE /v1/apps/{bundleId}/activities/{activityId}",
        "POST /v1/apps/{bundleId}/activities/{activityId}/dismissed",
        "DELETE /v1/apps/{bundleId}/devices/{deviceId}",
    ]

    @Test func theDocumentMarksExactlyTheClientRoutes() throws {
        let url = Fixtures.repositoryRoot.appendingPathComponent("Sources/LivecastServer/Resources/openapi.yaml")
        let document = try #require(try Yams.load(yaml: String(contentsOf: url, encoding: .utf8)) as? [String: Any])
        let paths = try #require(document["paths"] as? [String: Any])
        var marked: Set<String> = []
        for (path, item) in paths {
            for (method, operation) in item as? [String: Any] ?? [:] {
                guard let roles = (operation as? [String: Any])?["x-livecast-roles"] as? [String], roles.contains("client") else { continue }
                marked.insert("\(method.uppercased()) \(path)")
                let parameters = (operation as? [String: Any])?["parameters"] as? [[String: Any]] ?? []
                #expect(parameters.contains { $0["$ref"] as? String == "#/components/parameters/deviceIdHeader" }, "\(method) \(path)")
            }
        }
        #expect(marked == Self.clientRoutes)
    }

    @Test func aClientKeyIsRefusedEveryOtherOperation() async throws {
        try await APIFixture.with("client_refused") { fixture, client in
            let routes = fixture.api.makeRouter().routes
            let open: Set<String> = ["GET /health", "GET /ready", "GET /openapi.yaml"]
            let refused = routes.map(\.description).filter { !Self.clientRoutes.contains($0) && !open.contains($0) }
            #expect(Set(routes.map(\.description)).isSuperset(of: Self.clientRoutes))
            #expect(refused.count > 20)
            let before = try await Self.rowCounts(fixture)
            for route in routes where refused.contains(route.description) {
                let path = Self.concrete(route.path)
                let body = route.method == .get || route.method == .delete ? nil : "{}"
                let response = try await client.send(route.method, path, key: fixture.key(.client), body: body, headers: Self.phone)
                #expect(response.status == .forbidden, "\(route): \(response.text)")
                #expect(response.errorCode == "forbidden", "\(route)")
                // Without the device header too: the role is refused first.
                let bare = try await client.send(route.method, path, key: fixture.key(.client), body: body)
                #expect(bare.status == .forbidden, "\(route) without Livecast-Device-ID")
            }
            #expect(try await Self.rowCounts(fixture) == before)
            // Another app's routes: 404, as for any key of another app.
            let other = try await client.send(
                .put,
                "/v1/apps/com.example.other/push-to-start-tokens/phone-1/GameAttributes",
                key: fixture.key(.client),
                body: #"{"token": "aabb"}"#,
                headers: Self.phone
            )
            #expect(other.status == .notFound)
            #expect(other.errorCode == "not_found")
        }
    }

    @Test func aClientKeyActsOnItsOwnDeviceOnly() async throws {
        try await APIFixture.with("client_scope") { fixture, client in
            let key = fixture.key(.client)
            let token = "\(Self.app)/push-to-start-tokens/phone-1/GameAttributes"
            let created = try await client.send(.put, token, key: key, body: #"{"token": "aabb"}"#, headers: Self.phone)
            #expect(created.status == .created, "\(created.text)")
            #expect(created.json["result"]?.stringValue == "created")
            let rotated = try await client.send(.put, token, key: key, body: #"{"token": "ccdd"}"#, headers: Self.phone)
            #expect(rotated.status == .ok)
            #expect(rotated.json["result"]?.stringValue == "rotated")

            // Another device's token: 404, written or deleted.
            let otherToken = "\(Self.app)/push-to-start-tokens/phone-2/GameAttributes"
            #expect(try await client.send(.put, otherToken, key: fixture.key(.backend), body: #"{"token": "eeff"}"#).status == .created)
            for (method, body) in [(HTTPRequest.Method.put, #"{"token": "0011"}"#), (.delete, nil)] {
                let response = try await client.send(method, otherToken, key: key, body: body, headers: Self.phone)
                #expect(response.status == .notFound, "\(method)")
                #expect(response.errorCode == "not_found")
                #expect(response.errorField == "deviceId")
            }
            #expect(try await fixture.store.rows(device: "phone-2").map(\.live) == [true])

            // The header: required for a client key, checked for any key.
            let missing = try await client.send(.put, token, key: key, body: #"{"token": "aabb"}"#)
            #expect(missing.status == .badRequest)
            #expect(missing.errorCode == "device_id_required")
            for invalid in ["", String(repeating: "x", count: 129)] {
                let response = try await client.send(.put, token, key: key, body: #"{"token": "aabb"}"#, headers: [ClientKeys.deviceHeader: invalid])
                #expect(response.status == .unprocessableContent, "\(invalid.count) bytes")
                #expect(response.errorCode == "invalid_device_id")
                let backend = try await client.send(.delete, otherToken, key: fixture.key(.backend), headers: [ClientKeys.deviceHeader: invalid])
                #expect(backend.errorCode == "invalid_device_id")
            }

            // Activities: a new one is the device's; another device's (or one with no device) is not found.
            let activity = "\(Self.app)/activities/act-1"
            let registered = try await client.send(
                .put,
                activity,
                key: key,
                body: #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#,
                headers: Self.phone
            )
            #expect(registered.status == .created, "\(registered.text)")
            #expect(try await Self.device(of: "act-1", fixture) == "phone-1")
            let rotatedToken = try await client.send(
                .put,
                activity,
                key: key,
                body: #"{"attributesType": "GameAttributes", "pushToken": "a2a2", "deviceId": "phone-1"}"#,
                headers: Self.phone
            )
            #expect(rotatedToken.json["result"]?.stringValue == "tokenRotated")
            let posing = try await client.send(
                .put,
                activity,
                key: key,
                body: #"{"attributesType": "GameAttributes", "deviceId": "phone-2"}"#,
                headers: Self.phone
            )
            #expect(posing.status == .unprocessableContent)
            #expect(posing.errorField == "deviceId")
            let body = #"{"attributesType": "GameAttributes", "deviceId": "phone-2"}"#
            #expect(try await client.send(.put, "\(Self.app)/activities/act-2", key: fixture.key(.backend), body: body).status == .created)
            let noDevice = #"{"attributesType": "GameAttributes"}"#
            #expect(try await client.send(.put, "\(Self.app)/activities/act-3", key: fixture.key(.backend), body: noDevice).status == .created)
            for other in ["act-2", "act-3"] {
                let path = "\(Self.app)/activities/\(other)"
                for (method, path, body) in [
                    (HTTPRequest.Method.put, path, #"{"attributesType": "GameAttributes", "pushToken": "b1b1"}"#),
                    (.delete, path, nil), (.post, "\(path)/dismissed", nil),
                ] {
                    let response = try await client.send(method, path, key: key, body: body, headers: Self.phone)
                    #expect(response.status == .notFound, "\(method) \(path)")
                    #expect(response.errorCode == "not_found")
                }
            }
            #expect(try await fixture.count("activities WHERE state = 'active'") == 1)
            #expect(try await fixture.count("activity_tokens WHERE token = 'b1b1'") == 0)

            // Unregistering another device: 404 for a client key, which a backend key may.
            #expect(try await client.send(.delete, "\(Self.app)/devices/phone-2", key: key, headers: Self.phone).status == .notFound)
            #expect(try await client.send(.delete, "\(Self.app)/devices/phone-2", key: fixture.key(.backend)).status == .noContent)
            #expect(try await fixture.store.rows(device: "phone-2").map(\.live) == [false])

            // The device ends its own activity.
            #expect(try await client.send(.delete, activity, key: key, headers: Self.phone).status == .noContent)
            #expect(try await client.send(.delete, activity, key: key, headers: Self.phone).status == .notFound)
        }
    }

    @Test func aDismissedActivityIsRecordedAndGetsNothingMore() async throws {
        try await APIFixture.with("client_dismissed") { fixture, client in
            let key = fixture.key(.client)
            let activity = "\(Self.app)/activities/act-1"
            let body = #"{"attributesType": "GameAttributes", "pushToken": "a1a1"}"#
            #expect(try await client.send(.put, activity, key: key, body: body, headers: Self.phone).status == .created)
            for _ in 0..<2 {
                let dismissed = try await client.send(.post, "\(activity)/dismissed", key: key, headers: Self.phone)
                #expect(dismissed.status == .noContent, "\(dismissed.text)")
            }
            let record = try await client.send(.get, activity, key: fixture.key(.backend))
            #expect(record.json["state"]?.stringValue == "dismissed")
            let timeline = record.json["timeline"].items
            #expect(timeline.last?["type"]?.stringValue == "dismissed", "\(record.text)")
            #expect(timeline.contains { $0["type"]?.stringValue == "tokenInvalidated" && $0["reason"]?.stringValue == "dismissed" }, "\(record.text)")
            #expect(try await fixture.count("activity_tokens WHERE invalidated_at IS NULL") == 0)

            let update = try await client.send(
                .post,
                "\(activity)/updates",
                key: fixture.key(.backend),
                body: #"{"contentState": {"home": 1}}"#
            )
            #expect(update.status == .conflict, "\(update.text)")
            #expect(update.errorCode == "activity_ended")
            #expect(try await fixture.count("updates") == 0)
            // Registering it again is refused: it has ended.
            #expect(try await client.send(.put, activity, key: key, body: body, headers: Self.phone).status == .conflict)

            // A backend key dismisses any device's activity; an unknown one is not found.
            let other = "\(Self.app)/activities/act-2"
            #expect(try await client.send(.put, other, key: fixture.key(.backend), body: #"{"attributesType": "GameAttributes"}"#).status == .created)
            #expect(try await client.send(.post, "\(other)/dismissed", key: fixture.key(.backend)).status == .noContent)
            let unknown = try await client.send(.post, "\(Self.app)/activities/none/dismissed", key: key, headers: Self.phone)
            #expect(unknown.status == .notFound)
            #expect(unknown.errorCode == "not_found")
        }
    }

    @Test func aFollowerDismissedOnItsDeviceGetsNoMoreOfItsFeed() async throws {
        try await APIFixture.withEmulator("client_dismissed_feed") { fixture, client, emulator, dispatcher in
            let feed = try await client.send(
                .put,
                "\(Self.app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {"home": "Giants"}}"#
            )
            #expect(feed.status == .created, "\(feed.text)")
            var devices: [String] = []
            for _ in 0..<2 {
                let device = try emulator.emulator.addDevice(
                    bundleID: EmulatorFixture.bundleID,
                    osVersion: "17.5",
                    pushToStartTokens: ["GameAttributes": ""]
                )
                let token = try #require(device.pushToStartTokens["GameAttributes"])
                let body = #"{"token": "\#(token)", "osVersion": "17.5"}"#
                try await Self.register("push-to-start-tokens/\(device.id)/GameAttributes", body, device: device.id, fixture, client)
                devices.append(device.id)
            }
            let start = try await client.send(
                .post,
                "\(Self.app)/feeds/game-1/start",
                key: fixture.key(.backend),
                body: #"{"contentState": {"home": 0}, "alert": {"title": "Kick-off"}, "audience": {"everyone": true}}"#
            )
            #expect(start.status == .accepted, "\(start.text)")
            #expect(try await dispatcher.drain() == 1)
            var activityIDs: [String] = []
            for device in devices {
                let activity = try #require(emulator.emulator.device(id: device)?.activities.first)
                let body = #"{"attributesType": "GameAttributes", "feed": "game-1", "pushToken": "\#(activity.updateToken ?? "")"}"#
                try await Self.register("activities/\(activity.id)", body, device: device, fixture, client)
                activityIDs.append(activity.id)
            }
            let dismissed = try await client.send(
                .post,
                "\(Self.app)/activities/\(activityIDs[0])/dismissed",
                key: fixture.key(.client),
                headers: [ClientKeys.deviceHeader: devices[0]]
            )
            #expect(dismissed.status == .noContent, "\(dismissed.text)")
            let applied = { (device: String) in emulator.emulator.device(id: device)?.activities.first?.appliedPushes ?? -1 }
            let before = devices.map(applied)
            let update = try await client.send(
                .post,
                "\(Self.app)/feeds/game-1/updates",
                key: fixture.key(.backend),
                body: #"{"contentState": {"home": 1}, "timestamp": \#(Int(Date().timeIntervalSince1970) + 5)}"#
            )
            #expect(update.status == .accepted, "\(update.text)")
            #expect(try await dispatcher.drain() == 1)
            let after = devices.map(applied)
            #expect(after[0] == before[0], "the dismissed activity got nothing")
            #expect(after[1] == before[1] + 1, "the other follower got the update")
        }
    }

    @Test func unregisteringADeviceInvalidatesItsTokensAndEndsItsActivities() async throws {
        try await APIFixture.with("client_unregister") { fixture, client in
            let key = fixture.key(.client)
            for (type, token) in [("GameAttributes", "aabb"), ("DeliveryAttributes", "ccdd")] {
                let path = "\(Self.app)/push-to-start-tokens/phone-1/\(type)"
                #expect(try await client.send(.put, path, key: key, body: #"{"token": "\#(token)"}"#, headers: Self.phone).status == .created)
            }
            for id in ["act-1", "act-2"] {
                let body = #"{"attributesType": "GameAttributes"}"#
                #expect(try await client.send(.put, "\(Self.app)/activities/\(id)", key: key, body: body, headers: Self.phone).status == .created)
            }
            #expect(try await client.send(.post, "\(Self.app)/activities/act-2/dismissed", key: key, headers: Self.phone).status == .noContent)
            for _ in 0..<2 {
                #expect(try await client.send(.delete, "\(Self.app)/devices/phone-1", key: key, headers: Self.phone).status == .noContent)
            }
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidated_at IS NULL") == 0)
            #expect(try await fixture.count("push_to_start_tokens WHERE invalidation_reason = 'deleted'") == 2)
            #expect(try await fixture.count("activities WHERE activity_key = 'act-1' AND state = 'ended'") == 1)
            #expect(try await fixture.count("activities WHERE activity_key = 'act-2' AND state = 'dismissed'") == 1)
            // The device may register again afterwards.
            let again = try await client.send(
                .put,
                "\(Self.app)/push-to-start-tokens/phone-1/GameAttributes",
                key: key,
                body: #"{"token": "aabb"}"#,
                headers: Self.phone
            )
            #expect(again.status == .ok || again.status == .created, "\(again.text)")
        }
    }

    @Test func eachDeviceHasItsCapOfTokensAndActivities() async throws {
        let configuration = LivecastAPI.Configuration(clientLimits: ClientLimits(pushToStartTokensPerDevice: 2, activitiesPerDevice: 2))
        try await APIFixture.with("client_caps", configuration: configuration) { fixture, client in
            let key = fixture.key(.client)
            let tokens = "\(Self.app)/push-to-start-tokens/phone-1"
            for (type, token) in [("A", "a1"), ("B", "b1")] {
                #expect(
                    try await client.send(.put, "\(tokens)/\(type)", key: key, body: #"{"token": "\#(token)"}"#, headers: Self.phone).status
                        == .created
                )
            }
            let third = try await client.send(.put, "\(tokens)/C", key: key, body: #"{"token": "c1"}"#, headers: Self.phone)
            #expect(third.status == .conflict)
            #expect(third.errorCode == "device_limit_reached")
            // A rotation of a type it holds is no new token; another device has its own cap; a backend key has none.
            #expect(try await client.send(.put, "\(tokens)/A", key: key, body: #"{"token": "a2"}"#, headers: Self.phone).status == .ok)
            let phone2: HTTPFields = [ClientKeys.deviceHeader: "phone-2"]
            let other = try await client.send(
                .put,
                "\(Self.app)/push-to-start-tokens/phone-2/C",
                key: key,
                body: #"{"token": "c2"}"#,
                headers: phone2
            )
            #expect(other.status == .created)
            #expect(try await client.send(.put, "\(tokens)/C", key: fixture.key(.backend), body: #"{"token": "c1"}"#).status == .created)

            let body = #"{"attributesType": "GameAttributes"}"#
            for id in ["act-1", "act-2"] {
                #expect(try await client.send(.put, "\(Self.app)/activities/\(id)", key: key, body: body, headers: Self.phone).status == .created)
            }
            let refused = try await client.send(.put, "\(Self.app)/activities/act-3", key: key, body: body, headers: Self.phone)
            #expect(refused.status == .conflict)
            #expect(refused.errorCode == "device_limit_reached")
            // Registering a running one again is fine, and an ended one makes room.
            #expect(try await client.send(.put, "\(Self.app)/activities/act-1", key: key, body: body, headers: Self.phone).status == .ok)
            #expect(try await client.send(.delete, "\(Self.app)/activities/act-1", key: key, headers: Self.phone).status == .noContent)
            #expect(try await client.send(.put, "\(Self.app)/activities/act-3", key: key, body: body, headers: Self.phone).status == .created)
            #expect(try await fixture.count("activities WHERE activity_key = 'act-3' AND device_id = 'phone-1'") == 1)
        }
    }

    @Test func eachDeviceHoldsItsCapsUnderParallelRequests() async throws {
        // A stranger sends a device's registrations all at once, hoping that each is counted before the others land.
        let configuration = LivecastAPI.Configuration(clientLimits: ClientLimits(pushToStartTokensPerDevice: 3, activitiesPerDevice: 3))
        try await APIFixture.with("client_caps_parallel", configuration: configuration) { fixture, client in
            let key = fixture.key(.client)
            let tokens = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                for type in 0..<24 {
                    group.addTask {
                        let path = "\(Self.app)/push-to-start-tokens/phone-1/Type\(type)"
                        let answer = try await client.send(
                            .put,
                            path,
                            key: key,
                            body: #"{"token": "\#(String(format: "%04x", type))"}"#,
                            headers: Self.phone
                        )
                        return (answer.status, answer.errorCode)
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(tokens.filter { $0.0 == .created }.count == 3, "\(tokens)")
            #expect(tokens.filter { $0.0 == .conflict && $0.1 == "device_limit_reached" }.count == 21, "\(tokens)")
            #expect(try await fixture.count("push_to_start_tokens WHERE device_id = 'phone-1' AND invalidated_at IS NULL") == 3)
            let activities = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for index in 0..<24 {
                    group.addTask {
                        let body = #"{"attributesType": "GameAttributes"}"#
                        return try await client.send(.put, "\(Self.app)/activities/act-\(index)", key: key, body: body, headers: Self.phone).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(activities.filter { $0 == .created }.count == 3, "\(activities)")
            #expect(try await fixture.count("activities WHERE device_id = 'phone-1' AND state IN ('starting', 'active')") == 3)
        }
    }

    @Test func aTokenFromANewDeviceIdMovesAndOneTokenServesSeveralTypes() async throws {
        // LivecastKit's reports after a reinstall or a reset store (the same token, a new device id), and of an app whose
        // attributes types share one push-to-start token: each succeeds; 409 is left for what never can.
        let configuration = LivecastAPI.Configuration(clientLimits: ClientLimits(pushToStartTokensPerDevice: 2))
        try await APIFixture.with("client_token_moves", configuration: configuration) { fixture, client in
            let key = fixture.key(.client)
            let put = { (device: String, type: String, token: String) in
                try await client.send(
                    .put,
                    "\(Self.app)/push-to-start-tokens/\(device)/\(type)",
                    key: key,
                    body: #"{"token": "\#(token)"}"#,
                    headers: [ClientKeys.deviceHeader: device]
                )
            }
            for type in ["GameAttributes", "OrderAttributes"] {
                let shared = try await put("phone-1", type, "aabb")
                #expect(shared.status == .created && shared.json["result"]?.stringValue == "created", "\(type): \(shared.text)")
            }
            let moved = try await put("phone-2", "GameAttributes", "aabb")
            #expect(moved.status == .ok && moved.json["result"]?.stringValue == "moved", "\(moved.text)")
            let old = try await client.send(.get, "\(Self.app)/push-to-start-tokens/phone-1", key: fixture.key(.backend))
            let oldTokens = old.json["tokens"].items
            #expect(oldTokens.allSatisfy { $0["live"] == .bool(false) }, "the old device id holds the token no more: \(old.text)")
            #expect(oldTokens.contains { $0["invalidationReason"]?.stringValue == "moved" }, "\(old.text)")
            #expect(try await put("phone-2", "OrderAttributes", "aabb").status == .created)
            #expect(try await fixture.count("push_to_start_tokens WHERE token = 'aabb' AND invalidated_at IS NULL AND device_id = 'phone-2'") == 2)
            // Past the device's cap: the one 409 left, and it says why.
            let full = try await put("phone-2", "DeliveryAttributes", "ccdd")
            #expect(full.status == .conflict && full.errorCode == "device_limit_reached", "\(full.text)")
            #expect(full.json["error"]?["message"]?.stringValue?.contains("delete some first") == true, "\(full.text)")
        }
    }

    @Test func eachDeviceIsRateLimitedAndTheKeyIsNot() async throws {
        // Three requests at once per device, then one per 1,000 s; the per-key limit is lower than the devices' sum.
        let configuration = LivecastAPI.Configuration(
            rateLimit: .init(ratePerSecond: 0.001, burst: 3),
            clientLimits: ClientLimits(perDevice: .init(ratePerSecond: 0.001, burst: 3))
        )
        try await APIFixture.with("client_rate", configuration: configuration) { fixture, client in
            let key = fixture.key(.client)
            let path = "\(Self.app)/activities/none"
            for _ in 0..<3 {
                #expect(try await client.send(.delete, path, key: key, headers: Self.phone).status == .notFound)
            }
            let limited = try await client.send(.delete, path, key: key, headers: Self.phone)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((900...1000).contains(retryAfter), "Retry-After: \(retryAfter)")
            // Another device, with the same key, past the key's own three.
            for device in ["phone-2", "phone-3"] {
                #expect(try await client.send(.delete, path, key: key, headers: [ClientKeys.deviceHeader: device]).status == .notFound)
            }
        }
    }

    @Test func eachAddressIsRateLimitedForClientKeys() async throws {
        let configuration = LivecastAPI.Configuration(
            trustedProxies: try TrustedProxies(parsing: "127.0.0.1/32, ::1"),
            clientLimits: ClientLimits(perAddress: .init(ratePerSecond: 0.001, burst: 3))
        )
        try await APIFixture.with("client_address_rate", configuration: configuration, testing: .live) { fixture, client in
            let key = fixture.key(.client)
            let path = "\(Self.app)/activities/none"
            let forwardedFor = HTTPField.Name("X-Forwarded-For")!
            for index in 0..<3 {
                let headers: HTTPFields = [ClientKeys.deviceHeader: "phone-\(index)", forwardedFor: "203.0.113.7"]
                #expect(try await client.send(.delete, path, key: key, headers: headers).status == .notFound)
            }
            let headers: HTTPFields = [ClientKeys.deviceHeader: "phone-9", forwardedFor: "203.0.113.7"]
            let limited = try await client.send(.delete, path, key: key, headers: headers)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.errorCode == "rate_limited")
            #expect(limited.headers[.retryAfter] != nil)
            // Another address; and other keys are not held to it.
            let another: HTTPFields = [ClientKeys.deviceHeader: "phone-9", forwardedFor: "198.51.100.9"]
            #expect(try await client.send(.delete, path, key: key, headers: another).status == .notFound)
            #expect(try await client.send(.delete, path, key: fixture.key(.backend), headers: headers).status == .notFound)
        }
    }

    @Test func clientKeysAreCreatedRotatedAndRevokedLikeOthers() async throws {
        try await APIFixture.with("client_rotation") { fixture, client in
            let admin = fixture.key(.admin)
            let path = "\(Self.app)/push-to-start-tokens/phone-1/GameAttributes"
            var keys: [(id: Int, key: String)] = []
            for _ in 0..<2 {
                let created = try await client.send(.post, "\(Self.app)/keys", key: admin, body: #"{"role": "client"}"#)
                #expect(created.status == .created, "\(created.text)")
                #expect(created.json["role"]?.stringValue == "client")
                keys.append((try #require(created.json["keyId"]?.intValue), try #require(created.json["key"]?.stringValue)))
            }
            // Both live at once while the new one ships.
            for (index, (_, key)) in keys.enumerated() {
                let response = try await client.send(.put, path, key: key, body: #"{"token": "aa0\#(index)"}"#, headers: Self.phone)
                #expect(response.status == .created || response.status == .ok, "\(response.text)")
            }
            let listed = try await client.send(.get, "\(Self.app)/keys", key: admin)
            #expect(listed.json["keys"].items.filter { $0["role"]?.stringValue == "client" }.count == 3)
            #expect(try await client.send(.delete, "\(Self.app)/keys/\(keys[0].id)", key: admin).status == .ok)
            let revoked = try await client.send(.put, path, key: keys[0].key, body: #"{"token": "aa00"}"#, headers: Self.phone)
            #expect(revoked.status == .unauthorized)
            #expect(revoked.errorCode == "unauthenticated")
            #expect(try await client.send(.put, path, key: keys[1].key, body: #"{"token": "aa02"}"#, headers: Self.phone).status == .ok)
            // A client key learns nothing of itself either, nor signs in to the console.
            #expect(try await client.send(.get, "/v1/key", key: keys[1].key).status == .forbidden)
        }
    }

    /// Registers a device's token or activity (`path` under the app) with the client key, as that device.
    private static func register(
        _ path: String,
        _ body: String,
        device: String,
        _ fixture: APIFixture,
        _ client: any TestClientProtocol
    ) async throws {
        let response = try await client.send(
            .put,
            "\(Self.app)/\(path)",
            key: fixture.key(.client),
            body: body,
            headers: [ClientKeys.deviceHeader: device]
        )
        #expect(response.status == .created, "\(path): \(response.text)")
    }

    /// A route's path with its parameters filled in.
    private static func concrete(_ template: String) -> String {
        let values = [
            "bundleId": "com.example.game", "deviceId": "phone-1", "attributesType": "GameAttributes", "activityId": "act-1",
            "feedKey": "game-1", "channelId": "channel-1", "keyId": "1", "updateId": "1", "deadLetterId": "1",
            "webhookId": "00000000-0000-4000-8000-000000000001",
        ]
        var path = template
        for (name, value) in values { path = path.replacingOccurrences(of: "{\(name)}", with: value) }
        #expect(!path.contains("{"), "\(template): a parameter without a value")
        return path
    }

    /// The rows of the tables a request could write.
    private static func rowCounts(_ fixture: APIFixture) async throws -> [Int] {
        var counts: [Int] = []
        for table in [
            "api_keys WHERE revoked_at IS NULL", "push_to_start_tokens", "activities", "feeds", "channels", "updates", "apps", "webhook_endpoints",
        ] {
            counts.append(try await fixture.count(table))
        }
        return counts
    }

    private static func device(of activity: String, _ fixture: APIFixture) async throws -> String? {
        let rows = try await fixture.client.query("SELECT device_id FROM activities WHERE activity_key = \(activity)")
        for try await device in rows.decode(String?.self) { return device }
        return nil
    }
}
