import Foundation
import HTTPTypes
import HummingbirdTesting
import LivecastCore
import LivecastStore
import Testing

@testable import LivecastServer

/// An activity the app scheduled to start later (iOS 26's `pending`) is reported with `"pending": true`: it is kept
/// `starting`, so the feed's starts leave its device out, until the app reports it again without the flag.
@Suite struct PendingActivityTests {
    private static let app = "/v1/apps/com.example.game"

    @Test func aPendingActivityStaysStartingUntilItIsReportedRunning() async throws {
        try await APIFixture.with("pending_activity") { fixture, client in
            let feed = try await client.send(
                .put,
                "\(Self.app)/feeds/game-1",
                key: fixture.key(.operator),
                body: #"{"attributesType": "GameAttributes", "attributes": {}}"#
            )
            #expect(feed.status == .created)
            let key = fixture.key(.client)
            let phone: HTTPFields = [ClientKeys.deviceHeader: "phone-1"]
            let scheduled = #"{"attributesType": "GameAttributes", "feed": "game-1", "pushToken": "a1a1", "pending": true}"#
            #expect(try await client.send(.put, "\(Self.app)/activities/act-1", key: key, body: scheduled, headers: phone).status == .created)
            var record = try await client.send(.get, "\(Self.app)/activities/act-1", key: fixture.key(.backend))
            #expect(record.json["state"]?.stringValue == "starting")
            let running = #"{"attributesType": "GameAttributes", "feed": "game-1", "pushToken": "a1a1"}"#
            #expect(try await client.send(.put, "\(Self.app)/activities/act-1", key: key, body: running, headers: phone).status == .ok)
            record = try await client.send(.get, "\(Self.app)/activities/act-1", key: fixture.key(.backend))
            #expect(record.json["state"]?.stringValue == "active")
            let refused = try await client.send(
                .put,
                "\(Self.app)/activities/act-2",
                key: key,
                body: #"{"attributesType": "GameAttributes", "pending": "yes"}"#,
                headers: phone
            )
            #expect(refused.status == .badRequest)
            #expect(refused.json["error"]?["field"]?.stringValue == "pending")
        }
    }
}
