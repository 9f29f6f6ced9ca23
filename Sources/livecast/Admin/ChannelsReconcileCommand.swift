import ArgumentParser
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import PostgresNIO

extension ChannelsCommand {
    /// `livecast channels reconcile [--bundle-id B] [--delete-orphans]`.
    struct Reconcile: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare the registry with APNs' channel list: report orphans, mark missing channels.",
            discussion: """
                Prints one line per finding (`orphan ID: kept`, `missing ID (feed game-1): marked missing`, …) and a \
                summary per app. Orphans (at APNs, unknown to Livecast or retired in its registry) are deleted at \
                APNs only with --delete-orphans. Without --bundle-id, every app that has recorded a channel is \
                reconciled. Exits 1 when an app could not be reconciled.
                """
        )

        @Option(help: "The app's bundle id (default: every app with channels).")
        var bundleId: String?

        @Option(help: "sandbox or production; needed only when the bundle id is registered in both.")
        var environment: String?

        @Flag(help: "Delete the orphans at APNs (otherwise they are only reported).")
        var deleteOrphans = false

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var apns: APNsOptions
        @OptionGroup var masterKey: MasterKeyOption
        @OptionGroup var config: ConfigFileOption

        func run() async throws {
            let settings = try self.config.settings()
            let masterKey = try self.masterKey.masterKey(settings)
            let overrides = try self.apns.overrides(settings)
            let failed = try await self.database.withClient(settings, logger: .disabled) { client in
                let apps = Apps(client: client, masterKey: masterKey, logger: .disabled)
                let selected = try await self.apps(apps)
                let clients = AppClients(apps: apps, overrides: overrides, logger: .disabled)
                var failed = false
                for app in selected {
                    do {
                        let apns = try await clients.client(forApp: app.id)
                        let result = try await ChannelReconciler(database: client, apns: apns.client, logger: .disabled)
                            .reconcile(
                                appID: app.id,
                                bundleID: app.bundleID,
                                environment: app.environment.rawValue,
                                deleteOrphans: self.deleteOrphans
                            )
                        for finding in result.findings { print(finding.line) }
                        print(result.summary)
                    } catch {
                        let message = (error as? StoreError)?.message ?? "\(error)"
                        FileHandle.standardError.write(Data("error: \(app.bundleID) (\(app.environment)): \(message)\n".utf8))
                        failed = true
                    }
                }
                await clients.shutdown()
                return failed
            }
            if failed { throw ExitCode.failure }
        }

        private func apps(_ apps: Apps) async throws -> [Apps.App] {
            if let bundleId {
                let matching = try await apps.apps(bundleID: bundleId).filter {
                    self.environment == nil || $0.environment.rawValue == self.environment
                }
                guard !matching.isEmpty else { throw ValidationError("no app \(bundleId)\(self.environment.map { " in \($0)" } ?? "")") }
                return matching
            }
            return try await apps.withChannels()
        }
    }
}
