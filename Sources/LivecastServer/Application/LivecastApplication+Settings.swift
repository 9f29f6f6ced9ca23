package import LivecastService
package import LivecastStore
package import PostgresNIO

extension LivecastApplication {
    /// What the running service is built from.
    package struct Settings: Sendable {
        /// The PostgreSQL server.
        package var database: PostgresClient.Configuration
        /// The host to listen on. Defaults to `127.0.0.1`.
        package var host: String
        /// The port to listen on; `0` picks a free one. Defaults to `8080`.
        package var port: Int
        /// The host of the metrics listener (`GET /metrics`), apart from the API. Defaults to `127.0.0.1`.
        package var metricsHost: String
        /// The port of the metrics listener; `0` picks a free one, `nil` runs none. Defaults to `nil` (`livecast
        /// serve` defaults to `9464`).
        package var metricsPort: Int?
        /// How long an API connection may sit with nothing read or written, a request head that has not finished
        /// arriving included, before it is closed. Defaults to 60 seconds.
        package var httpIdleTimeout: Duration
        /// How long a request may take to arrive, from its head to the end of its body, before its connection is
        /// closed. Defaults to 30 seconds.
        package var httpReadTimeout: Duration
        /// PostgreSQL's `statement_timeout` on the service's connections; `nil` sets none. Defaults to 60 seconds.
        package var statementTimeout: Duration?
        /// How long a request may wait on PostgreSQL (for a pool connection, then its queries) before it is answered
        /// `503 database_unavailable`. Defaults to 10 seconds.
        package var databaseWaitTimeout: Duration
        /// Applied before the server accepts connections.
        package var migrations: [Migration]
        /// Opens the apps' sealed signing keys. Defaults to none.
        package var masterKey: MasterKey?
        /// The APNs hosts and trust instead of Apple's (the emulator, a proxy). Defaults to Apple's.
        package var apnsOverrides: AppClients.Overrides
        /// The API's rate limits and caps.
        package var api: LivecastAPI.Configuration
        /// Dispatcher workers; `0` runs none in this process. Defaults to `4`.
        package var dispatchWorkers: Int
        /// How the dispatcher claims, leases and retries.
        package var dispatch: Dispatcher.Settings
        /// The time between reaper passes (on the one instance that takes the lock); zero runs none here. Defaults
        /// to zero.
        package var reapInterval: Duration
        /// What the reaper ends, retires, expires and prunes.
        package var reaperPolicy: ReaperPolicy
        /// Webhook workers: endpoints delivered to at once, when dispatcher workers run here; `0` runs none.
        /// Defaults to `4`.
        package var webhookWorkers: Int
        /// Deliver webhooks to private, loopback and link-local addresses too. Defaults to `false`.
        package var webhookAllowPrivate: Bool
        /// The time between runs of the Apple-metrics job (on the one instance that takes its lock); zero runs none
        /// here. Defaults to zero.
        package var appleMetricsInterval: Duration = .zero
        /// How the Apple-metrics job reaches Apple's data export; it trusts ``apnsOverrides``' CA file too.
        package var appleMetrics = AppleMetricsJob.Settings()
        /// A webhook delivery's limit, from looking its host up to the end of its answer's body. Defaults to 10 seconds.
        package var webhookTimeout: Duration

        /// - Parameters:
        ///   - database: The PostgreSQL server.
        ///   - migrations: The migrations to apply before serving.
        package init(
            database: PostgresClient.Configuration,
            host: String = "127.0.0.1",
            port: Int = 8080,
            metricsHost: String = "127.0.0.1",
            metricsPort: Int? = nil,
            httpIdleTimeout: Duration = .seconds(60),
            httpReadTimeout: Duration = .seconds(30),
            statementTimeout: Duration? = .seconds(60),
            databaseWaitTimeout: Duration = .seconds(10),
            migrations: [Migration],
            masterKey: MasterKey? = nil,
            apnsOverrides: AppClients.Overrides = .init(),
            api: LivecastAPI.Configuration = .init(),
            dispatchWorkers: Int = 4,
            dispatch: Dispatcher.Settings = .init(),
            reapInterval: Duration = .zero,
            reaperPolicy: ReaperPolicy = ReaperPolicy(),
            webhookWorkers: Int = 4,
            webhookAllowPrivate: Bool = false,
            webhookTimeout: Duration = .seconds(10)
        ) {
            self.database = database
            self.host = host
            self.port = port
            self.metricsHost = metricsHost
            self.metricsPort = metricsPort
            self.httpIdleTimeout = httpIdleTimeout
            self.httpReadTimeout = httpReadTimeout
            self.statementTimeout = statementTimeout
            self.databaseWaitTimeout = databaseWaitTimeout
            self.migrations = migrations
            self.masterKey = masterKey
            self.apnsOverrides = apnsOverrides
            self.api = api
            self.dispatchWorkers = dispatchWorkers
            self.dispatch = dispatch
            self.reapInterval = reapInterval
            self.reaperPolicy = reaperPolicy
            self.webhookWorkers = webhookWorkers
            self.webhookAllowPrivate = webhookAllowPrivate
            self.webhookTimeout = webhookTimeout
        }
    }
}
