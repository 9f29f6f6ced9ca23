import ArgumentParser
import Foundation
import LivecastService
import LivecastSettings
import LivecastStore

/// `livecast apple-metrics set|remove|show|fetch`: an app's credentials for Apple's data export, and a run of the
/// job that fetches Apple's daily figures (which `serve` also runs every `--apple-metrics-interval`).
struct AppleMetricsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple-metrics",
        abstract: "Store an app's Apple data-export credentials, show how its exports went, or fetch Apple's figures now.",
        subcommands: [Set.self, Remove.self, Show.self, Fetch.self]
    )

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Store an app's CloudKit data-export token, sealed with the master key; it is never shown again.",
            discussion: """
                Make the token in the CloudKit Console (Tokens, Create Data Export Token) for the app's Delivery \
                Metrics and Broadcast Push Notification datasets. It is read from --token-file, or from standard input \
                with --token-file -, never from the command line.
                """
        )

        @OptionGroup var app: AppSelection

        @Option(help: "The Apple Developer team id.")
        var teamId: String

        @Option(help: "The bundle id Apple's export knows the app by (default: the app's).")
        var appId: String?

        @Option(help: "A file holding the token, or - for standard input.")
        var tokenFile: String

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var masterKey: MasterKeyOption
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let settings = try self.config.settings()
            guard let masterKey = try self.masterKey.masterKey(settings) else {
                throw ValidationError("the token is sealed with the master key: give --master-key-file (or LIVECAST_MASTER_KEY_FILE)")
            }
            let text = self.tokenFile == "-" ? readLine(strippingNewline: true) : try? String(contentsOfFile: self.tokenFile, encoding: .utf8)
            guard let token = text?.trimmingCharacters(in: .whitespacesAndNewlines), !token.isEmpty else {
                throw ValidationError("--token-file: no token in \(self.tokenFile)")
            }
            let (app, shown) = try await self.database.withClient(settings, logger: .disabled) { client in
                let app = try await self.app.app(in: Apps(client: client, masterKey: nil, logger: .disabled))
                let shown = try await AppleMetricsCredentials(client: client, logger: .disabled).set(
                    appID: app.id,
                    teamID: self.teamId,
                    appleAppID: self.appId ?? app.bundleID,
                    token: token,
                    masterKey: masterKey
                )
                return (app, shown)
            }
            print("stored the data-export credentials of \(app.bundleID) (\(app.environment)): team \(shown.teamId), app \(shown.appId)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an app's data-export credentials; the figures fetched stay.")

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let (app, removed) = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                let app = try await self.app.app(in: Apps(client: client, masterKey: nil, logger: .disabled))
                return (app, try await AppleMetricsCredentials(client: client, logger: .disabled).remove(appID: app.id))
            }
            print(removed ? "removed the data-export credentials of \(app.bundleID)" : "\(app.bundleID) had no data-export credentials")
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show an app's data-export credentials (never the token) and each export's last day and error."
        )

        @OptionGroup var app: AppSelection
        @OptionGroup var database: DatabaseOptions
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let (shown, exports) = try await self.database.withClient(try self.config.settings(), logger: .disabled) { client in
                let app = try await self.app.app(in: Apps(client: client, masterKey: nil, logger: .disabled))
                return (
                    try await AppleMetricsCredentials(client: client, logger: .disabled).shown(appID: app.id),
                    try await AppleMetricsExports(client: client, logger: .disabled).states(appID: app.id)
                )
            }
            print(shown.map { "team \($0.teamId), app \($0.appId), set \($0.updatedAt)" } ?? "no data-export credentials")
            for export in exports {
                let name = export.dataset.rawValue + (export.channelId.map { " \($0)" } ?? "")
                let error = export.lastError.map { "; failing since \(export.lastErrorAt ?? "?"): \($0)" } ?? ""
                print("\(name): through \(export.fetchedThrough ?? "nothing")\(error)")
            }
        }
    }

    struct Fetch: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Fetch Apple's figures now, for every app with credentials or one, and flag the days that diverge.",
            discussion: "Prints what was stored, failed and flagged; exits 1 when an export failed (its error is recorded on the app)."
        )

        @Option(help: "Only this app's bundle id.")
        var bundleId: String?

        @Option(help: "Apple's data-export host (default: $LIVECAST_APPLE_METRICS_URL, else https://api.icloud.apple.com).")
        var appleMetricsUrl: String?

        @Option(help: "Also trust the certificates in this PEM file (default: $LIVECAST_APNS_CA_FILE).")
        var apnsCaFile: String?

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var masterKey: MasterKeyOption
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let settings = try self.config.settings()
            let masterKey = try self.masterKey.masterKey(settings)
            var jobSettings = try settings.read(flags: ["apple-metrics-url": self.appleMetricsUrl]) { try AppleMetricsJob.Settings(reader: $0) }
            jobSettings.caFile = try settings.read(flags: ["apns-ca-file": self.apnsCaFile]) { $0.text("apns-ca-file") }
            let outcome = try await self.database.withClient(settings, logger: .disabled) { client in
                let job = AppleMetricsJob(database: client, masterKey: masterKey, settings: jobSettings, logger: .disabled)
                guard let bundleId = self.bundleId else { return try await job.run() }
                let apps = try await Apps(client: client, masterKey: nil, logger: .disabled).apps(bundleID: bundleId)
                guard !apps.isEmpty else { throw ValidationError("no app \(bundleId)") }
                var outcome = AppleMetricsJob.Outcome()
                for app in apps {
                    let one = try await job.run(appID: app.id)
                    outcome = AppleMetricsJob.Outcome(
                        stored: outcome.stored + one.stored,
                        failed: outcome.failed + one.failed,
                        flagged: outcome.flagged + one.flagged
                    )
                }
                return outcome
            }
            print("stored \(outcome.stored) exports, \(outcome.failed) failed, \(outcome.flagged) newly flagged days")
            if outcome.failed > 0 { throw ExitCode.failure }
        }
    }
}
