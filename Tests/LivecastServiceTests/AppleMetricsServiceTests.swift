import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The Apple-metrics job in `serve`: one instance at a time, under advisory lock namespace 6.
@Suite struct AppleMetricsServiceTests {
    @Test func theJobRunsOnOneInstanceAtATime() async throws {
        try await StoreFixture.with("apple_metrics_service") { fixture in
            let job = AppleMetricsJob(database: fixture.client, masterKey: .random(), settings: .init(), logger: fixture.logger)
            let service = AppleMetricsService(job: job, interval: .seconds(3600))
            // Another instance holds the job's lock: this one skips its tick.
            let skipped = try await fixture.client.withTransaction(logger: fixture.logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(6, 0)", logger: fixture.logger)
                return await service.tick()
            }
            #expect(skipped == nil)
            #expect(await service.tick() == AppleMetricsJob.Outcome(), "free again, it runs: no app has credentials")
        }
    }

    @Test func aTokenThatCannotBeOpenedIsAFailureOnTheAppsRecord() async throws {
        try await StoreFixture.with("apple_metrics_unopened") { fixture in
            _ = try await AppleMetricsCredentials(client: fixture.client, logger: fixture.logger).set(
                appID: fixture.appID,
                teamID: "TEAM123456",
                appleAppID: "com.example.game",
                token: "ck-token",
                masterKey: .random()
            )
            let exports = AppleMetricsExports(client: fixture.client, logger: fixture.logger)
            for (masterKey, error) in [(nil, "has none"), (MasterKey.random(), "cannot be opened with this master key")] as [(MasterKey?, String)] {
                let job = AppleMetricsJob(
                    database: fixture.client,
                    masterKey: masterKey,
                    settings: .init(url: "https://127.0.0.1:1"),
                    logger: fixture.logger
                )
                #expect(try await job.run().failed == 1)
                let state = try #require(try await exports.states(appID: fixture.appID).first)
                #expect(state.dataset == .deliveryMetrics && state.lastError?.contains(error) == true, "\(state)")
            }
        }
    }
}
