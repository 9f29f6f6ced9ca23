package import Hummingbird
package import LivecastService
package import LivecastStore
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
    /// Settings of the API.
    package struct Configuration: Sendable {
        /// The per-key rate limit. Defaults to 50 requests a second with bursts of 100.
        package var rateLimit: RateLimit
        /// Failed authentications one client address, and one key prefix, may make before more are refused (`429`)
        /// for a while. Defaults to 20 at once, then one a second.
        package var failedAuthenticationLimit: RateLimit
        /// The reverse proxies whose `X-Forwarded-For` names the client's address. Defaults to none: the client's
        /// address is the peer's.
        package var trustedProxies: TrustedProxies
        /// Channels an app may have before creation is refused, ahead of APNs. Defaults to APNs' 10,000.
        package var channelLimit: Int
        /// How far ahead of the server's clock a client's `timestamp` may be (`422 timestamp_too_far_ahead`
        /// beyond): a later one would hold back every update of its target. Defaults to 60 seconds.
        package var maximumClockSkew: Duration
        /// How long a replayed dead letter is tried again (the dispatcher's `--retry-deadline`). Defaults to an
        /// hour.
        package var retryDeadline: Duration
        /// How long after a feed's start the device's app should register the started activity; a feed counts the
        /// starts past it with none (`starts.unregistered`). Defaults to 5 minutes.
        package var startRegistrationTimeout: Duration
        /// The bounds of client keys, which apps embed and publish.
        package var clientLimits: ClientLimits
        /// How long a console session may go unused before it ends (besides its 12-hour cap). Defaults to 30
        /// minutes.
        package var consoleIdleTimeout: Duration
        /// Seals the secrets of webhook endpoints; creating one, or rotating its secret, is refused
        /// (`409 master_key_required`) without it. Defaults to none.
        package var masterKey: MasterKey?
        /// Whether a webhook endpoint's URL may name an address of this host, the private network or the link-local
        /// range (``WebhookURL``). Defaults to `false`.
        package var webhookAllowPrivate: Bool
        /// How long `GET /ready` serves its answer again before asking PostgreSQL anew (``ReadinessCache``).
        /// Defaults to 1 second.
        package var readinessLifetime: Duration

        package init(
            rateLimit: RateLimit = .perKey,
            failedAuthenticationLimit: RateLimit = .failedAuthentications,
            trustedProxies: TrustedProxies = .none,
            channelLimit: Int = Channels.apnsLimit,
            maximumClockSkew: Duration = .seconds(60),
            retryDeadline: Duration = .seconds(3600),
            startRegistrationTimeout: Duration = Feeds.defaultRegistrationTimeout,
            clientLimits: ClientLimits = .init(),
            consoleIdleTimeout: Duration = ConsoleSessions.defaultIdleTimeout,
            masterKey: MasterKey? = nil,
            webhookAllowPrivate: Bool = false,
            readinessLifetime: Duration = .seconds(1)
        ) {
            self.rateLimit = rateLimit
            self.failedAuthenticationLimit = failedAuthenticationLimit
            self.trustedProxies = trustedProxies
            self.channelLimit = channelLimit
            self.maximumClockSkew = maximumClockSkew
            self.retryDeadline = retryDeadline
            self.startRegistrationTimeout = startRegistrationTimeout
            self.clientLimits = clientLimits
            self.consoleIdleTimeout = consoleIdleTimeout
            self.masterKey = masterKey
            self.webhookAllowPrivate = webhookAllowPrivate
            self.readinessLifetime = readinessLifetime
        }
    }

    let database: PostgresClient
    let appClients: AppClients
    let metrics: PrometheusCollectorRegistry
    let readiness: Readiness
    let databaseWatch: DatabaseWatch
    /// The callers of keys that authenticated; a service that must run beside the API (``LivecastApplication`` adds
    /// it).
    let keyCache: KeyCache
    /// Writes concurrent push-to-start registrations together.
    let pushToStartRegistrar: PushToStartRegistrar
    /// Accepts concurrent updates and ends of standalone activities together.
    let activityUpdates: ActivityUpdateQueue
    /// `/ready`'s answer, kept for ``Configuration/readinessLifetime``.
    let readinessCache: ReadinessCache
    /// The bulk imports running on this instance.
    let importSlots = ImportSlots()
    /// Failed authentications per client address, the API's and the console's together (an unknown session
    /// cookie counts as one).
    let failedAuthentications: RateLimiter<String>
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
    ///   - logger: The store's logger; requests log through Hummingbird's per-request logger.
    package init(
        database: PostgresClient,
        appClients: AppClients,
        metrics: PrometheusCollectorRegistry,
        readiness: Readiness,
        databaseWatch: DatabaseWatch,
        configuration: Configuration = Configuration(),
        logger: Logger
    ) {
        self.database = database
        self.appClients = appClients
        self.metrics = metrics
        self.readiness = readiness
        self.databaseWatch = databaseWatch
        self.keyCache = KeyCache(database: database, logger: logger)
        self.pushToStartRegistrar = PushToStartRegistrar(client: database, logger: logger)
        self.activityUpdates = ActivityUpdateQueue(client: database, logger: logger)
        self.failedAuthentications = RateLimiter(configuration: configuration.failedAuthenticationLimit)
        self.readinessCache = ReadinessCache(lifetime: configuration.readinessLifetime)
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
        router.get("/ready") { _, context in try await self.readyResponse(withDetail: true, logger: context.logger) }
        return router
    }

    /// The router and the routes it holds.
    func makeRouter() -> (router: Router<APIRequestContext>, routes: [APIRoute]) {
        let router = Router(context: APIRequestContext.self)
        router.add(middleware: StrictTransportSecurityMiddleware(trustedProxies: self.configuration.trustedProxies))
        router.add(middleware: RequestMetricsMiddleware())
        router.add(middleware: APIErrorMiddleware())
        let clients = ClientKeys(limits: self.configuration.clientLimits)
        let authentication = APIKeyMiddleware(
            keys: self.keys,
            keyCache: self.keyCache,
            perKey: RateLimiter(configuration: self.configuration.rateLimit),
            failuresByAddress: self.failedAuthentications,
            failures: self.configuration.failedAuthenticationLimit,
            trustedProxies: self.configuration.trustedProxies,
            databaseWatch: self.databaseWatch,
            clients: clients
        )
        let registrar = RouteRegistrar(router: router, authentication: authentication, databaseWatch: self.databaseWatch, clients: clients)
        self.addOperationsRoutes(to: registrar)
        self.addAppRoutes(to: registrar)
        self.addKeyRoutes(to: registrar)
        self.addIdentityKeyRoutes(to: registrar)
        self.addPushToStartTokenRoutes(to: registrar)
        self.addActivityRoutes(to: registrar)
        self.addDeviceRoutes(to: registrar)
        self.addImportRoutes(to: registrar)
        self.addActivityUpdateRoutes(to: registrar)
        self.addFeedUpdateRoutes(to: registrar)
        self.addFeedRoutes(to: registrar)
        self.addChannelRoutes(to: registrar)
        self.addUpdateStatusRoutes(to: registrar)
        self.addRecordRoutes(to: registrar)
        self.addReadRoutes(to: registrar)
        self.addDeadLetterRoutes(to: registrar)
        self.addEventRoutes(to: registrar)
        self.addWebhookRoutes(to: registrar)
        self.addOverviewRoutes(to: registrar)
        return (router, registrar.routes)
    }

    var keys: APIKeys { APIKeys(client: self.database, logger: self.logger) }
    var apps: Apps { Apps(client: self.database, masterKey: nil, logger: self.logger) }

    /// The channel registry of an app, over its APNs client.
    func channels(_ scope: AppScope) async throws -> ChannelRegistry {
        let apns = try await self.appClients.client(forApp: scope.appID)
        return ChannelRegistry(
            channels: Channels(client: self.database, logger: self.logger),
            apns: apns.client,
            limit: self.configuration.channelLimit,
            logger: self.logger
        )
    }
}
