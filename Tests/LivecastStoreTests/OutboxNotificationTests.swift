import Foundation
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

    /// An update held for the next second (it came in the same second as the one before it, which was sent) says
    /// when it is due instead of waking a worker at once.
    @Test func anUpdateHeldForLaterNotifiesWhenItIsDue() async throws {
        try await StoreFixture.with("outbox_notification_held") { fixture in
            _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
                .init(appID: fixture.appID, activityKey: "order-1", attributesType: "OrderAttributes", pushToken: "aa01")
            )
            let updates = ActivityUpdates(client: fixture.client, logger: fixture.logger)
            // Far enough ahead that a slow machine still accepts the second update before it is due.
            let timestamp = Int(Date().timeIntervalSince1970) + 30
            func update(_ eta: Int) async throws {
                _ = try await updates.accept(
                    .init(
                        appID: fixture.appID,
                        activityKey: "order-1",
                        event: .update,
                        contentState: try RawJSON(validating: #"{"eta":\#(eta)}"#),
                        timestamp: timestamp
                    )
                )
            }
            let (payloads, accepted) = try await fixture.client.withConnection { connection in
                try await connection.listen(on: OutboxNotification.channel) { notifications in
                    try await update(1)
                    // Sent, as a dispatcher would: the next update with its timestamp goes out a second later.
                    try await fixture.client.query("UPDATE updates SET status = 'sent', completed_at = now() WHERE status = 'pending'")
                    let before = Date().timeIntervalSince1970
                    try await update(2)
                    let after = Date().timeIntervalSince1970
                    var payloads: [OutboxNotification.Payload?] = []
                    for try await notification in notifications {
                        payloads.append(OutboxNotification.Payload(notification.payload))
                        if payloads.count == 2 { break }
                    }
                    return (payloads, (before: before, after: after))
                }
            }
            #expect(payloads.first == .due(.activity))
            guard case .held(.activity, let dueIn)?? = payloads.last else {
                Issue.record("the held update's notification: \(payloads)")
                return
            }
            // Held until `timestamp + 1`: due that long after its transaction began, while `update(2)` ran.
            let due = Double(timestamp + 1)
            let seconds = Double(dueIn.components.seconds) + Double(dueIn.components.attoseconds) / 1e18
            #expect(seconds > due - accepted.after - 0.1 && seconds <= due - accepted.before + 0.1, "due in \(dueIn)")
        }
    }

    @Test func payloadsAreReadAndUnknownOnesAreNot() {
        #expect(OutboxNotification.Payload("activity") == .due(.activity))
        #expect(OutboxNotification.Payload("feed") == .due(.feed))
        #expect(OutboxNotification.Payload("activity in 640") == .held(.activity, dueIn: .milliseconds(640)))
        #expect(OutboxNotification.Payload("feed in 0") == .held(.feed, dueIn: .zero))
        for unknown in ["", "activities", "activity in", "activity in -5", "activity in 1.5", "channel in 10", "feed at 10"] {
            #expect(OutboxNotification.Payload(unknown) == nil, "\(unknown)")
        }
    }
}
