import APNsEmulator
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastService

/// The worker and the store meet through a narrow contract (``FanOutDriver``): a one-page fan-out crosses between
/// them a handful of times, however many statements the store runs for it.
@Suite struct FanOutRoundTripTests {
    @Test func aOnePageFanOutWithItsBroadcastTakesFiveRoundTrips() async throws {
        try await DispatchFixture.with("fanout_round_trips") { fixture in
            try #require(try await fixture.feed("game-1", channelPolicy: 0) != nil)
            let followers = try await fixture.tokenFollowers(3, feed: "game-1")
            let update = try await fixture.update(feed: "game-1", home: 1)
            let calls = try await Self.dispatchOneCounted(fixture)
            #expect(calls == ["claimFanOut", "begin", "recordChannel", "record", "finish"], "\(calls)")
            #expect(calls.count <= 5)
            // And the fan-out did its work: every follower and the channel show the update.
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(try await fixture.counts(update.updateID) == (sent: 4, failed: 0))
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(1)]))
            }
            let broadcasts = try await fixture.store.client.query(
                "SELECT count(*)::int FROM deliveries WHERE update_id = \(update.updateID) AND target_kind = 'channel' AND status = 200"
            )
            for try await count in broadcasts.decode(Int.self) { #expect(count == 1) }
        }
    }

    @Test func aOnePageFanOutWithoutAChannelTakesFourRoundTrips() async throws {
        try await DispatchFixture.with("fanout_round_trips_tokens") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(3, feed: "game-1")
            let update = try await fixture.update(feed: "game-1", home: 2)
            let calls = try await Self.dispatchOneCounted(fixture)
            #expect(calls == ["claimFanOut", "begin", "record", "finish"], "\(calls)")
            #expect(try await fixture.counts(update.updateID) == (sent: 3, failed: 0))
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(2)]))
            }
        }
    }

    /// Dispatches the one fan-out due through a ``CountingFanOutDriver``, and gives the calls it made of the outbox.
    private static func dispatchOneCounted(_ fixture: DispatchFixture) async throws -> [String] {
        var driver: CountingFanOutDriver?
        let dispatcher = Dispatcher(
            database: fixture.store.client,
            appClients: FixedAppClients(fixture.apns, bundleID: EmulatorFixture.bundleID),
            settings: DispatchFixture.settings,
            logger: fixture.store.logger
        ) { outbox in
            let counting = CountingFanOutDriver(outbox)
            driver = counting
            return counting
        }
        #expect(try await dispatcher.dispatchOnce() == 1)
        return try #require(driver).names
    }
}
