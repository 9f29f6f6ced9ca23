package import Hummingbird
package import LivecastService
import LivecastStore
import Logging
package import PostgresNIO
package import Prometheus

/// The Livecast HTTP API: builds the router with every route, API-key auth, per-key rate limits, the error
/// format, request metrics, health checks and the OpenAPI document; and the router of the metrics listener.
///
/// ```swift
/// let api = LivecastAPI(database: client, appClients: clients, metrics: registry, readiness: .init(migrations: migrations), logger: logger)
/// let app = Application(router: api.buildRouter(), configuration: .init(address: .hostname("127.0.0.1", port: 8080)))
/// ```
package struct LivecastAPI: Sendable {
    let database: PostgresClient
    let metrics: PrometheusCollectorRegistry
    let databaseWatch: DatabaseWatch
    /// The callers of keys that authenticated; a service that must run beside the API (``LivecastApplication`` adds
    /// it).
    let keyCache: KeyCache
    /// `/ready`'s answer, here and on the metrics listener.
    let readiness: ReadinessReport
    /// Checks and stores starts, updates and ends, posted or scheduled (``ScheduledSendsService``).
    let updateIntake: UpdateIntake
    /// Failed authentications per client address, the API's and the console's together (an unknown session
    /// cookie counts as one).
    let failedAuthentications: RateLimiter<String>
    /// The routes of each resource.
    let controllers: [any APIController]
    /// What client keys are held to: their device header, rate limits and gate.
    let clients: ClientKeys
    let configuration: Configuration
    let logger: Logger

    /// - Parameters:
    ///   - database: The running PostgreSQL client.
    ///   - appClients: The APNs clients of the apps (channels are managed at APNs).
    ///   - metrics: The registry the metrics listener's `/metrics` shows; bootstrap swift-metrics with a `PrometheusMetricsFactory` over it
    ///     (``LivecastMetrics/factory(registry:)``) so the request metrics and other components' land there.
    ///   - readiness: What `/ready` checks.
    ///   - databaseWatch: Whether PostgreSQL answers; requests get `503 database_unavailable` while it does not.
    ///   - configuration: Rate limits and caps. Defaults to ``Configuration/init(rateLimit:channelLimit:)``'s.
    ///   - logger: The logger of what outlives a request (the key cache, the batched writes); each route's store
    ///     logs to its request's logger.
    package init(
        database: PostgresClient,
        appClients: AppClients,
        metrics: PrometheusCollectorRegistry,
        readiness: Readiness,
        databaseWatch: DatabaseWatch,
        configuration: Configuration = Configuration(),
        logger: Logger
    ) {
        let apps = Apps(client: database, masterKey: nil, logger: logger)
        let keyCache = KeyCache(database: database, logger: logger)
        let report = ReadinessReport(
            database: database,
            apps: apps,
            appClients: appClients,
            readiness: readiness,
            databaseWatch: databaseWatch,
            cache: ReadinessCache(lifetime: configuration.readinessLifetime)
        )
        let intake = UpdateIntake(
            dateChecks: DateChecks(maximumClockSkew: configuration.maximumClockSkew),
            feedStarts: FeedStarts(client: database, logger: logger),
            feedUpdates: FeedUpdates(client: database, logger: logger),
            activityUpdates: ActivityUpdateQueue(client: database, logger: logger),
            scheduled: ScheduledUpdates(client: database, logger: logger)
        )
        let clients = ClientKeys(limits: configuration.clientLimits, gate: ClientGate(client: database, logger: logger))
        let channels = ChannelRegistries(
            channels: Channels(client: database, logger: logger),
            appClients: appClients,
            limit: configuration.channelLimit
        )
        let records = Records(client: database, logger: logger)
        self.controllers = [
            OperationsController(readiness: report),
            AppController(
                apps: apps,
                records: records,
                appleMetricsCredentials: AppleMetricsCredentials(client: database, logger: logger),
                appleMetricsExports: AppleMetricsExports(client: database, logger: logger),
                appClients: appClients,
                readiness: report,
                channelLimit: configuration.channelLimit,
                startRegistrationTimeout: configuration.startRegistrationTimeout
            ),
            KeyController(keys: APIKeys(client: database, logger: logger), keyCache: keyCache),
            IdentityKeyController(identityKeys: IdentityKeys(client: database, logger: logger)),
            RegistrationController(
                records: records,
                renewalEnds: RenewalEnds(database: database, logger: logger),
                pushToStartRegistrar: PushToStartRegistrar(client: database, logger: logger),
                pushToStartTokens: PushToStartTokens(client: database, logger: logger),
                activities: Activities(client: database, logger: logger),
                devices: Devices(client: database, logger: logger),
                admission: ClientAdmission(identityKeys: IdentityKeys(client: database, logger: logger), clients: clients)
            ),
            ImportController(importer: RegistrationImporter(database: database, logger: logger), slots: ImportSlots()),
            UpdateController(records: records, intake: intake, responses: UpdateResponses(client: database, logger: logger)),
            FeedController(
                feeds: Feeds(client: database, logger: logger),
                records: records,
                channels: channels,
                startRegistrationTimeout: configuration.startRegistrationTimeout,
                activityLifetime: configuration.activityLifetime
            ),
            ChannelController(registries: channels),
            RecordController(records: records, deliveries: DeliveryLog(client: database, logger: logger)),
            DeadLetterController(
                records: records,
                replay: DeadLetterReplay(database: database, retryDeadline: configuration.retryDeadline, logger: logger)
            ),
            EventController(events: Events(client: database, logger: logger)),
            WebhookController(
                endpoints: WebhookEndpoints(client: database, logger: logger),
                masterKey: configuration.masterKey,
                allowPrivate: configuration.webhookAllowPrivate
            ),
            AppleMetricsController(
                credentials: AppleMetricsCredentials(client: database, logger: logger),
                exports: AppleMetricsExports(client: database, logger: logger),
                reports: DeliveryReports(client: database, logger: logger),
                masterKey: configuration.masterKey,
                threshold: configuration.appleMetricsThreshold
            ),
        ]
        self.clients = clients
        self.database = database
        self.metrics = metrics
        self.databaseWatch = databaseWatch
        self.keyCache = keyCache
        self.readiness = report
        self.updateIntake = intake
        self.failedAuthentications = RateLimiter(configuration: configuration.failedAuthenticationLimit)
        self.configuration = configuration
        self.logger = logger
    }

    /// The router with every route and middleware, and the operator console at `/console` (``Console``).
    package func buildRouter() -> Router<APIRequestContext> {
        let router = self.makeRouter().router
        let console = Console(
            // Built before the console's routes are added: the console calls the API's routes only.
            api: InProcessAPI(responder: router.buildResponder()),
            sessions: ConsoleSessions(client: self.database, idleTimeout: self.configuration.consoleIdleTimeout, logger: self.logger),
            renderer: ConsoleRenderer(),
            trustedProxies: self.configuration.trustedProxies,
            failedAuthentications: self.failedAuthentications,
            databaseWatch: self.databaseWatch,
            logger: self.logger
        )
        console.addRoutes(to: router)
        return router
    }

    /// The router of the metrics listener, apart from the API's so tenants see nothing of each other: `GET /metrics`
    /// in Prometheus' text format and `GET /ready` with its detail, no key needed, and `404` in the API's error shape
    /// for anything else.
    package func buildMetricsRouter() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: APIErrorMiddleware())
        router.get("/metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: self.metrics.emitToBuffer()))
            )
        }
        // `/ready` with its detail: how many apps' keys cannot be opened or whose sending is held.
        router.get("/ready") { _, context in try await self.readiness.response(withDetail: true, logger: context.logger) }
        return router
    }

    /// The router and the routes it holds.
    func makeRouter() -> (router: Router<APIRequestContext>, routes: [APIRoute]) {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: StrictTransportSecurityMiddleware(trustedProxies: self.configuration.trustedProxies))
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: APIErrorMiddleware())
        let clients = self.clients
        let authentication = APIKeyMiddleware(
            keys: APIKeys(client: self.database, logger: self.logger),
            keyCache: self.keyCache,
            perKey: RateLimiter(configuration: self.configuration.rateLimit),
            failuresByAddress: self.failedAuthentications,
            failures: self.configuration.failedAuthenticationLimit,
            trustedProxies: self.configuration.trustedProxies,
            databaseWatch: self.databaseWatch,
            clients: clients
        )
        let registrar = RouteRegistrar(router: router, authentication: authentication, databaseWatch: self.databaseWatch, clients: clients)
        for controller in self.controllers {
            controller.addRoutes(to: registrar)
        }
        return (router, registrar.routes)
    }
}
