import ArgumentParser
import Foundation
import Hummingbird
import LivecastServer
import Logging
import Metrics
import Prometheus

/// `livecast serve`: the HTTP API, the dispatcher workers that send the outbox, and the periodic reaper.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the HTTP API and the dispatcher: apply the migrations, then serve until SIGTERM or SIGINT.",
        discussion: """
            Each setting comes from its flag, else its environment variable, else the --config file (JSON, or \
            key = value lines; keys are the flags without dashes: database-url, database-ca-file, listen, \
            metrics-listen, trusted-proxies, master-key-file, apns-push-url, apns-management-url, apns-ca-file, \
            rate-limit, rate-burst, failed-auth-rate, failed-auth-burst, max-clock-skew, http-idle-timeout, http-read-timeout, statement-timeout, \
            database-wait-timeout, dispatch-workers, retry-deadline, reap-interval, stale-grace, lifetime-margin, \
            channel-retirement-delay, token-expiry-days, start-registration-timeout). Prints `listening on HOST:PORT` once the API accepts \
            connections and `metrics on HOST:PORT` once the metrics listener does, and exits 0 after a graceful \
            shutdown.
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

    @Option(help: "Seconds a client's timestamp may be ahead of the server's clock (default: $LIVECAST_MAX_CLOCK_SKEW, else 60).")
    var maxClockSkew: Int?

    @Option(
        help:
            "Seconds after a feed's start within which the device's app should register the activity; a feed counts the starts past it with none (default: $LIVECAST_START_REGISTRATION_TIMEOUT, else 300)."
    )
    var startRegistrationTimeout: Int?

    @Option(help: "Dispatcher workers: outbox claims sent at once (default: $LIVECAST_DISPATCH_WORKERS, else 4; 0 runs none here).")
    var dispatchWorkers: Int?

    @Option(
        help:
            "Seconds a push APNs keeps asking to retry stays owed before it is a dead letter; an end is kept while its activity can show (default: $LIVECAST_RETRY_DEADLINE, else 3600)."
    )
    var retryDeadline: Int?

    @Option(help: "Seconds between reaper passes on the one instance holding the lock (default: $LIVECAST_REAP_INTERVAL, else 60; 0 disables).")
    var reapInterval: Int?

    func run() async throws {
        let settings = try self.config.settings()
        let (host, port) = try Self.address(settings.value(self.listen, env: "LIVECAST_LISTEN", key: "listen") ?? "127.0.0.1:8080")
        let (metricsHost, metricsPort) = try Self.address(
            settings.value(self.metricsListen, env: "LIVECAST_METRICS_LISTEN", key: "metrics-listen") ?? "127.0.0.1:9464",
            flag: "--metrics-listen"
        )
        let trustedProxies = try Self.trustedProxies(settings.value(self.trustedProxies, env: "LIVECAST_TRUSTED_PROXIES", key: "trusted-proxies"))
        let idleTimeout = try settings.integer(
            self.httpIdleTimeout,
            env: "LIVECAST_HTTP_IDLE_TIMEOUT",
            key: "http-idle-timeout",
            minimum: 1,
            default: 60
        )
        let readTimeout = try settings.integer(
            self.httpReadTimeout,
            env: "LIVECAST_HTTP_READ_TIMEOUT",
            key: "http-read-timeout",
            minimum: 1,
            default: 30
        )
        let statementTimeout = try settings.integer(
            self.statementTimeout,
            env: "LIVECAST_STATEMENT_TIMEOUT",
            key: "statement-timeout",
            minimum: 0,
            default: 60
        )
        let waitTimeout = try settings.integer(
            self.databaseWaitTimeout,
            env: "LIVECAST_DATABASE_WAIT_TIMEOUT",
            key: "database-wait-timeout",
            minimum: 1,
            default: 10
        )
        let rateLimit = try settings.positiveNumber(self.rateLimit, env: "LIVECAST_RATE_LIMIT", key: "rate-limit", default: 50)
        let rateBurst = try settings.positiveNumber(self.rateBurst, env: "LIVECAST_RATE_BURST", key: "rate-burst", default: 100)
        let failedAuthRate = try settings.positiveNumber(self.failedAuthRate, env: "LIVECAST_FAILED_AUTH_RATE", key: "failed-auth-rate", default: 1)
        let failedAuthBurst = try settings.positiveNumber(
            self.failedAuthBurst,
            env: "LIVECAST_FAILED_AUTH_BURST",
            key: "failed-auth-burst",
            default: 20
        )
        let maxClockSkew = try settings.integer(self.maxClockSkew, env: "LIVECAST_MAX_CLOCK_SKEW", key: "max-clock-skew", minimum: 0, default: 60)
        let startRegistrationTimeout = try settings.integer(
            self.startRegistrationTimeout,
            env: "LIVECAST_START_REGISTRATION_TIMEOUT",
            key: "start-registration-timeout",
            minimum: 1,
            default: 300
        )
        let migrations = try self.migrations.load()
        let masterKey = try self.masterKey.masterKey(settings)
        let overrides = try self.apns.overrides(settings)
        let workers = try settings.integer(self.dispatchWorkers, env: "LIVECAST_DISPATCH_WORKERS", key: "dispatch-workers", minimum: 0, default: 4)
        let retryDeadline = try settings.integer(self.retryDeadline, env: "LIVECAST_RETRY_DEADLINE", key: "retry-deadline", minimum: 1, default: 3600)
        let reapInterval = try settings.integer(self.reapInterval, env: "LIVECAST_REAP_INTERVAL", key: "reap-interval", minimum: 0, default: 60)
        let reaperPolicy = try self.reaper.policy(settings)
        LoggingSystem.bootstrap { DeferredMetadataLogHandler(writingTo: StreamLogHandler.standardError(label: $0)) }
        let logger = Logger(label: "livecast")

        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(LivecastMetrics.factory(registry: registry))
        let livecast = LivecastApplication(
            settings: .init(
                database: try self.database.configuration(settings),
                host: host,
                port: port,
                metricsHost: metricsHost,
                metricsPort: metricsPort,
                httpIdleTimeout: .seconds(idleTimeout),
                httpReadTimeout: .seconds(readTimeout),
                statementTimeout: statementTimeout > 0 ? .seconds(statementTimeout) : nil,
                databaseWaitTimeout: .seconds(waitTimeout),
                migrations: migrations,
                masterKey: masterKey,
                apnsOverrides: overrides,
                api: .init(
                    rateLimit: .init(ratePerSecond: rateLimit, burst: rateBurst),
                    failedAuthenticationLimit: .init(ratePerSecond: failedAuthRate, burst: failedAuthBurst),
                    trustedProxies: trustedProxies,
                    maximumClockSkew: maxClockSkew,
                    startRegistrationTimeout: startRegistrationTimeout
                ),
                dispatchWorkers: workers,
                dispatch: .init(retryDeadlineSeconds: retryDeadline),
                reapInterval: reapInterval,
                reaperPolicy: reaperPolicy
            ),
            metrics: registry,
            logger: logger,
            onServerRunning: { port in FileHandle.standardOutput.write(Data("listening on \(host):\(port)\n".utf8)) },
            onMetricsServerRunning: { port in FileHandle.standardOutput.write(Data("metrics on \(metricsHost):\(port)\n".utf8)) }
        )
        do {
            try await livecast.application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch  where ListenerAddressInUse.isAddressInUse(error) {
            throw ListenerAddressInUse(listener: "API", address: "\(host):\(port)", setting: "--listen (LIVECAST_LISTEN)")
        }
    }

    /// `HOST:PORT`, with `[v6]:PORT` for IPv6 addresses.
    static func address(_ text: String, flag: String = "--listen") throws -> (host: String, port: Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw ValidationError("\(flag) must be HOST:PORT, such as 127.0.0.1:8080")
        }
        let host = text[..<colon].trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard !host.isEmpty else { throw ValidationError("\(flag) must name a host, such as 0.0.0.0:8080") }
        return (host, port)
    }

    /// The `--trusted-proxies` list; none when not given.
    static func trustedProxies(_ text: String?) throws -> TrustedProxies {
        guard let text else { return .none }
        do {
            return try TrustedProxies(parsing: text)
        } catch {
            throw ValidationError("--trusted-proxies: \(error)")
        }
    }
}
