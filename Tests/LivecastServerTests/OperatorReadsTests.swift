import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import LivecastTesting
import Testing

@testable import LivecastServer

/// The reads an operator needs, through the router: feeds in pages with their last update, a feed's history, a
/// device's push-to-start tokens.
@Suite struct OperatorReadsTests {
    @Test func feedsComeInPagesWithTheirLastUpdateAndAFeedsHistoryNewestFirst() async throws {
        try await APIFixture.with("reads_feeds") { fixture, client in
            let app = "/v1/apps/com.example.game"
            let operatorKey = fixture.key(.operator)
            for feed in ["game-a", "game-b", "game-c"] {
                let created = try await client.send(
                    .put,
                    "\(app)/feeds/\(feed)",
                    key: operatorKey,
                    body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
                )
                #expect(created.status == .created, "\(created.text)")
            }
            let now = Int(Date().timeIntervalSince1970)
            var updateIDs: [Int] = []
            for (offset, score) in [0, 1, 2].enumerated() {
                let update = try await client.send(
                    .post,
                    "\(app)/feeds/game-b/updates",
                    key: fixture.key(.backend),
                    body: #"{"contentState": {"home": \#(score)}, "timestamp": \#(now - 10 + offset)}"#
                )
                #expect(update.status == .accepted, "\(update.text)")
                updateIDs.append(try #require(update.json["updateId"]?.intValue))
            }

            let first = try await client.send(.get, "\(app)/feeds?limit=2", key: operatorKey)
            #expect(first.status == .ok, "\(first.text)")
            #expect(first.json["feeds"].items.map { $0["feedKey"]?.stringValue } == ["game-a", "game-b"])
            #expect(first.json["next"]?.stringValue == "game-b")
            let feedB = first.json["feeds"].items[1]
            #expect(feedB["lastUpdate"]?["updateId"]?.intValue == updateIDs.last)
            #expect(feedB["lastUpdate"]?["status"]?.stringValue == "pending" && feedB["lastUpdate"]?["event"]?.stringValue == "update")
            #expect(first.json["feeds"].items[0]["lastUpdate"] == nil)
            let second = try await client.send(.get, "\(app)/feeds?limit=2&after=game-b", key: operatorKey)
            #expect(second.json["feeds"].items.map { $0["feedKey"]?.stringValue } == ["game-c"])
            #expect(second.json["next"] == nil, "\(second.text)")

            let history = try await client.send(.get, "\(app)/feeds/game-b/updates?limit=2", key: operatorKey)
            #expect(history.status == .ok, "\(history.text)")
            let newest = history.json["updates"].items
            #expect(newest.map { $0["updateId"]?.intValue } == [updateIDs[2], updateIDs[1]])
            #expect(newest.first?["timestamp"]?.intValue == now - 8)
            #expect(newest.first?["status"]?.stringValue == "pending")
            let next = try #require(history.json["next"]?.intValue)
            let older = try await client.send(.get, "\(app)/feeds/game-b/updates?limit=2&before=\(next)", key: operatorKey)
            #expect(older.json["updates"].items.map { $0["updateId"]?.intValue } == [updateIDs[0]])
            #expect(older.json["next"] == nil)
            let empty = try await client.send(.get, "\(app)/feeds/game-a/updates", key: operatorKey)
            #expect(empty.status == .ok && empty.json["updates"].items.isEmpty)

            let unknown = try await client.send(.get, "\(app)/feeds/none/updates", key: operatorKey)
            #expect(unknown.status == .notFound && unknown.errorField == "feedKey")
            let backendOnly = try await client.send(.get, "\(app)/feeds", key: fixture.key(.backend))
            #expect(backendOnly.status == .forbidden)
            let otherApp = try await client.send(.get, "/v1/apps/com.example.other/feeds", key: fixture.otherKey)
            #expect(otherApp.status == .ok && otherApp.json["feeds"].items.isEmpty, "\(otherApp.text)")
            for (query, field) in [("feeds?limit=0", "limit"), ("feeds?after=", "after"), ("feeds/game-b/updates?before=0", "before")] {
                let refused = try await client.send(.get, "\(app)/\(query)", key: operatorKey)
                #expect(refused.status.code == 422 && refused.errorField == field, "\(query): \(refused.text)")
            }
        }
    }

    @Test func aDevicesTokensAreListedLiveFirstWithWhyTheOthersWereInvalidated() async throws {
        try await APIFixture.with("reads_device") { fixture, client in
            let app = "/v1/apps/com.example.game"
            let backend = fixture.key(.backend)
            for token in ["aa01", "aa02"] {
                let registered = try await client.send(
                    .put,
                    "\(app)/push-to-start-tokens/phone-1/GameAttributes",
                    key: backend,
                    body: #"{"token": "\#(token)", "osVersion": "17.5"}"#
                )
                #expect(registered.status.code < 300, "\(registered.text)")
            }
            _ = try await client.send(.put, "\(app)/push-to-start-tokens/phone-1/DeliveryAttributes", key: backend, body: #"{"token": "bb01"}"#)

            let device = try await client.send(.get, "\(app)/push-to-start-tokens/phone-1", key: backend)
            #expect(device.status == .ok, "\(device.text)")
            let tokens = device.json["tokens"].items
            #expect(tokens.map { $0["token"]?.stringValue } == ["bb01", "aa02", "aa01"], "\(device.text)")
            #expect(tokens.map { $0["live"] } == [.bool(true), .bool(true), .bool(false)])
            #expect(tokens[2]["invalidationReason"]?.stringValue == "rotated")
            #expect(tokens[1]["osVersion"]?.stringValue == "17.5")

            let unknown = try await client.send(.get, "\(app)/push-to-start-tokens/phone-9", key: backend)
            #expect(unknown.status == .notFound && unknown.errorField == "deviceId")
            let otherApp = try await client.send(.get, "/v1/apps/com.example.other/push-to-start-tokens/phone-1", key: fixture.otherKey)
            #expect(otherApp.status == .notFound)
        }
    }
}
