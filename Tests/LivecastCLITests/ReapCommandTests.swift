import Foundation
import LivecastTesting
import LocalPostgres
import PostgresNIO
import Testing

/// `livecast reap` against a real PostgreSQL: the summary line, --dry-run, a second pass, and clear failures.
@Suite struct ReapCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func aPassPrintsOneLinePerAppAndADryRunWritesNothing() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_reap")
        let liveTokens: PostgresQuery = "SELECT count(*)::int FROM push_to_start_tokens WHERE invalidated_at IS NULL"
        try await TestPostgres.withClient(database) { client in
            try await client.query(CLIDatabase.insertGameApp)
            try await client.query(
                """
                INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, last_seen_at)
                SELECT id, d, 'GameAttributes', t, now() - interval '45 days' FROM apps, (VALUES ('d1', 'aa01'), ('d2', 'aa02')) AS v(d, t)
                """
            )
        }
        func live() async throws -> Int {
            try await TestPostgres.withClient(database) { client in
                for try await count in try await client.query(liveTokens).decode(Int.self) { return count }
                return -1
            }
        }

        let dry = try await ExternalProcess.run(self.livecast, ["reap", "--database-url", url, "--dry-run"])
        #expect(dry.status == 0, "\(dry.stderr)")
        #expect(
            dry.stdout
                == "com.example.game (sandbox): would end 0 activities, 0 feeds; would dismiss 0 activities; would retire 0 channels; would expire 2 tokens; would prune 0 rows\n"
        )
        #expect(try await live() == 2)

        let real = try await ExternalProcess.run(self.livecast, ["reap", "--database-url", url, "--stale-grace", "60"])
        #expect(real.status == 0, "\(real.stderr)")
        #expect(
            real.stdout
                == "com.example.game (sandbox): ended 0 activities, 0 feeds; dismissed 0 activities; retired 0 channels; expired 2 tokens; pruned 0 rows\n"
        )
        #expect(try await live() == 0)

        let again = try await ExternalProcess.run(self.livecast, ["reap", "--database-url", url])
        #expect(again.status == 0, "\(again.stderr)")
        #expect(
            again.stdout
                == "com.example.game (sandbox): ended 0 activities, 0 feeds; dismissed 0 activities; retired 0 channels; expired 0 tokens; pruned 0 rows\n"
        )
    }

    @Test func serveReapsPeriodicallyAndExportsItsMetrics() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "cli_serve_reap")
        let url = CLIDatabase.url(of: database)
        let sql = CLIDatabase.migrations
        let port = try FreePort.next()
        let metricsPort = try FreePort.next()
        let server = try await BackgroundProcess(
            self.livecast,
            [
                "serve", "--database-url", url, "--migrations", sql, "--listen", "127.0.0.1:\(port)",
                "--metrics-listen", "127.0.0.1:\(metricsPort)", "--reap-interval", "1",
            ]
        )
        #expect(try await server.waitForLine("listening on 127.0.0.1:\(port)"), "stderr: \(server.stderr)")
        #expect(try await server.waitForLine("metrics on 127.0.0.1:\(metricsPort)"), "stderr: \(server.stderr)")
        var exported = ""
        for _ in 0..<100 where !exported.contains("livecast_reaper_last_run_timestamp_seconds") {
            try await Task.sleep(for: .milliseconds(100))
            exported = try await ExternalProcess.run("curl", ["-s", "http://127.0.0.1:\(metricsPort)/metrics"]).stdout
        }
        #expect(exported.contains("livecast_reaper_last_run_timestamp_seconds"), "\(exported)")
        // The API's port does not serve the metrics.
        let onAPI = try await ExternalProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(port)/metrics"])
        #expect(onAPI.stdout == "404")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0, "stderr: \(server.stderr)")
    }

    @Test func badSettingsFailClearly() async throws {
        let cases: [([String], String)] = [
            (["reap"], "give --database-url or set DATABASE_URL"),
            (["reap", "--database-url", "postgres://x@127.0.0.1:1/none?sslmode=disable", "--stale-grace", "soon"], "--stale-grace"),
            (["reap", "--database-url", "mysql://x@y/z"], "expected postgres://"),
        ]
        for (arguments, message) in cases {
            let result = try await ExternalProcess.run(self.livecast, arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
    }
}
