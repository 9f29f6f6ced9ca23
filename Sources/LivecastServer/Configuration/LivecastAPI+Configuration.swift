package import LivecastStore

extension LivecastAPI {
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
        /// How long an activity stays active before the system ends it (`activity-lifetime`): a feed's
        /// `renewal.before` must be shorter. Defaults to ActivityKit's 8 hours.
        package var activityLifetime: Duration = .seconds(8 * 3600)
        /// How far Apple's figures and Livecast's may differ before the delivery report flags a day (the Apple-metrics
        /// job's threshold). Defaults to `0.05`.
        package var appleMetricsThreshold = 0.05

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
}
