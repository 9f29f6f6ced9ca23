import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// A device drops push-to-starts over its budget while APNs answers 200, so Livecast keeps every device within it: a
/// start without room waits (highest relevance first) and goes out when the device has room, with the feed's latest
/// content, or is dropped and recorded when its feed ended meanwhile. Judged at the wire: the emulator's devices keep
/// a budget too, and the judge counts every start they drop.
@Suite struct StartBudgetTests {
    /// Livecast's budget in these tests: 5 starts in 10 s.
    private static let budget = StartBudget(starts: 5, window: .seconds(10))
    /// The devices' window: 5 starts in 6 s.
    private static let deviceWindow = 6

    private static func settings() -> Dispatcher.Settings {
        var settings = DispatchFixture.settings
        settings.startBudget = Self.budget
        return settings
    }

    /// Starts a feed for one device, with a relevance score, at `timestamp`.
    private func start(_ fixture: DispatchFixture, feed: String, device: String, relevance: Double, timestamp: Int) async throws -> AcceptedUpdate {
        _ = try await fixture.feed(feed)
        var request = FeedStarts.Request(
            appID: fixture.store.appID,
            feedKey: feed,
            audience: .devices([device]),
            contentState: try RawJSON(validating: #"{"home":0}"#),
            alert: .init(title: "Kick-off")
        )
        request.relevanceScore = relevance
        request.timestamp = timestamp
        return try await FeedStarts(client: fixture.store.client, logger: fixture.store.logger).start(request)
    }

    @Test func twentyStartsToOneDeviceNeverExceedItsBudgetAtTheWire() async throws {
        // The devices' window is shorter than Livecast's: a start reaches a device a little after Livecast spent the
        // budget for it (seconds later on a loaded machine), and must not look early to the device.
        try await DispatchFixture.with(
            "start_budget_twenty",
            emulator: { $0.pushToStartBudget = APNsEmulator.PushToStartBudget(starts: 5, window: Self.deviceWindow) }
        ) { fixture in
            let device = try await fixture.registeredDevice()
            let token = device.pushToStartTokens["GameAttributes"]!
            var starts: [(feed: String, update: AcceptedUpdate)] = []
            for index in 1...20 {
                let start = try await self.start(
                    fixture,
                    feed: "game-\(index)",
                    device: device.id,
                    relevance: Double(index),
                    timestamp: fixture.now - 100 + index
                )
                starts.append(("game-\(index)", start))
            }
            let dispatcher = fixture.dispatcher(Self.settings())
            _ = try await dispatcher.drain()
            #expect(fixture.shown(device.id).count == 5, "the first window's five")

            // The two least relevant feeds end before their device has room: their starts are dropped, not sent.
            for feed in ["game-6", "game-7"] {
                var end = FeedUpdates.Request(appID: fixture.store.appID, feedKey: feed, event: .end)
                end.content.dismissalDate = fixture.now
                _ = try await FeedUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(end)
            }
            try await eventually(within: .seconds(120), "every start sent or dropped") {
                _ = try await dispatcher.drain()
                return try await self.waiting(fixture) == 0
            }
            #expect(fixture.shown(device.id).count == 18)

            let startsAtTheWire = fixture.emulator.emulator.wireRecords.filter { $0.target == "device:\(token)" && $0.isAccepted }
            #expect(startsAtTheWire.count == 18)
            for first in startsAtTheWire.indices {
                let window = startsAtTheWire[first...].prefix { $0.arrivedAt < startsAtTheWire[first].arrivedAt + Double(Self.deviceWindow) }
                #expect(window.count <= 5, "\(window.count) starts within \(Self.deviceWindow) s of #\(startsAtTheWire[first].sequence)")
            }
            // After the first window, the waiting ones go out highest relevance first (each carries a newer
            // timestamp than the last start the device got, which names its activity).
            let relevances = startsAtTheWire.dropFirst(5).map { record in
                fixture.shown(device.id).first { $0.lastTimestamp == record.timestamp }?.relevanceScore ?? 0
            }
            #expect(relevances == relevances.sorted(by: >), "\(relevances)")

            let dropped = try await fixture.store.client.query(
                "SELECT reason FROM queued_starts WHERE state = 'dropped' ORDER BY id"
            )
            var reasons: [String] = []
            for try await reason in dropped.decode(String.self) { reasons.append(reason) }
            #expect(reasons == ["feedEnded", "feedEnded"])
            let status = try #require(
                try await UpdateStatus.read(
                    updateID: starts[6].update.updateID,
                    appID: fixture.store.appID,
                    client: fixture.store.client,
                    logger: fixture.store.logger
                )
            )
            #expect(status.startsDeferred == 1 && status.startsDropped == 1)
        }
    }

    /// Queued starts not yet sent or dropped.
    private func waiting(_ fixture: DispatchFixture) async throws -> Int {
        let rows = try await fixture.store.client.query("SELECT count(*)::int FROM queued_starts WHERE state IN ('waiting', 'sending')")
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }
}
