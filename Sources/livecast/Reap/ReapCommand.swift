import ArgumentParser
import Foundation
import LivecastService
import LivecastStore

/// `livecast reap`: one reaper pass over every app, for cron, a systemd timer or a Kubernetes CronJob.
struct ReapCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reap",
        abstract: "Run one reaper pass: end stale and aging activities and feeds, dismiss, retire channels, expire tokens, prune.",
        discussion: """
            Prints one line per app: `com.example.game (sandbox): ended 3 activities, 1 feeds; dismissed 2 activities; \
            retired 1 channels; expired 4 tokens; pruned 120 rows` (with --dry-run: `would end …`, writing nothing). \
            Ends go into the outbox; a running `serve` (or its dispatcher) sends them. Exits 0 on success, 1 when a \
            rule failed for an app (the message is on stderr; the other rules still ran).
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var reaper: ReaperOptions
    @OptionGroup var apns: APNsOptions
    @OptionGroup var masterKey: MasterKeyOption
    @OptionGroup var config: ConfigFileOption

    @Flag(help: "Count what a pass would do; change nothing.")
    var dryRun = false

    func run() async throws {
        let settings = try self.config.settings()
        let policy = try self.reaper.policy(settings)
        let masterKey = try self.masterKey.masterKey(settings)
        let overrides = try self.apns.overrides(settings)
        let reports = try await self.database.withClient(settings, logger: .disabled) { client in
            let clients = AppClients(apps: Apps(client: client, masterKey: masterKey, logger: .disabled), overrides: overrides, logger: .disabled)
            let reaper = Reaper(
                database: client,
                appClients: clients,
                policy: policy,
                logger: .disabled
            )
            do {
                let reports = try await reaper.pass(dryRun: self.dryRun)
                await clients.shutdown()
                return reports
            } catch {
                await clients.shutdown()
                throw error
            }
        }
        var failed = false
        for report in reports {
            print(report.summary(dryRun: self.dryRun))
            for failure in report.failures {
                FileHandle.standardError.write(Data("error: \(report.bundleID) (\(report.environment)): \(failure)\n".utf8))
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }
}
