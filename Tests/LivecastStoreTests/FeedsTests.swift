import Foundation
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Feeds against a real PostgreSQL.
@Suite struct FeedsTests {
    @Test func putCreatesThenUpdatesAndGetCountsFollowers() async throws {
        try await StoreFixture.with("feeds_put") { fixture in
            let feeds = Feeds(client: fixture.client, logger: fixture.logger)
            let attributes = try RawJSON(validating: #"{"homeTeam": "Giants",  "awayTeam": "Dodgers"}"#)
            var definition = Feeds.Definition(
                appID: fixture.appID,
                feedKey: "game-4711",
                attributesType: "GameAttributes",
                attributes: attributes,
                staleAfter: .seconds(900)
            )
            let (created, isNew) = try await feeds.put(definition)
            #expect(isNew)
            #expect(created.state == .created)
            // Kept byte for byte, spacing included.
            #expect(created.attributes.text == #"{"homeTeam": "Giants",  "awayTeam": "Dodgers"}"#)
            definition.attributes = try RawJSON(validating: #"{"homeTeam": "Jets"}"#)
            let (updated, isNewAgain) = try await feeds.put(definition)
            #expect(!isNewAgain)
            #expect(updated.attributes.text == #"{"homeTeam": "Jets"}"#)

            let activities = Activities(client: fixture.client, logger: fixture.logger)
            for index in 0..<3 {
                _ = try await activities.register(
                    .init(
                        appID: fixture.appID,
                        activityKey: "a\(index)",
                        attributesType: "GameAttributes",
                        feedKey: "game-4711",
                        pushToken: String(format: "ab%02x", index)
                    )
                )
            }
            _ = try await activities.endedByDevice(appID: fixture.appID, activityKey: "a0")
            let read = try #require(try await feeds.get(appID: fixture.appID, feedKey: "game-4711"))
            #expect(read.tokenFollowers == 2)
            #expect(read.channelFollowers == 0)
            #expect(read.staleAfter == .seconds(900))
            #expect(try await feeds.get(appID: fixture.appID, feedKey: "no-such-feed") == nil)
        }
    }

    @Test func conflictingDefinitionsAreRefused() async throws {
        try await StoreFixture.with("feeds_conflicts") { fixture in
            let feeds = Feeds(client: fixture.client, logger: fixture.logger)
            let attributes = try RawJSON(validating: #"{"order": "A1"}"#)
            _ = try await feeds.put(.init(appID: fixture.appID, feedKey: "delivery-1", attributesType: "DeliveryAttributes", attributes: attributes))
            await #expect(throws: StoreError(.conflict, "the feed's attributes type is DeliveryAttributes", field: "attributesType")) {
                try await feeds.put(.init(appID: fixture.appID, feedKey: "delivery-1", attributesType: "GameAttributes", attributes: attributes))
            }
            await #expect(throws: StoreError.self) {
                try await feeds.put(
                    .init(
                        appID: fixture.appID,
                        feedKey: "delivery-2",
                        attributesType: "DeliveryAttributes",
                        attributes: try RawJSON(validating: "[1]")
                    )
                )
            }
            try await fixture.client.query("UPDATE feeds SET state = 'active' WHERE feed_key = 'delivery-1'")
            await #expect(throws: StoreError.self) {
                try await feeds.put(
                    .init(
                        appID: fixture.appID,
                        feedKey: "delivery-1",
                        attributesType: "DeliveryAttributes",
                        attributes: try RawJSON(validating: #"{"order": "B2"}"#)
                    )
                )
            }
            // The same attributes again is fine once started (a retried PUT).
            _ = try await feeds.put(.init(appID: fixture.appID, feedKey: "delivery-1", attributesType: "DeliveryAttributes", attributes: attributes))
        }
    }
}
