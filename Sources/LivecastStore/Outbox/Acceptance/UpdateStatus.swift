package import LivecastCore
import Logging
package import PostgresNIO

/// Where an accepted update stands: its status in the outbox and what happened per target. It is encoded as the API
/// shows it (`GET /v1/apps/{bundleId}/updates/{updateId}`).
package struct UpdateStatus: Sendable, Hashable, Encodable {
    package var updateID: Int64
    package var event: LiveActivityEvent
    /// The timestamp it goes out with (UNIX seconds).
    package var timestamp: Int64
    package var priority: Int
    package var status: OutboxStatus
    /// Targets not handled yet: the activity while the update waits, or a feed's running followers past the
    /// dispatcher's checkpoint (and its channel until broadcast); and targets still owed a push APNs asked to
    /// retry later.
    package var pending: Int
    /// Targets APNs accepted the push for.
    package var sent: Int64
    /// Targets it was never sent to because a newer update in the same second replaced it (devices would have
    /// ignored it as stale): counted as ``pending`` is, for a superseded update.
    package var superseded: Int
    /// Targets that failed.
    package var failed: Int64
    /// Failed targets by APNs' reason (or the transport's code).
    package var failedByReason: [String: Int]
    /// A start's devices that had no room in their push-to-start budget (or had a newer start) and waited, or wait,
    /// for it; and of those, the ones given up (their feed ended or went stale first, say). Zero for an update.
    package var startsDeferred = 0
    package var startsDropped = 0

    /// The API's names.
    private enum CodingKeys: String, CodingKey {
        case updateID = "updateId"
        case event, timestamp, priority, status, targets
    }

    /// The per-target counts, under `targets`.
    private enum TargetKeys: String, CodingKey {
        case pending, sent, superseded, failed, failedByReason, deferred, dropped
    }

    /// As the API shows it: the per-target counts in an object of their own.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.updateID, forKey: .updateID)
        try container.encode(self.event, forKey: .event)
        try container.encode(self.timestamp, forKey: .timestamp)
        try container.encode(self.priority, forKey: .priority)
        try container.encode(self.status, forKey: .status)
        var targets = container.nestedContainer(keyedBy: TargetKeys.self, forKey: .targets)
        try targets.encode(self.pending, forKey: .pending)
        try targets.encode(self.sent, forKey: .sent)
        try targets.encode(self.superseded, forKey: .superseded)
        try targets.encode(self.failed, forKey: .failed)
        try targets.encode(self.failedByReason, forKey: .failedByReason)
        if self.event == .start {
            try targets.encode(self.startsDeferred, forKey: .deferred)
            try targets.encode(self.startsDropped, forKey: .dropped)
        }
    }

    /// Reads one of an app's updates.
    /// - Returns: `nil` when the app has no such update.
    package static func read(updateID: Int64, appID: Int64, client: PostgresClient, logger: Logger) async throws -> UpdateStatus? {
        try await Self.read(updateIDs: [updateID], appID: appID, client: client, logger: logger).first
    }

    /// A feed's updates, newest first: at most `limit`, older than `before` (a page's last update id) when given.
    /// - Returns: `nil` when the app has no such feed.
    package static func history(
        feedKey: String,
        appID: Int64,
        before: Int64?,
        limit: Int,
        client: PostgresClient,
        logger: Logger
    ) async throws -> [UpdateStatus]? {
        let rows = try await client.guardedQuery(
            """
            SELECT f.id, u.id FROM feeds f
            LEFT JOIN LATERAL (
                SELECT u.id FROM updates u WHERE u.feed_id = f.id AND (\(before)::bigint IS NULL OR u.id < \(before))
                ORDER BY u.id DESC LIMIT \(limit)
            ) u ON true
            WHERE f.app_id = \(appID) AND f.feed_key = \(feedKey)
            """,
            logger: logger
        )
        var feedFound = false
        var updateIDs: [Int64] = []
        for try await (_, updateID) in rows.decode((Int64, Int64?).self) {
            feedFound = true
            if let updateID { updateIDs.append(updateID) }
        }
        guard feedFound else { return nil }
        return try await Self.read(updateIDs: updateIDs, appID: appID, client: client, logger: logger)
    }

    /// Reads some of an app's updates, in the order of `updateIDs`; ids of no update of the app are left out.
    private static func read(updateIDs: [Int64], appID: Int64, client: PostgresClient, logger: Logger) async throws -> [UpdateStatus] {
        guard !updateIDs.isEmpty else { return [] }
        let rows = try await client.guardedQuery(
            """
            SELECT u.id, u.event, u.timestamp, u.priority::int, u.status, u.sent_count, u.failed_count,
                CASE
                    WHEN u.activity_id IS NOT NULL THEN 1
                    WHEN u.sliced THEN (SELECT count(*)::int FROM fan_out_slices s
                          JOIN activities a ON a.feed_id = u.feed_id AND a.id > s.cursor_id AND a.id <= s.upper_id
                            AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.channel_id IS NULL
                          WHERE s.update_id = u.id AND s.status IN \(unescaped: OutboxStatus.unfinishedSQL))
                    ELSE (SELECT count(*)::int FROM activities a
                          WHERE a.feed_id = u.feed_id AND a.id > u.cursor_id AND a.state IN \(unescaped: ActivityState.runningSQL)
                            AND a.channel_id IS NULL)
                         + CASE WHEN u.channel_done THEN 0
                                ELSE (SELECT count(*)::int FROM channels c WHERE c.feed_id = u.feed_id AND c.state = \(unescaped: ChannelState.active.sql)) END
                END,
                (SELECT count(*)::int FROM owed_pushes o WHERE o.update_id = u.id),
                (SELECT count(*)::int FROM queued_starts q WHERE q.update_id = u.id),
                (SELECT count(*)::int FROM queued_starts q WHERE q.update_id = u.id AND q.state = \(unescaped: QueuedStartState.dropped.sql)),
                (SELECT count(*)::int FROM queued_starts q WHERE q.update_id = u.id AND q.state IN \(unescaped: QueuedStartState.unfinishedSQL))
            FROM unnest(\(updateIDs)::bigint[]) WITH ORDINALITY AS wanted(id, n)
            JOIN updates u ON u.id = wanted.id AND u.app_id = \(appID)
            ORDER BY wanted.n
            """,
            logger: logger
        )
        var statuses: [UpdateStatus] = []
        for try await row in rows.decode((Int64, LiveActivityEvent, Int64, Int, OutboxStatus, Int64, Int64, Int, Int, Int, Int, Int).self) {
            statuses.append(
                UpdateStatus(
                    updateID: row.0,
                    event: row.1,
                    timestamp: row.2,
                    priority: row.3,
                    status: row.4,
                    pending: ([.pending, .dispatching].contains(row.4) ? row.7 : 0) + row.8 + row.11,
                    sent: row.5,
                    superseded: row.4 == .superseded ? row.7 : 0,
                    failed: row.6,
                    failedByReason: [:],
                    startsDeferred: row.9,
                    startsDropped: row.10
                )
            )
        }
        let reasons = try await client.guardedQuery(
            """
            SELECT update_id, coalesce(reason, 'unknown'), count(*)::int FROM deliveries
            WHERE update_id = ANY(\(statuses.map(\.updateID))) AND status IS DISTINCT FROM 200 GROUP BY 1, 2
            """,
            logger: logger
        )
        let index = Dictionary(uniqueKeysWithValues: statuses.enumerated().map { ($1.updateID, $0) })
        for try await (updateID, reason, count) in reasons.decode((Int64, String, Int).self) {
            if let position = index[updateID] { statuses[position].failedByReason[reason] = count }
        }
        return statuses
    }
}
