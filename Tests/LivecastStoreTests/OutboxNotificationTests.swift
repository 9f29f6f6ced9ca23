import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The outbox's notification says what a transaction added, so dispatchers wake only a worker that takes it.
@Suite struct OutboxNotificationTests {
    @Test func anActivityUpdateNotifiesActivityAndAFeedUpdateFeed() async throws {
        try await StoreFixture.with("outbox_notification_kinds") { fixture in
            _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
                .init(appID: fixture.appID, activityKey: "order-1", attributesType: "OrderAttributes", pushToken: "aa01")
            )
            _ = try await Feeds(client: fixture.client, logger: fixture.logger).put(
                .init(appID: fixture.appID, feedKey: "game-1", attributesType: "GameAttributes", attributes: try RawJSON(validating: "{}"))
            )
            let payloads = try await fixture.client.withConnection { connection in
                try await connection.listen(on: OutboxNotification.channel) { notifications in
                    _ = try await ActivityUpdates(client: fixture.client, logger: fixture.logger).accept(
                        .init(appID: fixture.appID, activityKey: "order-1", event: .update, contentState: try RawJSON(validating: #"{"eta":5}"#))
                    )
                    _ = try await FeedUpdates(client: fixture.client, logger: fixture.logger).accept(
                        .init(appID: fixture.appID, feedKey: "game-1", event: .update, contentState: try RawJSON(validating: #"{"home":1}"#))
                    )
                    var payloads: [String] = []
                    for try await notification in notifications {
                        payloads.append(notification.payload)
                        if payloads.count == 2 { break }
                    }
                    return payloads
                }
            }
            #expect(payloads.map(OutboxNotification.Kind.init(rawValue:)) == [.activity, .feed])
        }
    }
}
