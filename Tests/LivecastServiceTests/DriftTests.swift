import APNsEmulator
import Foundation
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import ServiceLifecycle
import Testing

/// Coalescing without drift: a feed updated faster than once a second, through a running dispatcher to the
/// emulator's devices.
@Suite struct DriftTests {
    @Test(.timeLimit(.minutes(2))) func aFeedUpdatedFourTimesASecondNeverRunsAheadOfTheClock() async throws {
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

            // The last content reaches every device within 2 s of its acceptance.
            let last = ContinuousClock.now
            while ContinuousClock.now < last + .seconds(2),
                devices.contains(where: { fixture.shown($0).first?.contentState != .object(["home": .int(home)]) })
            {
                try await Task.sleep(for: .milliseconds(50))
            }
            for device in devices { #expect(fixture.shown(device).first?.contentState == .object(["home": .int(home)])) }
            // Every accepted update went out or was superseded, none more than 2 s after it was accepted.
            let rows = try await fixture.store.client.query(
                """
                SELECT status, extract(epoch FROM completed_at - created_at)::float8 FROM updates
                WHERE feed_id IS NOT NULL ORDER BY id
                """
            )
            var statuses: [String: Int] = [:]
            for try await (status, seconds) in rows.decode((String, Double?).self) {
                statuses[status, default: 0] += 1
                #expect((seconds ?? .infinity) <= 2.0, "a \(status) update took \(seconds ?? -1) s")
            }
            #expect(statuses.values.reduce(0, +) == 32)
            #expect(Set(statuses.keys).isSubset(of: ["sent", "superseded"]), "\(statuses)")
            // At most one update a second went out, so most were superseded.
            #expect((statuses["sent"] ?? 0) <= 11, "\(statuses)")
            await group.triggerGracefulShutdown()
            try await running.value
        }
    }
}
