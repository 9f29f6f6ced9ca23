import APNs
import ArgumentParser
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LocalPostgres
import Logging
import NIOPosix
import PostgresNIO

/// One feed update to many token-based followers stored in PostgreSQL, through the dispatcher and the APNs client
/// to one server, timed: the Livecast half of `scripts/bench.sh`'s fan-out figures (h2load runs beside it).
@main
struct FanOutBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "livecast-fanout-benchmark",
        abstract: "Fan one feed update out to N stored followers and print the wall time, pushes per second and peak memory."
    )

    @Option(help: "An empty PostgreSQL database: postgres://USER@HOST:PORT/DATABASE. Without it, a throwaway PostgreSQL is started for the run.")
    var databaseUrl: String?

    @Option(help: "The push server, https://HOST:PORT (it must answer 200 to any POST, as nghttpd --echo-upload does).")
    var pushUrl: String

    @Option(help: "A PEM file of certificates to trust.")
    var ca: String?

    @Option(help: "A .p8 key to sign provider tokens with.")
    var key: String

    @Option(help: "The migrations directory.")
    var migrations = "sql"

    @Option(help: "Token-based followers of the feed.")
    var followers = 1_000_000

    @Option(help: "Followers read and sent per checkpoint.")
    var pageSize = 5_000

    @Option(help: "Connections to the push server.")
    var connections = 2

    @Option(help: "Event-loop threads for the APNs client.")
    var threads = 1

    func run() async throws {
        guard let endpoint = APNsClient.Endpoint(url: self.pushUrl) else { throw ValidationError("--push-url must be https://HOST:PORT") }
        if let databaseUrl {
            try await self.benchmark(database: try PostgresClient.Configuration(url: databaseUrl), endpoint: endpoint)
        } else {
            let postgres = try await TemporaryPostgres.start(settings: ["shared_buffers": "256MB"])
            do {
                try await self.benchmark(database: postgres.configuration, endpoint: endpoint)
            } catch {
                await postgres.stop()
                throw error
            }
            await postgres.stop()
        }
    }

    private func benchmark(database databaseConfiguration: PostgresClient.Configuration, endpoint: APNsClient.Endpoint) async throws {
        let logger = Logger(label: "livecast.bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let database = PostgresClient(configuration: databaseConfiguration, backgroundLogger: logger)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: self.threads)
        var configuration = APNsClient.Configuration(environment: .sandbox)
        configuration.pushEndpoint = endpoint
        configuration.broadcastEndpoint = endpoint
        configuration.additionalTrustRootFiles = self.ca.map { [$0] } ?? []
        configuration.connectionsPerEndpoint = self.connections
        configuration.requestTimeout = .seconds(120)
        let apns = try APNsClient(
            configuration: configuration,
            credentials: try APNsCredentials(teamID: "BENCHTEAM1", keyID: "BENCHKEY01", p8File: self.key),
            eventLoopGroup: group
        )
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { await database.run() }
            defer { tasks.cancelAll() }
            try await self.measure(database: database, apns: apns, logger: logger)
        }
        await apns.shutdown()
        try await group.shutdownGracefully()
    }

    private func measure(database: PostgresClient, apns: APNsClient, logger: Logger) async throws {
        _ = try await MigrationRunner(migrations: try Migration.load(from: self.migrations)).run(on: database, logger: logger)
        let appID = try await self.prepare(database, logger: logger)
        let update = try await FeedUpdates(client: database, logger: logger).accept(
            .init(appID: appID, feedKey: "bench", event: .update, contentState: try RawJSON(validating: #"{"homeScore":2,"awayScore":1}"#))
        )
        let dispatcher = Dispatcher(
            database: database,
            appClients: FixedAppClients(apns, bundleID: "com.example.bench"),
            // One worker walks every follower, unsplit: the figure beside h2load is one walker's.
            settings: Dispatcher.Settings(pageSize: self.pageSize, sliceSize: .max),
            logger: logger
        )
        // Warm the connections (and the provider token) on another target, then measure from a fresh peak.
        _ = await apns.send(Array(repeating: DevicePush(deviceToken: "00", bundleID: "com.example.bench", payload: Array("{}".utf8)), count: 100))
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        let clock = ContinuousClock()
        let start = clock.now
        let handled = try await dispatcher.dispatchOnce()
        let elapsed = clock.now - start
        let rows = try await database.query("SELECT status, sent_count, failed_count FROM updates WHERE id = \(update.updateID)", logger: logger)
        var outcome = (status: "", sent: 0, failed: 0)
        for try await row in rows.decode((String, Int, Int).self) { outcome = row }
        guard handled == 1, outcome.status == "sent", outcome.sent == self.followers else {
            throw ValidationError("the fan-out did not complete: \(outcome.status), \(outcome.sent) sent, \(outcome.failed) failed")
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "followers=\(self.followers) seconds=\(String(format: "%.2f", seconds)) rate=\(Int(Double(outcome.sent) / seconds))"
                + " failed=\(outcome.failed) peak_mib=\(Self.peakMiB().map { String(format: "%.0f", $0) } ?? "?")"
        )
    }

    /// An app, a feed and its followers, each with its own update token, written by PostgreSQL itself.
    private func prepare(_ database: PostgresClient, logger: Logger) async throws -> Int64 {
        let rows = try await database.query(
            """
            INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
            VALUES ('com.example.bench', 'sandbox', 'BENCHTEAM1', 'BENCHKEY01', \(self.key)) RETURNING id
            """,
            logger: logger
        )
        var appID: Int64 = 0
        for try await id in rows.decode(Int64.self) { appID = id }
        try await database.query(
            "INSERT INTO feeds (app_id, feed_key, attributes_type, attributes, state) VALUES (\(appID), 'bench', 'GameAttributes', '{}', 'active')",
            logger: logger
        )
        try await database.query(
            """
            INSERT INTO activities (app_id, activity_key, attributes_type, feed_id, state)
            SELECT \(appID), 'activity-' || i, 'GameAttributes', (SELECT id FROM feeds WHERE feed_key = 'bench'), 'active'
            FROM generate_series(1, \(self.followers)) AS i
            """,
            logger: logger
        )
        try await database.query(
            """
            INSERT INTO activity_tokens (app_id, activity_id, token, generation)
            SELECT \(appID), id, lpad(to_hex(id), 64, '0'), 1 FROM activities WHERE app_id = \(appID)
            """,
            logger: logger
        )
        try await database.query("VACUUM ANALYZE activities", logger: logger)
        try await database.query("VACUUM ANALYZE activity_tokens", logger: logger)
        return appID
    }

    /// The process's peak resident memory since the last reset (`VmHWM`), in MiB.
    private static func peakMiB() -> Double? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes / 1024
    }
}
