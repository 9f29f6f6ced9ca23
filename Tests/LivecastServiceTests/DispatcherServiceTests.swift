import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import ServiceLifecycle
import Testing

/// The dispatcher as a service: woken by the outbox's NOTIFY, and stopping cleanly on graceful shutdown.
@Suite struct DispatcherServiceTests {
    @Test func anAcceptedUpdateWakesTheServiceAtOnce() async throws {
        try await DispatchFixture.with("service_notify") { fixture in
            try await fixture.feed("game-1")
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            // Polling once a minute: only the NOTIFY can deliver within the test's few seconds.
            let service = DispatcherService(
                dispatcher: fixture.dispatcher(),
                database: fixture.store.client,
                workers: 2,
                pollInterval: .seconds(60),
                logger: fixture.store.logger
            )
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: fixture.store.logger)
            let running = Task { try await group.run() }
            while !service.isRunning { try await Task.sleep(for: .milliseconds(50)) }
            try await Task.sleep(for: .milliseconds(500))  // the workers have polled once and wait
            let update = try await fixture.update(feed: "game-1", home: 7, timestamp: fixture.now)
            let deadline = ContinuousClock.now + .seconds(20)
            while try await fixture.status(update.updateID) != "sent", ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(7)]))
            #expect(try await fixture.status(update.updateID) == "sent")
            await group.triggerGracefulShutdown()
            try await running.value
            #expect(!service.isRunning)
        }
    }
}
