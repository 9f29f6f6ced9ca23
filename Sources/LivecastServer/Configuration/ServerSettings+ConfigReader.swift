package import Configuration
import LivecastCore
import LivecastService
import LivecastSettings
import LivecastStore
import PostgresNIO

extension ConfigReader {
    /// A `HOST:PORT` setting; `fallback` when none is given.
    func listenAddress(_ key: String, default fallback: ListenAddress) throws -> ListenAddress {
        let text = self.text(key, default: fallback.description) ?? fallback.description
        guard let address = ListenAddress(parsing: text) else {
            throw InvalidSetting(key: key, value: text, allowed: "must be HOST:PORT, such as 127.0.0.1:8080")
        }
        return address
    }
}

extension LivecastAPI.Configuration {
    /// The API's limits, as settings give them; what they leave out keeps its default.
    ///
    /// - Configuration keys:
    ///   - `rate-limit` (positive number, default 50): requests a second one API key may make, sustained.
    ///   - `rate-burst` (positive number, default 100): requests one API key may make at once after a quiet spell.
    ///   - `failed-auth-rate` (positive number, default 1): failed authentications a second per client address and
    ///     per key prefix, sustained, before more are refused with 429.
    ///   - `failed-auth-burst` (positive number, default 20): failed authentications allowed at once.
    ///   - `trusted-proxies` (comma-separated addresses or CIDR blocks, default none): reverse proxies whose
    ///     `X-Forwarded-For` names the client.
    ///   - `max-clock-skew` (whole seconds, 0 or more, default 60): how far ahead of the server's clock a client's
    ///     timestamp may be.
    ///   - `console-idle-timeout` (whole seconds, 60 or more, default 1800): how long a console session may go
    ///     unused before it ends.
    ///   - `start-registration-timeout` (whole seconds, 1 or more, default 300): after a feed's start within which
    ///     the device's app should register the activity.
    ///   - `retry-deadline`: as ``Dispatcher/Settings/init(reader:)`` reads it, for replayed dead letters; and
    ///     `activity-lifetime`, which a feed's renewal must fall within.
    ///   - The client keys' bounds (``ClientLimits``): `client-device-rate` (positive number, default 60) and
    ///     `client-address-rate` (positive number, default 600), requests a minute per device and per client address;
    ///     `client-device-tokens` and `client-device-activities` (whole numbers, 1 or more, default 32 each), live
    ///     push-to-start tokens and running activities per device; `client-new-devices` (whole number, 1 or more,
    ///     default 10,000), new devices client keys may register for one app in an hour, across every instance;
    ///     `client-address-share` (whole percent, 1 to 100, default 5), the share of those one client address may bring.
    /// - Throws: ``InvalidSetting`` for a value out of range.
    package init(reader: ConfigReader) throws {
        self.init()
        self.rateLimit = RateLimit(
            ratePerSecond: try reader.positiveNumber("rate-limit", default: self.rateLimit.ratePerSecond),
            burst: try reader.positiveNumber("rate-burst", default: self.rateLimit.burst)
        )
        self.failedAuthenticationLimit = RateLimit(
            ratePerSecond: try reader.positiveNumber("failed-auth-rate", default: self.failedAuthenticationLimit.ratePerSecond),
            burst: try reader.positiveNumber("failed-auth-burst", default: self.failedAuthenticationLimit.burst)
        )
        if let proxies = reader.text("trusted-proxies") {
            do {
                self.trustedProxies = try TrustedProxies(parsing: proxies)
            } catch {
                throw InvalidSetting(key: "trusted-proxies", value: proxies, allowed: "must be addresses or CIDR blocks: \(error)")
            }
        }
        self.maximumClockSkew = try reader.seconds("max-clock-skew", atLeast: 0, default: self.maximumClockSkew)
        self.startRegistrationTimeout = try reader.seconds("start-registration-timeout", atLeast: 1, default: self.startRegistrationTimeout)
        self.consoleIdleTimeout = try reader.seconds("console-idle-timeout", atLeast: 60, default: self.consoleIdleTimeout)
        let dispatch = try Dispatcher.Settings(reader: reader)
        self.retryDeadline = dispatch.retryDeadline
        self.activityLifetime = dispatch.activityLifetime
        self.clientLimits = ClientLimits(
            perDevice: .perMinute(try reader.positiveNumber("client-device-rate", default: self.clientLimits.perDevice.burst)),
            perAddress: .perMinute(try reader.positiveNumber("client-address-rate", default: self.clientLimits.perAddress.burst)),
            pushToStartTokensPerDevice: try reader.wholeNumber(
                "client-device-tokens",
                atLeast: 1,
                default: self.clientLimits.pushToStartTokensPerDevice
            ),
            activitiesPerDevice: try reader.wholeNumber("client-device-activities", atLeast: 1, default: self.clientLimits.activitiesPerDevice),
            newDevicesPerHour: try reader.wholeNumber("client-new-devices", atLeast: 1, default: self.clientLimits.newDevicesPerHour),
            addressSharePercent: try reader.wholeNumber("client-address-share", atLeast: 1, default: self.clientLimits.addressSharePercent)
        )
        guard self.clientLimits.addressSharePercent <= 100 else {
            throw InvalidSetting(
                key: "client-address-share",
                value: "\(self.clientLimits.addressSharePercent)",
                allowed: "must be a whole percent, 1 to 100"
            )
        }
    }
}

extension LivecastApplication.Settings {
    /// What `livecast serve` runs: the whole service, as settings give it.
    ///
    /// - Configuration keys:
    ///   - `listen` (`HOST:PORT`, default `127.0.0.1:8080`): the API's address; port 0 picks a free one.
    ///   - `metrics-listen` (`HOST:PORT`, default `127.0.0.1:9464`): the metrics listener's (`GET /metrics`).
    ///   - `http-idle-timeout` (whole seconds, 1 or more, default 60): an API connection may sit idle, a half-sent
    ///     request head included, before it is closed.
    ///   - `http-read-timeout` (whole seconds, 1 or more, default 30): a request may take to arrive, head to end of
    ///     body, before its connection is closed.
    ///   - `statement-timeout` (whole seconds, 0 or more, default 60; 0 sets none): PostgreSQL's
    ///     `statement_timeout` on the service's connections.
    ///   - `database-wait-timeout` (whole seconds, 1 or more, default 10): a request may wait on PostgreSQL before
    ///     it is answered `503 database_unavailable`.
    ///   - `dispatch-workers` (whole number, 0 or more, default 4; 0 runs none here): outbox claims sent at once.
    ///   - `reap-interval` (whole seconds, 0 or more, default 60; 0 disables): between reaper passes, on the one
    ///     instance holding the lock.
    ///   - `webhook-workers` (whole number, 0 or more, default 4; 0 runs none here): webhook endpoints delivered to at
    ///     once, where dispatcher workers run.
    ///   - `webhook-allow-private` (boolean, default false) and `webhook-timeout` (whole seconds, 1 or more, default
    ///     10): as ``WebhookDeliverer/Settings/init(reader:)`` reads them.
    ///   - `apple-metrics-interval` (whole seconds, 0 or more, default 3600; 0 disables): between runs of the job
    ///     that fetches Apple's delivery figures, on the one instance holding its lock; each run fetches only what
    ///     is missing, so it works daily. The keys of ``AppleMetricsJob/Settings/init(reader:)``.
    ///   - The keys of `PostgresClient.Configuration(reader:)`, `MasterKey(reader:)`, `Migration.load(reader:)`,
    ///     ``AppClients/Overrides/init(reader:)``, ``LivecastAPI/Configuration/init(reader:)``,
    ///     ``Dispatcher/Settings/init(reader:)`` and ``ReaperPolicy/init(reader:)``.
    /// - Throws: ``InvalidSetting`` naming the first setting that is missing or out of range.
    package init(reader: ConfigReader) throws {
        let listen = try reader.listenAddress("listen", default: ListenAddress(host: "127.0.0.1", port: 8080))
        let metrics = try reader.listenAddress("metrics-listen", default: ListenAddress(host: "127.0.0.1", port: 9464))
        let statementTimeout = try reader.seconds("statement-timeout", atLeast: 0, default: .seconds(60))
        let webhooks = try WebhookDeliverer.Settings(reader: reader)
        self.init(
            database: try PostgresClient.Configuration(reader: reader),
            host: listen.host,
            port: listen.port,
            metricsHost: metrics.host,
            metricsPort: metrics.port,
            httpIdleTimeout: try reader.seconds("http-idle-timeout", atLeast: 1, default: .seconds(60)),
            httpReadTimeout: try reader.seconds("http-read-timeout", atLeast: 1, default: .seconds(30)),
            statementTimeout: statementTimeout > .zero ? statementTimeout : nil,
            databaseWaitTimeout: try reader.seconds("database-wait-timeout", atLeast: 1, default: .seconds(10)),
            migrations: try Migration.load(reader: reader),
            masterKey: try MasterKey(reader: reader),
            apnsOverrides: try AppClients.Overrides(reader: reader),
            api: try LivecastAPI.Configuration(reader: reader),
            dispatchWorkers: try reader.wholeNumber("dispatch-workers", atLeast: 0, default: 4),
            dispatch: try Dispatcher.Settings(reader: reader),
            reapInterval: try reader.seconds("reap-interval", atLeast: 0, default: .seconds(60)),
            reaperPolicy: try ReaperPolicy(reader: reader),
            webhookWorkers: try reader.wholeNumber("webhook-workers", atLeast: 0, default: 4),
            webhookAllowPrivate: webhooks.allowPrivate,
            webhookTimeout: webhooks.timeout
        )
        self.appleMetricsInterval = try reader.seconds("apple-metrics-interval", atLeast: 0, default: .seconds(3600))
        self.appleMetrics = try AppleMetricsJob.Settings(reader: reader)
    }
}
