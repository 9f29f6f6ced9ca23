import ArgumentParser
import Foundation
import Hummingbird
import LivecastCore
import LivecastServer
import LivecastSettings
import Logging
import Metrics
import Prometheus
import UnixSignals

/// `livecast serve`: the HTTP API, the dispatcher workers that send the outbox, and the periodic reaper.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP API and the dispatcher: apply the migrations, then serve until SIGTERM or SIGINT.",
        discussion: """
            Each setting comes from its flag, else its environment variable, else the --config file (JSON, or \
            key = value lines; keys are the flags without dashes, such as database-url), else its default; \
            --print-config shows the effective settings and where each came from. Prints `listening on HOST:PORT` \
            once the API accepts connections and `metrics on HOST:PORT` once the metrics listener does, and exits 0 \
            after a graceful shutdown.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var apns: APNsOptions
    @OptionGroup var masterKey: MasterKeyOption
    @OptionGroup var migrations: MigrationsOption
    @OptionGroup var config: ConfigFileOption
    @OptionGroup var reaper: ReaperOptions
    @OptionGroup var listeners: ListenOptions
    @OptionGroup var databaseWait: DatabaseWaitOptions
    @OptionGroup var rateLimits: RateLimitOptions
    @OptionGroup var clientKeys: ClientKeyOptions
    @OptionGroup var apiRules: APIRuleOptions
    @OptionGroup var workers: WorkerOptions
    @OptionGroup var appleMetrics: AppleMetricsOptions

    @Flag(help: "Print the effective settings, each with its source (secrets redacted), and exit.")
    var printConfig = false

    /// Every flag of the command, by setting key.
    private var flags: [String: String?] {
        [
            self.database.flags, self.apns.flags, self.masterKey.flags, self.migrations.flags, self.reaper.flags, self.listeners.flags,
            self.databaseWait.flags, self.rateLimits.flags, self.clientKeys.flags, self.apiRules.flags, self.workers.flags,
            self.appleMetrics.flags,
        ]
        .reduce(into: [:]) { all, group in all.merge(group) { first, _ in first } }
    }

    func run() async throws {
        let config = try self.config.settings()
        let ledger = SettingsLedger()
        let settings = try config.read(flags: self.flags, ledger: ledger) { try LivecastApplication.Settings(reader: $0) }
        if self.printConfig {
            for entry in ledger.settings {
                let remark = entry.remark.map { "; \($0)" } ?? ""
                print("\(entry.key) = \(entry.value ?? "(none)")  # \(config.source(of: entry.key, flags: self.flags))\(remark)")
            }
            return
        }
        LoggingSystem.bootstrap { DeferredMetadataLogHandler(writingTo: StreamLogHandler.standardError(label: $0)) }
        let logger = Logger(label: "livecast")
        for warning in try self.database.warnings(config) { logger.warning("\(warning)") }

        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(LivecastMetrics.factory(registry: registry))
        let (host, metricsHost) = (settings.host, settings.metricsHost)
        let livecast = LivecastApplication(
            settings: settings,
            metrics: registry,
            logger: logger,
            onServerRunning: { port in FileHandle.standardOutput.write(Data("listening on \(host):\(port)\n".utf8)) },
            onMetricsServerRunning: { port in FileHandle.standardOutput.write(Data("metrics on \(metricsHost):\(port)\n".utf8)) }
        )
        do {
            try await livecast.application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch  where ListenerAddressInUse.isAddressInUse(error) {
            throw ListenerAddressInUse(
                listener: "API",
                address: ListenAddress(host: settings.host, port: settings.port).description,
                setting: "--listen (LIVECAST_LISTEN)"
            )
        }
    }
}
