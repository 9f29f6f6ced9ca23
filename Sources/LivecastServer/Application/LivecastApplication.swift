package import Hummingbird
import LivecastService
import LivecastStore
import Logging
import NIOCore
package import PostgresNIO
package import Prometheus
import ServiceLifecycle

/// The whole running Livecast service, built from its settings: the one composition root that `livecast serve`,
/// `livecast demo` and the tests share.
///
/// Everything long-running is a service of ``application``, started in this order and stopped in reverse: the
/// PostgreSQL client, the watch that answers 503 while PostgreSQL does not (``DatabaseWatch``), the apps' APNs
/// clients, the dispatcher (once the migrations are applied), the outbox gauges, the periodic reaper, the metrics
/// listener (`/metrics` on an address of its own), and last the HTTP server, which applies the migrations before it
/// accepts connections.
///
/// ```swift
/// let livecast = LivecastApplication(settings: settings, metrics: registry, logger: logger) { port in print(port) }
/// try await livecast.application.runService(gracefulShutdownSignals: [.sigterm, .sigint])
/// ```
package struct LivecastApplication: Sendable {
    /// The PostgreSQL client; usable while ``application`` runs.
    package let database: PostgresClient
    /// The HTTP API that ``application`` serves.
    package let api: LivecastAPI
    /// The server with every other part as its services.
    package let application: Application<RouterResponder<APIRequestContext>>

    /// - Parameters:
    ///   - settings: What to build.
    ///   - metrics: The registry `/metrics` shows; swift-metrics should be bootstrapped over it
    ///     (``LivecastMetrics/factory(registry:)``).
    ///   - logger: The logger of the store, the dispatcher, the APNs clients and the server.
    ///   - onServerRunning: Called with the bound port once the server accepts connections.
    ///   - onMetricsServerRunning: Called with the metrics listener's bound port once it accepts connections.
    package init(
        settings: Settings,
        metrics: PrometheusCollectorRegistry,
        logger: Logger,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in },
        onMetricsServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        let configuration = settings.database.forService(statementTimeout: settings.statementTimeout)
        let database = PostgresClient(
            configuration: configuration,
            eventLoopGroup: SpreadEventLoops(base: PostgresClient.defaultEventLoopGroup),
            backgroundLogger: logger
        )
        let databaseWatch = DatabaseWatch(database: configuration, waitTimeout: settings.databaseWaitTimeout, logger: logger)
        let apps = Apps(client: database, masterKey: settings.masterKey, logger: logger)
        let appClients = AppClients(apps: apps, overrides: settings.apnsOverrides, logger: logger)
        let dispatcher = DispatcherService(
            dispatcher: Dispatcher(database: database, appClients: appClients, settings: settings.dispatch, logger: logger),
            database: database,
            workers: settings.dispatchWorkers,
            logger: logger
        )
        let isDispatcherRunning: @Sendable () -> Bool = { dispatcher.isRunning }
        var apiConfiguration = settings.api
        apiConfiguration.retryDeadline = settings.dispatch.retryDeadline
        apiConfiguration.activityLifetime = settings.dispatch.activityLifetime
        apiConfiguration.masterKey = settings.masterKey
        apiConfiguration.webhookAllowPrivate = settings.webhookAllowPrivate
        apiConfiguration.appleMetricsThreshold = settings.appleMetrics.threshold
        let api = LivecastAPI(
            database: database,
            appClients: appClients,
            metrics: metrics,
            readiness: Readiness(
                migrations: settings.migrations,
                isDispatcherRunning: settings.dispatchWorkers > 0 ? isDispatcherRunning : nil
            ),
            databaseWatch: databaseWatch,
            configuration: apiConfiguration,
            logger: logger
        )
        let port = settings.port
        let readTimeout = settings.httpReadTimeout
        var application = Application(
            router: api.buildRouter(),
            server: .http1(
                configuration: .init(
                    additionalChannelHandlers: [RequestReadTimeout(timeout: .init(readTimeout))],
                    idleTimeout: .init(settings.httpIdleTimeout)
                ),
                executors: .singleton
            ),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "livecast"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
        application.addServices(database, databaseWatch, api.keyCache, appClients)
        let migrations = settings.migrations
        let (migrated, migratedContinuation) = AsyncStream.makeStream(of: Void.self)
        application.beforeServerStarts {
            let report = try await MigrationRunner(migrations: migrations).run(on: database, logger: logger)
            for name in report.applied { logger.info("Applied migration", metadata: ["migration": "\(name)"]) }
            migratedContinuation.finish()
        }
        if settings.dispatchWorkers > 0 {
            var afterMigrations: [any Service] = [dispatcher, ScheduledSendsService(intake: api.updateIntake, logger: logger)]
            if settings.webhookWorkers > 0 {
                var webhooks = WebhookDeliverer.Settings()
                webhooks.allowPrivate = settings.webhookAllowPrivate
                webhooks.timeout = settings.webhookTimeout
                afterMigrations.append(
                    WebhookService(
                        database: database,
                        masterKey: settings.masterKey,
                        settings: webhooks,
                        workers: settings.webhookWorkers,
                        logger: logger
                    )
                )
            }
            application.addServices(AfterMigrations(migrated: migrated, services: afterMigrations))
        }
        application.addServices(
            OutboxGauges(database: database, startRegistrationTimeout: settings.api.startRegistrationTimeout, logger: logger)
        )
        if settings.reapInterval > .zero {
            var policy = settings.reaperPolicy
            policy.activityLifetime = settings.dispatch.activityLifetime
            let reaper = Reaper(database: database, appClients: appClients, policy: policy, logger: logger)
            application.addServices(ReaperService(reaper: reaper, interval: settings.reapInterval))
        }
        if settings.appleMetricsInterval > .zero {
            var appleMetrics = settings.appleMetrics
            appleMetrics.caFile = appleMetrics.caFile ?? settings.apnsOverrides.caFile
            let job = AppleMetricsJob(database: database, masterKey: settings.masterKey, settings: appleMetrics, logger: logger)
            application.addServices(AppleMetricsService(job: job, interval: settings.appleMetricsInterval))
        }
        if let metricsPort = settings.metricsPort {
            application.addServices(
                NamedListener(
                    listener: Application(
                        router: api.buildMetricsRouter(),
                        configuration: .init(address: .hostname(settings.metricsHost, port: metricsPort), serverName: "livecast"),
                        onServerRunning: { channel in await onMetricsServerRunning(channel.localAddress?.port ?? metricsPort) },
                        logger: logger
                    ),
                    failure: ListenerAddressInUse(
                        listener: "metrics",
                        address: ListenAddress(host: settings.metricsHost, port: metricsPort).description,
                        setting: "--metrics-listen (LIVECAST_METRICS_LISTEN)"
                    )
                )
            )
        }
        self.database = database
        self.api = api
        self.application = application
    }
}
