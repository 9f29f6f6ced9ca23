import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import ServiceLifecycle
import Testing

/// Coalescing without drift: a feed updated faster than once a second, through a running dispatcher to the
/// emulator's devices.
@Suite struct DriftTests {
    @Test(.timeLimit(.minutes(5))) func aFeedUpdatedFourTimesASecondNeverRunsAheadOfTheClock() async throws {
        try await DispatchFixture.with("drift_four_a_second") { fixture in
            try await fixture.feed("game-1")
            var devices: [String] = []
            for index in 0..<3 { devices.append(try await fixture.startedActivity(key: "a\(index)", feed: "game-1").deviceID) }
            let service = DispatcherService(
                dispatcher: fixture.dispatcher(),
                database: fixture.store.client,
                workers: 2,
                logger: fixture.store.logger
            )
            let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: fixture.store.logger)
            let running = Task { try await group.run() }

            // 4 updates a second for 8 seconds, each answered with the timestamp it goes out with; meanwhile
            // the devices' timestamps are read against the clock.
            var home = 0
            let began = ContinuousClock.now
            for _ in 0..<32 {
                home += 1
                let accepted = try await fixture.update(feed: "game-1", home: home)
                let clock = Int(Date().timeIntervalSince1970)
                #expect(accepted.timestamp <= clock + 1, "update \(home) answered \(accepted.timestamp - clock) s ahead")
                for device in devices {
                    let shown = try #require(fixture.shown(device).first)
                    #expect(shown.lastTimestamp <= clock + 1, "a device shows a timestamp \(shown.lastTimestamp - clock) s ahead")
                }
                try await Task.sleep(for: .milliseconds(250))
            }

            // The last content reaches every device (how soon is a speed figure, not checked here).
            let last = ContinuousClock.now
            while ContinuousClock.now < last + .seconds(30),
                devices.contains(where: { fixture.shown($0).first?.contentState != .object(["home": .int(home)]) })
            {
                try await Task.sleep(for: .milliseconds(50))
            }
            for device in devices { #expect(fixture.shown(device).first?.contentState == .object(["home": .int(home)])) }
            // Every accepted update went out or was superseded (a fan-out's status is written after its pushes).
            var statuses: [String: Int] = [:]
            while statuses.isEmpty || (!Set(statuses.keys).isSubset(of: ["sent", "superseded"]) && ContinuousClock.now < last + .seconds(30)) {
                statuses = [:]
                let rows = try await fixture.store.client.query("SELECT status FROM updates WHERE feed_id IS NOT NULL")
                for try await status in rows.decode(String.self) { statuses[status, default: 0] += 1 }
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(statuses.values.reduce(0, +) == 32)
            #expect(Set(statuses.keys).isSubset(of: ["sent", "superseded"]), "\(statuses)")
            // At most one update a second went out, so most were superseded.
            let seconds = Int((ContinuousClock.now - began).components.seconds)
            #expect((statuses["sent"] ?? 0) <= seconds + 2, "\(statuses) in \(seconds) s")
            await group.triggerGracefulShutdown()
            try await running.value
        }
    }
}
