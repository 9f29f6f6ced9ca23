import LivecastService
import LivecastStore
import LivecastTesting
import Metrics
import PostgresNIO
import Prometheus
import ServiceLifecycle
import Testing

/// What the services report besides the pushes: the outbox and channel gauges, and fan-out progress.
@Suite struct ServiceMetricsTests {
    @Test func theOutboxAndChannelGaugesFollowTheDatabase() async throws {
        try await DispatchFixture.with("metrics_gauges") { fixture in
            try #require(try await fixture.feed("game-1", channelPolicy: 0) != nil)
            let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now - 5)
            _ = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now)
            try await fixture.store.client.query("UPDATE updates SET created_at = now() - interval '90 seconds' WHERE id = \(first.updateID)")
            let registry = PrometheusCollectorRegistry()
            let gauges = OutboxGauges(database: fixture.store.client, interval: .milliseconds(100), logger: fixture.store.logger)
            let group = ServiceGroup(services: [gauges], gracefulShutdownSignals: [], logger: fixture.store.logger)
            try await withMetricsFactory(PrometheusMetricsFactory(registry: registry)) {
                let running = Task { try await group.run() }
                let deadline = ContinuousClock.now + .seconds(30)
                while !registry.emitToString().contains("livecast_outbox_pending"), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                await group.triggerGracefulShutdown()
                try await running.value
            }
            let exported = registry.emitToString()
            #expect(exported.contains("livecast_outbox_pending 2"), "\(exported)")
            #expect(exported.contains(#"livecast_channels{app="com.example.game (sandbox)"} 1"#))
            #expect(exported.contains("livecast_channels_limit 10000"))
            let oldest = exported.split(separator: "\n").first { $0.hasPrefix("livecast_outbox_oldest_pending_seconds ") }
            let age = try #require(oldest.flatMap { Double($0.split(separator: " ")[1]) })
            #expect(age >= 90 && age < 600, "the oldest pending update's age: \(age)")
        }
    }

    @Test func aFanOutCountsTheFollowersItHandled() async throws {
        try await DispatchFixture.with("metrics_fanout") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(30, feed: "game-1")
            let registry = PrometheusCollectorRegistry()
            try await withMetricsFactory(PrometheusMetricsFactory(registry: registry)) {
                _ = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
                _ = try await fixture.dispatcher(.init(pageSize: 7)).drain()
            }
            #expect(registry.emitToString().contains("livecast_fanout_targets_total \(followers.count)"), "\(registry.emitToString())")
        }
    }
}
