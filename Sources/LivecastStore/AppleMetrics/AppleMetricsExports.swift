import Logging
import PostgresNIO

/// What each of an app's exports from Apple last did, and the figures they brought (`apple_metrics_exports`,
/// `apple_broadcast_days`, `apple_delivery_days`). Storing an export's rows and its progress is one transaction, so a
/// failed or half-read export changes nothing stored before.
package struct AppleMetricsExports: DatabaseBacked {
    /// One export's state, as the app's record shows it.
    package struct State: Sendable, Hashable, Encodable {
        package var dataset: AppleDataset
        /// The channel of a channel export.
        package var channelId: String?
        /// The last day it holds, `yyyy-MM-dd`.
        package var fetchedThrough: String?
        package var lastAttemptAt: String?
        package var lastSuccessAt: String?
        /// What went wrong at its last attempt; absent once it succeeds again.
        package var lastError: String?
        package var lastErrorAt: String?

        package init(
            dataset: AppleDataset,
            channelId: String? = nil,
            fetchedThrough: String? = nil,
            lastAttemptAt: String? = nil,
            lastSuccessAt: String? = nil,
            lastError: String? = nil,
            lastErrorAt: String? = nil
        ) {
            self.dataset = dataset
            self.channelId = channelId
            self.fetchedThrough = fetchedThrough
            self.lastAttemptAt = lastAttemptAt
            self.lastSuccessAt = lastSuccessAt
            self.lastError = lastError
            self.lastErrorAt = lastErrorAt
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// An app's exports, by dataset and channel.
    package func states(appID: Int64) async throws -> [State] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT dataset, channel_id, to_char(fetched_through, 'YYYY-MM-DD'), \(unescaped: Self.time("last_attempt_at")),
                \(unescaped: Self.time("last_success_at")), last_error, \(unescaped: Self.time("last_error_at"))
            FROM apple_metrics_exports WHERE app_id = \(appID) ORDER BY dataset, channel_id
            """,
            logger: self.logger
        )
        var states: [State] = []
        for try await (dataset, channelID, through, attempt, success, error, errorAt) in rows.decode(
            (AppleDataset, String, String?, String?, String?, String?, String?).self
        ) {
            states.append(
                State(
                    dataset: dataset,
                    channelId: channelID.isEmpty ? nil : channelID,
                    fetchedThrough: through,
                    lastAttemptAt: attempt,
                    lastSuccessAt: success,
                    lastError: error,
                    lastErrorAt: errorAt
                )
            )
        }
        return states
    }

    /// The last day an export holds, `yyyy-MM-dd`, or `nil` when it never succeeded.
    package func fetchedThrough(appID: Int64, dataset: AppleDataset, channelID: String?) async throws -> String? {
        let rows = try await self.client.guardedQuery(
            """
            SELECT to_char(fetched_through, 'YYYY-MM-DD') FROM apple_metrics_exports
            WHERE app_id = \(appID) AND dataset = \(dataset) AND channel_id = \(channelID ?? "")
            """,
            logger: self.logger
        )
        for try await day in rows.decode(String?.self) { return day }
        return nil
    }

    /// The channels worth an export since `since` (`yyyy-MM-dd`): live ones, and those retired or gone since.
    package func channels(appID: Int64, since: String) async throws -> [String] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT channel_id FROM channels
            WHERE app_id = \(appID) AND state <> \(unescaped: ChannelState.orphan.sql)
              AND (state = \(unescaped: ChannelState.active.sql) OR coalesce(retired_at, created_at) >= \(since)::date)
            ORDER BY id
            """,
            logger: self.logger
        )
        var channels: [String] = []
        for try await channel in rows.decode(String.self) { channels.append(channel) }
        return channels
    }

    /// Stores an export's rows and marks it fetched through `through` (never backwards), in one transaction.
    package func store(_ rows: AppleExportRows, appID: Int64, dataset: AppleDataset, through: String) async throws {
        let logger = self.logger
        try await self.client.withGuardedTransaction(logger: logger) { connection in
            switch rows {
            case .broadcasts(let channelID, let days):
                for day in days {
                    try await connection.query(
                        """
                        INSERT INTO apple_broadcast_days (app_id, channel_id, day, published, delivered, subscriptions, unique_subscribers)
                        VALUES (\(appID), \(channelID ?? ""), \(day.day)::date, \(day.published), \(day.delivered), \(day.subscriptions), \(day.uniqueSubscribers))
                        ON CONFLICT (app_id, channel_id, day) DO UPDATE SET published = excluded.published, delivered = excluded.delivered,
                            subscriptions = excluded.subscriptions, unique_subscribers = excluded.unique_subscribers, fetched_at = now()
                        """,
                        logger: logger
                    )
                }
            case .deliveries(let days):
                for day in days {
                    try await connection.query(
                        """
                        INSERT INTO apple_delivery_days (app_id, day, push_type, status, count)
                        VALUES (\(appID), \(day.day)::date, \(day.pushType), \(day.status), \(day.count))
                        ON CONFLICT (app_id, day, push_type, status) DO UPDATE SET count = excluded.count, fetched_at = now()
                        """,
                        logger: logger
                    )
                }
            }
            let channelID: String? = if case .broadcasts(let channel, _) = rows { channel } else { nil }
            try await connection.query(
                """
                INSERT INTO apple_metrics_exports (app_id, dataset, channel_id, fetched_through, last_attempt_at, last_success_at)
                VALUES (\(appID), \(dataset), \(channelID ?? ""), \(through)::date, now(), now())
                ON CONFLICT (app_id, dataset, channel_id) DO UPDATE SET
                    fetched_through = greatest(apple_metrics_exports.fetched_through, excluded.fetched_through),
                    last_attempt_at = now(), last_success_at = now(), last_error = NULL, last_error_at = NULL
                """,
                logger: logger
            )
        }
    }

    /// Records that an export failed, and why; what it stored before stays.
    package func recordFailure(appID: Int64, dataset: AppleDataset, channelID: String?, error: String) async throws {
        try await self.client.guardedQuery(
            """
            INSERT INTO apple_metrics_exports (app_id, dataset, channel_id, last_attempt_at, last_error, last_error_at)
            VALUES (\(appID), \(dataset), \(channelID ?? ""), now(), \(String(error.prefix(1000))), now())
            ON CONFLICT (app_id, dataset, channel_id) DO UPDATE SET last_attempt_at = now(), last_error = excluded.last_error,
                last_error_at = now()
            """,
            logger: self.logger
        )
    }

    /// How many exports of apps that still have credentials failed at their last attempt.
    package func failingCount() async throws -> Int {
        let rows = try await self.client.guardedQuery(
            """
            SELECT count(*)::int FROM apple_metrics_exports e
            WHERE e.last_error IS NOT NULL AND EXISTS (SELECT 1 FROM apple_metrics_credentials c WHERE c.app_id = e.app_id)
            """,
            logger: self.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return 0
    }

    private static func time(_ column: String) -> String {
        "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"
    }
}
