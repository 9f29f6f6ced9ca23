import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import ServiceLifecycle
import Testing

/// Fan-outs never hold up quick work, and one app runs at most `fanOutsPerApp` fan-outs at once.
@Suite struct FairnessTests {
    @Test(.timeLimit(.minutes(3))) func aStandaloneUpdateDoesNotWaitBehindFanOuts() async throws {
        try await DispatchFixture.with("fairness_quick_lane") { fixture in
            for feed in ["game-1", "game-2"] {
                try await fixture.feed(feed)
                _ = try await fixture.tokenFollowers(3, feed: feed)
            }
            let (deviceID, _) = try await fixture.startedActivity(key: "delivery-1")
            // Both games' fan-outs wait on their send locks, held elsewhere, for long.
            let holdings = [
                try await SendLockHolder.hold(fixture, feed: "game-1", for: .seconds(20)),
                try await SendLockHolder.hold(fixture, feed: "game-2", for: .seconds(20)),
            ]
            let service = DispatcherService(
                dispatcher: fixture.dispatcher(),
                database: fixture.store.client,
                workers: 2,
                logger: fixture.store.logger
            )
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: fixture.store.logger)
            let running = Task { try await group.run() }
            _ = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            _ = try await fixture.update(feed: "game-2", home: 1, timestamp: fixture.now)
            // The worker that takes fan-outs (the other takes only quick work) has claimed one and waits for its lock.
            try await SendLockHolder.waitForWaiters(fixture)
            let delivery = try await ActivityUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(
                .init(appID: fixture.store.appID, activityKey: "delivery-1", event: .update, contentState: try RawJSON(validating: #"{"home":5}"#))
            )
            let deadline = ContinuousClock.now + .seconds(10)
            while try await fixture.status(delivery.updateID) != "sent", ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try await fixture.status(delivery.updateID) == "sent", "the standalone update waited behind the fan-outs")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(5)]))
            for holding in holdings { try await holding.value }
            await group.triggerGracefulShutdown()
            try await running.value
        }
    }

    @Test func oneAppRunsAtMostItsShareOfFanOuts() async throws {
        try await DispatchFixture.with("fairness_per_app") { fixture in
            for feed in ["game-1", "game-2"] { try await fixture.feed(feed) }
            let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            let second = try await fixture.update(feed: "game-2", home: 1, timestamp: fixture.now)
            // Another dispatcher is sending the first game.
            try await fixture.store.client.query(
                """
                UPDATE updates SET status = 'dispatching', claimed_by = gen_random_uuid(), attempts = 1,
                    not_before = now() + interval '1 minute' WHERE id = \(first.updateID)
                """
            )
            let oneAtATime = fixture.dispatcher(Dispatcher.Settings(batchSize: 5, pageSize: 100, fanOutsPerApp: 1))
            #expect(try await oneAtATime.dispatchOnce() == 0)
            #expect(try await fixture.status(second.updateID) == "pending")
            let twoAtATime = fixture.dispatcher(Dispatcher.Settings(batchSize: 5, pageSize: 100, fanOutsPerApp: 2))
            #expect(try await twoAtATime.dispatchOnce() == 1)
            #expect(try await fixture.status(second.updateID) == "sent")
        }
    }
}
