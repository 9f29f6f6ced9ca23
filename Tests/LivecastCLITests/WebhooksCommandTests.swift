import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// `livecast webhooks …` against a migrated database: an endpoint added with its secret shown once, listed,
/// disabled and enabled, its secret rotated, its failed deliveries listed and replayed, and removed.
@Suite struct WebhooksCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func anEndpointIsManagedFromAddToRemove() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_webhooks")
        try await TestPostgres.withClient(database) { client in _ = try await client.query(CLIDatabase.insertGameApp) }
        let directory = try TemporaryDirectory()
        let keyFile = directory.path("master.key")
        try Data(repeating: 7, count: 32).base64EncodedString().write(toFile: keyFile, atomically: true, encoding: .utf8)
        let app = ["--bundle-id", "com.example.game", "--database-url", url]
        let masterKey = ["--master-key-file", keyFile]

        let added = try await ExternalProcess.run(
            self.livecast,
            ["webhooks", "add", "--url", "https://hooks.example.com/livecast", "--event", "sending.held", "--event", "sending.resumed"] + app
                + masterKey
        )
        #expect(added.status == 0, "\(added.stderr)")
        let lines = added.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].hasPrefix("added webhook ") && lines[1].hasPrefix("whsec_"), "\(added.stdout)")
        let id = String(lines[0].dropFirst("added webhook ".count).prefix(36))
        let uuid = try #require(UUID(uuidString: id))

        let listed = try await ExternalProcess.run(self.livecast, ["webhooks", "list"] + app)
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(
            listed.stdout.hasPrefix("\(id)\tenabled\thttps://hooks.example.com/livecast\tsending.held,sending.resumed\t0 pending\t0 failed\t"),
            "\(listed.stdout)"
        )
        #expect(!listed.stdout.contains(lines[1]))

        let disabled = try await ExternalProcess.run(self.livecast, ["webhooks", "disable", id] + app)
        #expect(disabled.status == 0 && disabled.stdout == "disabled webhook \(id)\n", "\(disabled.stderr)")
        #expect(try await ExternalProcess.run(self.livecast, ["webhooks", "list"] + app).stdout.contains("\tdisabled\t"))
        let enabled = try await ExternalProcess.run(self.livecast, ["webhooks", "enable", id] + app)
        #expect(enabled.status == 0, "\(enabled.stderr)")

        let rotated = try await ExternalProcess.run(self.livecast, ["webhooks", "rotate-secret", id] + app + masterKey)
        #expect(rotated.status == 0, "\(rotated.stderr)")
        let rotatedLines = rotated.stdout.split(separator: "\n").map(String.init)
        #expect(rotatedLines.count == 2 && rotatedLines[0].contains("the old one still signs until"), "\(rotated.stdout)")
        #expect(rotatedLines.last?.hasPrefix("whsec_") == true && rotatedLines.last != lines[1])

        try await TestPostgres.withClient(database) { client in
            _ = try await client.query("UPDATE apps SET sending_held_at = now(), sending_held_reason = 'test'")
            _ = try await client.query(
                "UPDATE webhook_deliveries SET state = 'failed', attempts = 4, failed_at = now(), last_error = 'HTTP 503' WHERE endpoint_id = \(uuid)"
            )
        }
        let failed = try await ExternalProcess.run(self.livecast, ["webhooks", "failed", id] + app)
        #expect(failed.status == 0, "\(failed.stderr)")
        #expect(failed.stdout.contains("\tsending.held\t4 attempts\t") && failed.stdout.hasSuffix("\tHTTP 503\n"), "\(failed.stdout)")
        let replayed = try await ExternalProcess.run(self.livecast, ["webhooks", "replay", id] + app)
        #expect(replayed.status == 0 && replayed.stdout == "replayed 1 deliveries\n", "\(replayed.stdout)\(replayed.stderr)")
        #expect(try await ExternalProcess.run(self.livecast, ["webhooks", "failed", id] + app).stdout.isEmpty)

        let removed = try await ExternalProcess.run(self.livecast, ["webhooks", "remove", id] + app)
        #expect(removed.status == 0 && removed.stdout == "removed webhook \(id)\n", "\(removed.stderr)")
        let again = try await ExternalProcess.run(self.livecast, ["webhooks", "remove", id] + app)
        #expect(again.status != 0 && again.stderr.contains("the app has no webhook \(id)"), "\(again.stderr)")
    }

    @Test func badEndpointsAreRefusedClearly() async throws {
        let (database, url) = try await CLIDatabase.migrated(named: "cli_webhooks_bad")
        try await TestPostgres.withClient(database) { client in _ = try await client.query(CLIDatabase.insertGameApp) }
        let directory = try TemporaryDirectory()
        let keyFile = directory.path("master.key")
        try Data(repeating: 7, count: 32).base64EncodedString().write(toFile: keyFile, atomically: true, encoding: .utf8)
        let app = ["--bundle-id", "com.example.game", "--database-url", url]
        let cases: [([String], String)] = [
            (["webhooks", "add", "--url", "https://hooks.example.com/"] + app, "--master-key-file"),
            (["webhooks", "add", "--url", "http://hooks.example.com/", "--master-key-file", keyFile] + app, "url must be https"),
            (["webhooks", "add", "--url", "https://10.0.0.1/", "--master-key-file", keyFile] + app, "webhook-allow-private"),
            (
                ["webhooks", "add", "--url", "https://hooks.example.com/", "--event", "nope", "--master-key-file", keyFile] + app,
                "unknown event type 'nope'"
            ),
            (["webhooks", "enable", "not-a-uuid"] + app, "the app has no webhook not-a-uuid"),
            (["webhooks", "failed", "--limit", "0", UUID().uuidString] + app, "--limit must be from 1 to 1000"),
        ]
        for (arguments, message) in cases {
            let result = try await ExternalProcess.run(self.livecast, arguments)
            #expect(result.status != 0 && result.stderr.contains(message), "\(arguments): \(result.stderr)")
        }
        let allowed = try await ExternalProcess.run(
            self.livecast,
            ["webhooks", "add", "--url", "http://127.0.0.1:9000/", "--webhook-allow-private", "--master-key-file", keyFile] + app
        )
        #expect(allowed.status == 0, "\(allowed.stderr)")
    }
}
