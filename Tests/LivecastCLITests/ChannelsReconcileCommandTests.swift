import Foundation
import LivecastTesting
import PostgresNIO
import Testing

/// `livecast channels reconcile` against a real PostgreSQL and the emulator.
@Suite struct ChannelsReconcileCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func reportsOrphansThenDeletesThemOnlyWhenAsked() async throws {
        try await EmulatorFixture.with { emulator in
            let (database, url) = try await CLIDatabase.migrated(named: "cli_reconcile")
            let orphan = try await emulator.createChannel()
            let gone = "Z29uZQ=="
            try await TestPostgres.withClient(database) { client in
                try await client.query(
                    """
                    INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
                    VALUES ('com.example.game', 'sandbox', \(emulator.key.teamID), \(emulator.key.keyID), \(emulator.key.path))
                    """
                )
                try await client.query(
                    "INSERT INTO channels (app_id, channel_id, storage_policy, created_at) SELECT id, \(gone), 0, now() - interval '1 hour' FROM apps"
                )
            }
            let apns = ["--apns-push-url", emulator.pushURL, "--apns-management-url", emulator.managementURL, "--apns-ca-file", emulator.curl.caFile]
            let report = try await ExternalProcess.run(
                self.livecast,
                ["channels", "reconcile", "--bundle-id", "com.example.game", "--database-url", url] + apns
            )
            #expect(report.status == 0, "\(report.stderr)")
            #expect(
                report.stdout == """
                    orphan \(orphan): kept
                    missing \(gone): marked missing
                    com.example.game (sandbox): 1 channels at APNs, 1 active in the registry; 1 orphans (0 deleted), 1 missing, 0 recorded orphans (0 retired)

                    """
            )
            let cleaned = try await ExternalProcess.run(self.livecast, ["channels", "reconcile", "--delete-orphans", "--database-url", url] + apns)
            #expect(cleaned.status == 0, "\(cleaned.stderr)")
            #expect(cleaned.stdout.hasPrefix("orphan \(orphan): deleted at APNs\n"), "\(cleaned.stdout)")
            let settled = try await ExternalProcess.run(self.livecast, ["channels", "reconcile", "--database-url", url] + apns)
            #expect(
                settled.stdout
                    == "com.example.game (sandbox): 0 channels at APNs, 0 active in the registry; 0 orphans (0 deleted), 0 missing, 0 recorded orphans (0 retired)\n"
            )

            let unknown = try await ExternalProcess.run(
                self.livecast,
                ["channels", "reconcile", "--bundle-id", "com.example.none", "--database-url", url] + apns
            )
            #expect(unknown.status != 0)
            #expect(unknown.stderr.contains("no app com.example.none"), "\(unknown.stderr)")
        }
    }
}
