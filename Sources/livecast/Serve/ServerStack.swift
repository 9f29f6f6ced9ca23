import Hummingbird
import LivecastServer
import LivecastService
import LivecastStore
import Logging
import PostgresNIO
import Prometheus
import ServiceLifecycle

/// The HTTP API, the dispatcher service and the periodic reaper wired together as `livecast serve` runs them, for
/// `serve` and `demo`:
/// one PostgreSQL client, one APNs client per app, and the migrations applied before the server accepts connections.
///
/// Run ``application``, then shut ``appClients`` down.
struct ServerStack {
    /// What the stack is built from.
    struct Settings: Sendable {
        /// The PostgreSQL server.
        var database: PostgresClient.Configuration
        /// The address to listen on; port `0` picks a free one.
        var host: String
        var port: Int
        /// Applied before the server accepts connections.
        var migrations: [Migration]
        /// Opens the apps' sealed signing keys.
        var masterKey: MasterKey?
        /// The APNs hosts and trust instead of Apple's (the emulator, a proxy).
        var apnsOverrides: AppClients.Overrides
        /// Requests per API key.
        var rateLimit: RateLimit
        /// Dispatcher workers; `0` runs none in this process.
        var dispatchWorkers: Int
        /// Seconds between reaper passes (on the one instance that takes the lock); `0` runs none here.
        var reapInterval: Int = 0
        /// What the reaper ends, retires, expires and prunes.
        var reaperPolicy = ReaperPolicy()
    }

    /// The PostgreSQL client, a service of ``application``: usable while it runs.
    let database: PostgresClient
    /// The apps' APNs clients; shut them down once ``application`` has stopped.
    let appClients: AppClients
    /// The server, with the PostgreSQL client and the dispatcher as its services.
    let application: Application<RouterResponder<APIRequestContext>>

    /// - Parameters:
    ///   - settings: What to build.
    ///   - metrics: The registry `/metrics` shows; swift-metrics should be bootstrapped over it.
    ///   - logger: The logger of the store, the dispatcher and the server.
    ///   - onServerRunning: Called with the bound port once the server accepts connections.
    init(
        settings: Settings,
        metrics: PrometheusCollectorRegistry,
        logger: Logger,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) {
        let database = PostgresClient(configuration: settings.database, backgroundLogger: logger)
        let appClients = AppClients(apps: Apps(client: database, masterKey: settings.masterKey, logger: logger), overrides: settings.apnsOverrides, logger: logger)
        let clientForApp: Dispatcher.ClientForApp = { appID in
            let app = try await appClients.client(forApp: appID)
            return (app.client, app.bundleID)
        }
        let dispatcher = DispatcherService(
            dispatcher: Dispatcher(database: database, clientForApp: clientForApp, logger: logger),
            database: database,
            workers: settings.dispatchWorkers,
            logger: logger
        )
        let isDispatcherRunning: @Sendable () -> Bool = { dispatcher.isRunning }
        let api = LivecastAPI(
            database: database,
            appClients: appClients,
            metrics: metrics,
            readiness: Readiness(migrations: settings.migrations, isDispatcherRunning: settings.dispatchWorkers > 0 ? isDispatcherRunning : nil),
            configuration: .init(rateLimit: settings.rateLimit),
            logger: logger
        )
        let port = settings.port
        var application = Application(
            router: api.buildRouter(),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: "livecast"),
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? port) },
            logger: logger
        )
        application.addServices(database)
        let migrations = settings.migrations
        let (migrated, migratedContinuation) = AsyncStream.makeStream(of: Void.self)
        application.beforeServerStarts {
            let report = try await MigrationRunner(migrations: migrations).run(on: database, logger: logger)
            for name in report.applied { logger.info("Applied migration", metadata: ["migration": "\(name)"]) }
            migratedContinuation.finish()
        }
        if settings.dispatchWorkers > 0 { application.addServices(AfterMigrations(migrated: migrated, service: dispatcher)) }
        application.addServices(OutboxGauges(database: database, logger: logger))
        if settings.reapInterval > 0 {
            let reaper = Reaper(database: database, clientForApp: clientForApp, policy: settings.reaperPolicy, logger: logger)
            application.addServices(ReaperService(reaper: reaper, interval: .seconds(settings.reapInterval), logger: logger))
        }
        self.database = database
        self.appClients = appClients
        self.application = application
    }
}

/// Runs a service once the migrations are applied, so that it never meets a schema that is not there yet (a new
/// database), and not at all when they fail or the server stops first.
private struct AfterMigrations: Service {
    /// Finishes when the migrations are applied.
    let migrated: AsyncStream<Void>
    let service: any Service

    func run() async throws {
        await cancelWhenGracefulShutdown { for await _ in self.migrated {} }
        guard !Task.isCancelled, !Task.isShuttingDownGracefully else { return }
        try await self.service.run()
    }
}
