package import Foundation
import Logging
package import PostgresNIO

/// One app at a glance, for the console's overview (`GET /v1/apps/{bundleId}/overview`): its outbox, the last hour's
/// pushes by outcome, channels against APNs' cap, dead letters waiting, the reaper's last pass and a held sending.
package struct AppOverview: Sendable, Hashable {
    /// Pushes of five minutes: the targets APNs accepted and those that failed, of updates finished (or, while they
    /// are sent, accepted) in those minutes.
    package struct Bucket: Sendable, Hashable, Encodable {
        /// The bucket's start (UNIX seconds).
        package var start: Int64
        package var sent: Int64
        package var failed: Int64
    }

    package var bundleID: String
    package var environment: String
    /// Updates waiting in the outbox or being sent, and how long the oldest has waited (whole seconds).
    package var outboxDepth: Int
    package var outboxOldestAge: Duration?
    /// Scheduled sends not yet due.
    package var scheduled: Int
    /// The last hour in twelve buckets of five minutes, oldest first (empty buckets included).
    package var lastHour: [Bucket]
    /// The last hour's failed pushes by APNs' reason.
    package var failedByReason: [String: Int]
    /// Channels that count against APNs' cap (every state but retired).
    package var channelsUsed: Int
    /// Dead letters not replayed.
    package var deadLetters: Int
    /// When the reaper last passed over the app, and what it did.
    package var reapedAt: Int64?
    package var reapSummary: String?
    /// Why the invalidation guard holds the app's sending, when it does.
    package var sendingHeldReason: String?
    /// The last day's feed starts, and how many the devices' apps confirmed in time.
    package var starts = StartConfirmations(sent: 0, due: 0, confirmed: 0)
    /// Why the app's credentials are in doubt, while they are (``Apps/doubtCredentials(id:reason:)``).
    package var credentialsDoubt: String?

    /// Reads an app's overview. - Returns: `nil` for an unknown app.
    /// - Parameter registrationTimeout: How long after a start its app has to register the activity.
    package static func read(
        appID: Int64,
        registrationTimeout: Duration = Feeds.defaultRegistrationTimeout,
        client: PostgresClient,
        logger: Logger,
        now: Date = Date()
    ) async throws -> AppOverview? {
        let rows = try await client.guardedQuery(
            """
            SELECT a.bundle_id, a.environment,
                (SELECT count(*)::int FROM unfinished_updates u WHERE u.app_id = a.id),
                (SELECT extract(epoch FROM now() - min(u.created_at))::bigint FROM unfinished_updates u WHERE u.app_id = a.id),
                (SELECT count(*)::int FROM scheduled_updates s WHERE s.app_id = a.id AND s.status = \(unescaped: ScheduledStatus.scheduled.sql)),
                (SELECT count(*)::int FROM channels c WHERE c.app_id = a.id AND c.state <> \(unescaped: ChannelState.retired.sql)),
                (SELECT count(*)::int FROM dead_letters d WHERE d.app_id = a.id AND d.replayed_at IS NULL),
                extract(epoch FROM a.reaped_at)::bigint, a.reap_summary,
                CASE WHEN a.sending_held_at IS NOT NULL THEN coalesce(a.sending_held_reason, 'held') END, a.credentials_doubt
            FROM apps a WHERE a.id = \(appID)
            """,
            logger: logger
        )
        var overview: AppOverview?
        for try await row in rows.decode((String, String, Int, Int64?, Int, Int, Int, Int64?, String?, String?, String?).self) {
            overview = AppOverview(
                bundleID: row.0,
                environment: row.1,
                outboxDepth: row.2,
                outboxOldestAge: row.3.map { Duration.seconds($0) },
                scheduled: row.4,
                lastHour: [],
                failedByReason: [:],
                channelsUsed: row.5,
                deadLetters: row.6,
                reapedAt: row.7,
                reapSummary: row.8,
                sendingHeldReason: row.9,
                credentialsDoubt: row.10
            )
        }
        guard var overview else { return nil }
        overview.lastHour = try await Self.lastHour(appID: appID, client: client, logger: logger, now: now)
        overview.failedByReason = try await Self.failures(appID: appID, client: client, logger: logger)
        overview.starts = try await StartConfirmations.read(appID: appID, registrationTimeout: registrationTimeout, client: client, logger: logger)
        return overview
    }

    private static let bucketSeconds: Int64 = 300

    private static func lastHour(appID: Int64, client: PostgresClient, logger: Logger, now: Date) async throws -> [Bucket] {
        let first = (Int64(now.timeIntervalSince1970) / Self.bucketSeconds - 11) * Self.bucketSeconds
        var buckets = (0..<12).map { Bucket(start: first + Int64($0) * Self.bucketSeconds, sent: 0, failed: 0) }
        let rows = try await client.guardedQuery(
            """
            SELECT (extract(epoch FROM coalesce(completed_at, created_at))::bigint / \(Self.bucketSeconds)) * \(Self.bucketSeconds),
                sum(sent_count)::bigint, sum(failed_count)::bigint
            FROM updates WHERE app_id = \(appID) AND coalesce(completed_at, created_at) >= to_timestamp(\(first))
            GROUP BY 1
            """,
            logger: logger
        )
        for try await (start, sent, failed) in rows.decode((Int64, Int64, Int64).self) {
            let index = Int((start - first) / Self.bucketSeconds)
            guard buckets.indices.contains(index) else { continue }
            buckets[index].sent = sent
            buckets[index].failed = failed
        }
        return buckets
    }

    private static func failures(appID: Int64, client: PostgresClient, logger: Logger) async throws -> [String: Int] {
        let rows = try await client.guardedQuery(
            """
            SELECT coalesce(d.reason, 'unknown'), count(*)::int FROM deliveries d JOIN updates u ON u.id = d.update_id
            WHERE u.app_id = \(appID) AND d.attempted_at >= now() - interval '1 hour' AND d.status IS DISTINCT FROM 200
            GROUP BY 1
            """,
            logger: logger
        )
        var failures: [String: Int] = [:]
        for try await (reason, count) in rows.decode((String, Int).self) { failures[reason] = count }
        return failures
    }
}
