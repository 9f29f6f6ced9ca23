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

    @Option(help: "HOST:PORT to listen on (default: $LIVECAST_LISTEN, else 127.0.0.1:8080).")
    var listen: String?

    @Option(help: "HOST:PORT of the metrics listener, GET /metrics, apart from the API (default: $LIVECAST_METRICS_LISTEN, else 127.0.0.1:9464).")
    var metricsListen: String?

    @Option(
        help: """
            Reverse proxies whose X-Forwarded-For names the client, as comma-separated addresses or CIDR blocks such as \
            10.0.0.0/8 (default: $LIVECAST_TRUSTED_PROXIES, else none: the client is the peer).
            """
    )
    var trustedProxies: String?

    @Option(
        help:
            "Seconds an API connection may sit idle, a half-sent request head included, before it is closed (default: $LIVECAST_HTTP_IDLE_TIMEOUT, else 60)."
    )
    var httpIdleTimeout: Int?

    @Option(
        help:
            "Seconds a request may take to arrive, head to end of body, before its connection is closed (default: $LIVECAST_HTTP_READ_TIMEOUT, else 30)."
    )
    var httpReadTimeout: Int?

    @Option(help: "PostgreSQL statement_timeout in seconds on the service's connections (default: $LIVECAST_STATEMENT_TIMEOUT, else 60; 0 disables).")
    var statementTimeout: Int?

    @Option(
        help: """
            Seconds a request may wait on PostgreSQL, for a pool connection and its queries, before it is answered 503 \
            database_unavailable (default: $LIVECAST_DATABASE_WAIT_TIMEOUT, else 10).
            """
    )
    var databaseWaitTimeout: Int?

    @Option(help: "Requests a second one API key may make, sustained (default: $LIVECAST_RATE_LIMIT, else 50).")
    var rateLimit: Double?

    @Option(help: "Requests one API key may make at once after a quiet spell (default: $LIVECAST_RATE_BURST, else 100).")
    var rateBurst: Double?

    @Option(
        help: """
            Failed authentications (API and console sign-in) a second per client address and per key prefix, sustained, \
            before more are refused with 429 (default: $LIVECAST_FAILED_AUTH_RATE, else 1).
            """
    )
    var failedAuthRate: Double?

    @Option(help: "Failed authentications a client address or key prefix may make at once (default: $LIVECAST_FAILED_AUTH_BURST, else 20).")
    var failedAuthBurst: Double?

    @Option(help: "Requests a minute one device may make with a client key (default: $LIVECAST_CLIENT_DEVICE_RATE, else 60).")
    var clientDeviceRate: Double?

    @Option(help: "Requests a minute one client address may make with client keys (default: $LIVECAST_CLIENT_ADDRESS_RATE, else 600).")
    var clientAddressRate: Double?

    @Option(help: "Live push-to-start tokens one device may register with a client key (default: $LIVECAST_CLIENT_DEVICE_TOKENS, else 32).")
    var clientDeviceTokens: Int?

    @Option(help: "Running activities one device may register with a client key (default: $LIVECAST_CLIENT_DEVICE_ACTIVITIES, else 32).")
    var clientDeviceActivities: Int?

    @Option(
        help:
            "New devices client keys may register for one app in an hour, all instances together (default: $LIVECAST_CLIENT_NEW_DEVICES, else 10000)."
    )
    var clientNewDevices: Int?

    @Option(
        help:
            "Percent of --client-new-devices one client address may bring in an hour (default: $LIVECAST_CLIENT_ADDRESS_SHARE, else 5)."
    )
    var clientAddressShare: Int?

    @Option(help: "Seconds a client's timestamp may be ahead of the server's clock (default: $LIVECAST_MAX_CLOCK_SKEW, else 60).")
    var maxClockSkew: Int?

    @Option(
        help:
            "Seconds after a feed's start within which the device's app should register the activity; a feed counts the starts past it with none (default: $LIVECAST_START_REGISTRATION_TIMEOUT, else 300)."
    )
    var startRegistrationTimeout: Int?

    @Option(help: "Seconds a console session may go unused before it ends (default: $LIVECAST_CONSOLE_IDLE_TIMEOUT, else 1800).")
    var consoleIdleTimeout: Int?

    @Option(help: "Dispatcher workers: outbox claims sent at once (default: $LIVECAST_DISPATCH_WORKERS, else 4; 0 runs none here).")
    var dispatchWorkers: Int?

    @Option(
        help:
            "Seconds a push APNs keeps asking to retry stays owed before it is a dead letter; an end is kept while its activity can show (default: $LIVECAST_RETRY_DEADLINE, else 3600)."
    )
    var retryDeadline: Int?

    @Option(
        help: """
            A feed's token-based followers per slice: a fan-out to more is split into slices that every instance's \
            workers walk side by side (default: $LIVECAST_FAN_OUT_SLICE, else 50000).
            """
    )
    var fanOutSlice: Int?

    @Option(
        help: """
            Push-to-start notifications (starts and renewals) one device is sent in --start-budget-window; a start \
            without room waits until there is (default: $LIVECAST_START_BUDGET, else 8).
            """
    )
    var startBudget: Int?

    @Option(help: "The rolling window of --start-budget, in seconds (default: $LIVECAST_START_BUDGET_WINDOW, else 3600).")
    var startBudgetWindow: Int?

    @Option(help: "Seconds between reaper passes on the one instance holding the lock (default: $LIVECAST_REAP_INTERVAL, else 60; 0 disables).")
    var reapInterval: Int?

    @Option(
        help: """
            Webhook workers: endpoints delivered to at once, where dispatcher workers run (default: \
            $LIVECAST_WEBHOOK_WORKERS, else 4; 0 runs none here).
            """
    )
    var webhookWorkers: Int?

    @Flag(help: "Deliver webhooks to private, loopback and link-local addresses too (default: $LIVECAST_WEBHOOK_ALLOW_PRIVATE, else false).")
    var webhookAllowPrivate = false

    @Option(
        help: """
            Seconds a webhook delivery may take, from looking its host up to the end of its answer's body \
            (default: $LIVECAST_WEBHOOK_TIMEOUT, else 10).
            """
    )
    var webhookTimeout: Int?

    @Option(
        help: """
            Seconds between runs of the job that fetches Apple's delivery figures, on the one instance holding its \
            lock (default: $LIVECAST_APPLE_METRICS_INTERVAL, else 3600; 0 disables).
            """
    )
    var appleMetricsInterval: Int?

    @Option(help: "Apple's data-export host (default: $LIVECAST_APPLE_METRICS_URL, else https://api.icloud.apple.com).")
    var appleMetricsUrl: String?

    @Option(
        help:
            "Share by which Apple's figures and Livecast's may differ before a day is flagged (default: $LIVECAST_APPLE_METRICS_THRESHOLD, else 0.05)."
    )
    var appleMetricsThreshold: Double?

    @Flag(help: "Print the effective settings, each with its source (secrets redacted), and exit.")
    var printConfig = false

    /// Every flag of the command, by setting key.
    private var flags: [String: String?] {
        let own: [String: String?] = [
            "listen": self.listen, "metrics-listen": self.metricsListen, "trusted-proxies": self.trustedProxies,
            "http-idle-timeout": self.httpIdleTimeout.map(String.init), "http-read-timeout": self.httpReadTimeout.map(String.init),
            "statement-timeout": self.statementTimeout.map(String.init), "database-wait-timeout": self.databaseWaitTimeout.map(String.init),
            "rate-limit": self.rateLimit.map { "\($0)" }, "rate-burst": self.rateBurst.map { "\($0)" },
            "failed-auth-rate": self.failedAuthRate.map { "\($0)" }, "failed-auth-burst": self.failedAuthBurst.map { "\($0)" },
            "max-clock-skew": self.maxClockSkew.map(String.init), "start-registration-timeout": self.startRegistrationTimeout.map(String.init),
            "console-idle-timeout": self.consoleIdleTimeout.map(String.init),
            "dispatch-workers": self.dispatchWorkers.map(String.init), "retry-deadline": self.retryDeadline.map(String.init),
            "fan-out-slice": self.fanOutSlice.map(String.init),
            "start-budget": self.startBudget.map(String.init), "start-budget-window": self.startBudgetWindow.map(String.init),
            "reap-interval": self.reapInterval.map(String.init),
            "webhook-workers": self.webhookWorkers.map(String.init), "webhook-allow-private": self.webhookAllowPrivate ? "true" : nil,
            "apple-metrics-interval": self.appleMetricsInterval.map(String.init), "apple-metrics-url": self.appleMetricsUrl,
            "apple-metrics-threshold": self.appleMetricsThreshold.map { "\($0)" },
            "webhook-timeout": self.webhookTimeout.map(String.init),
            "client-device-rate": self.clientDeviceRate.map { "\($0)" }, "client-address-rate": self.clientAddressRate.map { "\($0)" },
            "client-device-tokens": self.clientDeviceTokens.map(String.init),
            "client-device-activities": self.clientDeviceActivities.map(String.init),
            "client-new-devices": self.clientNewDevices.map(String.init),
            "client-address-share": self.clientAddressShare.map(String.init),
        ]
        return [own, self.database.flags, self.apns.flags, self.masterKey.flags, self.migrations.flags, self.reaper.flags]
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
