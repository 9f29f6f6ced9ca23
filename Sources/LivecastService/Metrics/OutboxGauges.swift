import LivecastStore
import Logging
import Metrics
package import PostgresNIO
import ServiceLifecycle

/// Samples what only the database knows, for Prometheus: `livecast_outbox_pending` (updates waiting or being
/// sent), `livecast_outbox_oldest_pending_seconds`, and `livecast_channels{app}` (live channels per app and
/// environment) beside `livecast_channels_limit` (APNs' 10,000).
package struct OutboxGauges: Service {
    private let database: PostgresClient
    private let interval: Duration
    private let logger: Logger

    /// - Parameter interval: How often to sample. Defaults to 15 seconds.
    package init(database: PostgresClient, interval: Duration = .seconds(15), logger: Logger) {
        self.database = database
        self.interval = interval
        self.logger = logger
    }

    package func run() async throws {
        Gauge(label: "livecast_channels_limit").record(Channels.apnsLimit)
        // An interval first: at start the migrations may still be on their way.
        while (try? await cancelWhenGracefulShutdown({ try await Task.sleep(for: self.interval) })) != nil, !Task.isShuttingDownGracefully {
            do {
                try await self.sample()
            } catch {
                self.logger.warning("could not sample the outbox gauges", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }

    private func sample() async throws {
        let outbox = try await self.database.guardedQuery(
            """
            SELECT count(*)::int, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
            FROM unfinished_updates
            """,
            logger: self.logger
        )
        for try await (pending, oldest) in outbox.decode((Int, Double).self) {
            Gauge(label: "livecast_outbox_pending").record(pending)
            Gauge(label: "livecast_outbox_oldest_pending_seconds").record(oldest)
        }
        let channels = try await self.database.guardedQuery(
            """
            SELECT a.bundle_id || ' (' || a.environment || ')', count(c.id)::int
            FROM apps a LEFT JOIN channels c ON c.app_id = a.id AND c.state <> \(unescaped: ChannelState.retired.sql)
            GROUP BY a.bundle_id, a.environment
            """,
            logger: self.logger
        )
        for try await (app, count) in channels.decode((String, Int).self) {
            Gauge(label: "livecast_channels", dimensions: [("app", app)]).record(count)
        }
    }
}
