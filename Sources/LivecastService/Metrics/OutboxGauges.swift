import LivecastStore
import Logging
import Metrics
package import PostgresNIO
import ServiceLifecycle

/// Samples what only the database knows, for Prometheus: `livecast_outbox_pending` (updates waiting or being
/// sent), `livecast_outbox_oldest_pending_seconds`, and `livecast_channels{app}` (live channels per app and
/// environment) beside `livecast_channels_limit` (APNs' 10,000), `livecast_events_written` (events every app's
/// facts have written since the database was made), and per app the last day's feed starts whose registration
/// timeout passed and the share confirmed in time (`livecast_starts_due{app}`,
/// `livecast_start_confirmation_ratio{app}`): APNs answers 200 to a start a device drops, so this share is the one
/// signal of such losses.
package struct OutboxGauges: Service {
    private let database: PostgresClient
    private let interval: Duration
    private let startRegistrationTimeout: Duration
    private let logger: Logger

    /// - Parameters:
    ///   - interval: How often to sample. Defaults to 15 seconds.
    ///   - startRegistrationTimeout: How long after a start its app has to register the activity.
    package init(
        database: PostgresClient,
        interval: Duration = .seconds(15),
        startRegistrationTimeout: Duration = Feeds.defaultRegistrationTimeout,
        logger: Logger
    ) {
        self.database = database
        self.interval = interval
        self.startRegistrationTimeout = startRegistrationTimeout
        self.logger = logger
    }

    package func run() async throws {
        Gauge(label: "livecast_channels_limit").record(Channels.apnsLimit)
        // An interval first: at start the migrations may still be on their way.
        await periodically(every: self.interval) {
            do {
                try await self.sample()
            } catch {
                self.logger.warning("could not sample the outbox gauges", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    private func sample() async throws {
        if let backlog = try await OutboxBacklog.read(client: self.database, logger: self.logger) {
            Gauge(label: "livecast_outbox_pending").record(backlog.pending)
            Gauge(label: "livecast_outbox_oldest_pending_seconds").record(backlog.oldestAge)
        }
        Gauge(label: "livecast_events_written").record(try await Events(client: self.database, logger: self.logger).writtenCount())
        for (app, count) in try await Channels(client: self.database, logger: self.logger).liveCountsByApp() {
            Gauge(label: "livecast_channels", dimensions: [("app", app)]).record(count)
        }
        let starts = try await StartConfirmations.byApp(
            registrationTimeout: self.startRegistrationTimeout,
            client: self.database,
            logger: self.logger
        )
        for (app, confirmations) in starts {
            Gauge(label: "livecast_starts_due", dimensions: [("app", app)]).record(confirmations.due)
            if let ratio = confirmations.ratio {
                Gauge(label: "livecast_start_confirmation_ratio", dimensions: [("app", app)]).record(ratio)
            }
        }
    }
}
