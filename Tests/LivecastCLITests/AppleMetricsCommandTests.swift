import APNsEmulator
import Foundation
import LivecastTesting
import Testing

/// `livecast apple-metrics`: credentials stored from a file and shown without the token, and the job run by hand
/// against the emulator's data export, failing visibly until the token is one Apple (here, the emulator) accepts.
@Suite struct AppleMetricsCommandTests {
    private var livecast: String {
        Fixtures.productsDirectory.appendingPathComponent("livecast").path
    }

    @Test func credentialsAreSetShownAndTheFiguresFetchedFromTheCLI() async throws {
        let (_, url) = try await CLIDatabase.migrated(named: "cli_apple_metrics")
        let key = try await ProviderKey.make()
        let added = try await ExternalProcess.run(
            self.livecast,
            [
                "apps", "add", "--bundle-id", "com.example.game", "--environment", "sandbox", "--team-id", key.teamID,
                "--key-id", key.keyID, "--key-file", key.path, "--key-by-path", "--database-url", url,
            ]
        )
        #expect(added.status == 0, "\(added.stderr)")
        let directory = try TemporaryDirectory()
        let masterKeyFile = directory.path("master.key")
        try Data((0..<32).map { UInt8($0) }).base64EncodedString().write(toFile: masterKeyFile, atomically: false, encoding: .utf8)
        let tokenFile = directory.path("token")
        try "ck-cli-token\n".write(toFile: tokenFile, atomically: false, encoding: .utf8)
        let common = ["--bundle-id", "com.example.game", "--database-url", url]

        let set = try await ExternalProcess.run(
            self.livecast,
            ["apple-metrics", "set", "--team-id", "TEAM123456", "--token-file", tokenFile, "--master-key-file", masterKeyFile] + common
        )
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout == "stored the data-export credentials of com.example.game (sandbox): team TEAM123456, app com.example.game\n")

        try await EmulatorFixture.with { emulator in
            let fetch =
                ["apple-metrics", "fetch", "--apple-metrics-url", emulator.pushURL, "--apns-ca-file", emulator.curl.caFile]
                + ["--master-key-file", masterKeyFile] + common
            let refused = try await ExternalProcess.run(self.livecast, fetch)
            #expect(refused.status == 1 && refused.stdout.contains("0 exports, 2 failed"), "\(refused.stdout) \(refused.stderr)")
            let failing = try await ExternalProcess.run(self.livecast, ["apple-metrics", "show"] + common)
            #expect(failing.stdout.contains("deliverymetrics: through nothing; failing since"), "\(failing.stdout)")
            #expect(failing.stdout.contains("401") && !failing.stdout.contains("ck-cli-token"), "\(failing.stdout)")

            emulator.emulator.addDataExportToken(DataExportToken(token: "ck-cli-token", teamID: "TEAM123456", bundleID: "com.example.game"))
            let fetched = try await ExternalProcess.run(self.livecast, fetch)
            #expect(fetched.status == 0 && fetched.stdout.contains("stored 2 exports, 0 failed"), "\(fetched.stdout) \(fetched.stderr)")
        }
        let shown = try await ExternalProcess.run(self.livecast, ["apple-metrics", "show"] + common)
        #expect(shown.stdout.hasPrefix("team TEAM123456, app com.example.game"), "\(shown.stdout)")
        #expect(!shown.stdout.contains("failing"), "\(shown.stdout)")
    }
}
