import Foundation
import LivecastStore
import LivecastTesting
import LocalPostgres
import Logging
import PostgresNIO
import Testing

/// `livecast apps`, `keys` and `serve` against a real PostgreSQL.
@Suite struct AdminCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    /// `livecast apps add` of com.example.game (sandbox) with a new provider key.
    private func addGame(url: String) async throws -> ExternalProcess.Result {
        let key = try await ProviderKey.make()
        return try await ExternalProcess.run(
            self.livecast,
            [
                "apps", "add", "--bundle-id", "com.example.game", "--environment", "sandbox", "--team-id", key.teamID,
                "--key-id", key.keyID, "--key-file", key.path, "--key-by-path", "--database-url", url,
            ]
        )
    }

    @Test func keysCreatePrintsTheKeyAloneOnTheLastLineAndItAuthenticates() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_keys")
        let added = try await self.addGame(url: url)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "added com.example.game (sandbox)\n")

        let created = try await ExternalProcess.run(
            self.livecast,
            ["keys", "create", "--bundle-id", "com.example.game", "--role", "operator", "--database-url", url]
        )
        #expect(created.status == 0, "\(created.stderr)")
        let lastLine = try #require(created.stdout.split(separator: "\n").last.map(String.init))
        #expect(lastLine.hasPrefix("lc_"))
        let caller = try await TestPostgres.withClient(database) { client in
            try await APIKeys(client: client, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })).authenticate(lastLine)
        }
        #expect(caller?.bundleID == "com.example.game")
        #expect(caller?.role == .operator)

        let listed = try await ExternalProcess.run(self.livecast, ["keys", "list", "--bundle-id", "com.example.game", "--database-url", url])
        #expect(listed.status == 0)
        #expect(listed.stdout.contains("operator"))
        #expect(!listed.stdout.contains(lastLine))
    }

    @Test func identityKeysAreAddedListedAndRemoved() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_identity_keys")
        #expect(try await self.addGame(url: url).status == 0)
        let directory = try TemporaryDirectory()
        let privateKey = try await ProviderKey.make()
        let pemFile = directory.path("identity.pem")
        let derived = try await ExternalProcess.run("openssl", ["pkey", "-in", privateKey.path, "-pubout", "-out", pemFile])
        #expect(derived.status == 0, "\(derived.stderr)")
        let notAKey = directory.path("not-a-key.pem")
        try "hello".write(toFile: notAKey, atomically: true, encoding: .utf8)
        let app = ["--bundle-id", "com.example.game", "--database-url", url]

        let added = try await ExternalProcess.run(
            self.livecast,
            ["identity-keys", "add", "--key-id", "backend-1", "--public-key-file", pemFile] + app
        )
        #expect(added.status == 0, "\(added.stderr)")
        #expect(added.stdout == "added identity key backend-1 of com.example.game (sandbox)\n")
        let refused = try await ExternalProcess.run(
            self.livecast,
            ["identity-keys", "add", "--key-id", "backend-2", "--public-key-file", notAKey] + app
        )
        #expect(refused.status != 0 && refused.stderr.contains("not a P-256"), "\(refused.stderr)")
        let badID = try await ExternalProcess.run(self.livecast, ["identity-keys", "add", "--key-id", "a b", "--public-key-file", pemFile] + app)
        #expect(badID.status != 0 && badID.stderr.contains("--key-id"), "\(badID.stderr)")

        let listed = try await ExternalProcess.run(self.livecast, ["identity-keys", "list"] + app)
        #expect(listed.stdout.hasPrefix("backend-1\t"), "\(listed.stdout)")
        let stored = try await TestPostgres.withClient(database) { client in
            try await client.query("SELECT count(*)::int FROM identity_keys WHERE key_id = 'backend-1'").collect().first?.decode(Int.self)
        }
        #expect(stored == 1)
        #expect(try await ExternalProcess.run(self.livecast, ["identity-keys", "remove", "--key-id", "backend-1"] + app).status == 0)
        let again = try await ExternalProcess.run(self.livecast, ["identity-keys", "remove", "--key-id", "backend-1"] + app)
        #expect(again.status != 0 && again.stderr.contains("no identity key backend-1"), "\(again.stderr)")
    }

    @Test func clientKeysAreCreatedListedAndRevokedLikeOthers() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_client_keys")
        let added = try await self.addGame(url: url)
        #expect(added.status == 0, "\(added.stderr)")
        var shown: [String] = []
        for _ in 0..<2 {
            let created = try await ExternalProcess.run(
                self.livecast,
                ["keys", "create", "--bundle-id", "com.example.game", "--role", "client", "--database-url", url]
            )
            #expect(created.status == 0, "\(created.stderr)")
            #expect(created.stdout.contains("(client) for com.example.game"))
            shown.append(try #require(created.stdout.split(separator: "\n").last.map(String.init)))
        }
        let secrets = shown
        let roles = { @Sendable () async throws -> [APIKeys.Role?] in
            try await TestPostgres.withClient(database) { client in
                let keys = APIKeys(client: client, logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
                return [try await keys.authenticate(secrets[0])?.role, try await keys.authenticate(secrets[1])?.role]
            }
        }
        #expect(try await roles() == [.client, .client], "two client keys live at once during a rotation")

        let listed = try await ExternalProcess.run(self.livecast, ["keys", "list", "--bundle-id", "com.example.game", "--database-url", url])
        let clientLines = listed.stdout.split(separator: "\n").filter { $0.contains("\tclient\t") }
        #expect(clientLines.count == 2, "\(listed.stdout)")
        let oldID = try #require(clientLines.first?.split(separator: "\t").first.map(String.init))
        let revoked = try await ExternalProcess.run(
            self.livecast,
            ["keys", "revoke", "--bundle-id", "com.example.game", "--key-id", oldID, "--database-url", url]
        )
        #expect(revoked.status == 0, "\(revoked.stderr)")
        #expect(try await roles() == [nil, .client])
    }

    @Test func badArgumentsFailClearlyWithoutAStackTrace() async throws {
        let (_, url) = try await CLIDatabase.migrated(named: "cli_bad")
        let cases: [([String], String)] = [
            (["keys", "create", "--bundle-id", "com.example.none", "--role", "admin", "--database-url", url], "no app com.example.none"),
            (["keys", "create", "--bundle-id", "com.example.game", "--role", "root", "--database-url", url], "--role"),
            (["keys", "create", "--bundle-id", "com.example.game", "--role", "admin"], "give --database-url or set DATABASE_URL"),
            (
                [
                    "apps", "add", "--bundle-id", "b", "--environment", "staging", "--team-id", "T", "--key-id", "K", "--key-file", "/none",
                    "--database-url", url,
                ], "--environment must be sandbox or production"
            ),
            (
                [
                    "apps", "add", "--bundle-id", "b", "--environment", "sandbox", "--team-id", "T", "--key-id", "K", "--key-file", "/none",
                    "--database-url", url,
                ], "--master-key-file"
            ),
            (["serve", "--listen", "nowhere", "--database-url", url, "--migrations", CLIDatabase.migrations], "--listen must be HOST:PORT"),
            (["serve", "--config", "/no/such/file"], "--config: cannot read /no/such/file"),
            (
                ["serve", "--rate-limit", "0", "--database-url", url, "--migrations", CLIDatabase.migrations],
                "--rate-limit must be a positive number"
            ),
            (
                ["serve", "--reap-interval=-5", "--database-url", url, "--migrations", CLIDatabase.migrations],
                "--reap-interval must be a whole number, 0 or more"
            ),
            (
                ["serve", "--max-clock-skew=-5", "--database-url", url, "--migrations", CLIDatabase.migrations],
                "--max-clock-skew must be a whole number, 0 or more"
            ),
            (["reap", "--token-expiry-days", "0", "--database-url", url], "--token-expiry-days must be a whole number, 1 or more"),
        ]
        for (arguments, message) in cases {
            let result = try await ExternalProcess.run(self.livecast, arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("Fatal error"), "\(arguments)")
        }
    }

    @Test func serveTakesItsSettingsFromAConfigFileAndStopsGracefully() async throws {
        let (_, url) = try await CLIDatabase.migrated(named: "cli_serve")
        let directory = try TemporaryDirectory()
        let config = directory.path("livecast.conf")
        let port = try FreePort.next()
        try "# Livecast\ndatabase-url = \(url)\nlisten = 127.0.0.1:\(port)\nmetrics-listen = 127.0.0.1:0\ndatabase-wait-timeout = 60\n".write(
            toFile: config,
            atomically: false,
            encoding: .utf8
        )
        let server = try await BackgroundProcess(self.livecast, ["serve", "--config", config, "--migrations", CLIDatabase.migrations])
        #expect(try await server.waitForLine("listening on 127.0.0.1:\(port)"), "stderr: \(server.stderr)")
        let health = try await ExternalProcess.run("curl", ["-s", "http://127.0.0.1:\(port)/ready"])
        #expect(health.stdout.contains(#""status":"ready""#), "\(health.stdout)")
        server.signal(SIGTERM)
        #expect(try await server.waitForExit() == 0, "stderr: \(server.stderr)")
    }

    @Test(.timeLimit(.minutes(2))) func aSecondInstanceOnTheSameAddressesNamesTheFlagToChange() async throws {
        let (_, url) = try await CLIDatabase.migrated(named: "cli_serve_twice")
        let (port, metricsPort) = (try FreePort.next(), try FreePort.next())
        let common = ["serve", "--database-url", url, "--migrations", CLIDatabase.migrations, "--metrics-listen", "127.0.0.1:\(metricsPort)"]
        let first = try await BackgroundProcess(self.livecast, common + ["--listen", "127.0.0.1:\(port)"])
        #expect(try await first.waitForLine("listening on 127.0.0.1:\(port)"), "stderr: \(first.stderr)")

        let sameMetrics = try await ExternalProcess.run(self.livecast, common + ["--listen", "127.0.0.1:0"])
        #expect(sameMetrics.status != 0)
        #expect(sameMetrics.stderr.contains("metrics listener cannot bind 127.0.0.1:\(metricsPort)"), "\(sameMetrics.stderr)")
        #expect(sameMetrics.stderr.contains("--metrics-listen"), "\(sameMetrics.stderr)")

        let sameAPI = try await ExternalProcess.run(
            self.livecast,
            [
                "serve", "--database-url", url, "--migrations", CLIDatabase.migrations, "--metrics-listen", "127.0.0.1:0", "--listen",
                "127.0.0.1:\(port)",
            ]
        )
        #expect(sameAPI.status != 0)
        #expect(sameAPI.stderr.contains("API listener cannot bind 127.0.0.1:\(port)"), "\(sameAPI.stderr)")
        #expect(sameAPI.stderr.contains("--listen (LIVECAST_LISTEN)"), "\(sameAPI.stderr)")

        first.signal(SIGTERM)
        #expect(try await first.waitForExit() == 0, "stderr: \(first.stderr)")
    }

    @Test func printConfigShowsEachEffectiveSettingAndItsSourceWithSecretsRedacted() async throws {
        let directory = try TemporaryDirectory()
        let config = directory.path("livecast.conf")
        try "reap-interval = 30\n".write(toFile: config, atomically: false, encoding: .utf8)
        let result = try await ExternalProcess.run(
            "/usr/bin/env",
            [
                "LIVECAST_RATE_BURST=9", self.livecast, "serve", "--print-config", "--config", config, "--rate-limit", "7",
                "--database-url", "postgres://livecast:hunter2@db.example/livecast", "--migrations", CLIDatabase.migrations,
            ]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("rate-limit = 7.0  # --rate-limit"), "\(lines)")
        #expect(lines.contains("rate-burst = 9.0  # LIVECAST_RATE_BURST"), "\(lines)")
        #expect(lines.contains("reap-interval = 30  # reap-interval in \(config)"), "\(lines)")
        #expect(lines.contains("listen = 127.0.0.1:8080  # default"), "\(lines)")
        #expect(
            lines.contains(
                "database-url = <secret>  # --database-url; sslmode=verify-full (the default): encrypted, the certificate and host name verified"
            ),
            "\(lines)"
        )
        #expect(!result.stdout.contains("hunter2"))
    }
}
