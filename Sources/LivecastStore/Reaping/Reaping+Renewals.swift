import LivecastCore
import PostgresNIO

/// The rows of the renewal rules: planning each feed follower's renewal before the activity lifetime, and ending the
/// activities renewals replaced once their successors can be updated.
extension Reaping {
    /// Plans the renewals of the app's followers of renewing feeds whose renewal falls due within `horizon`: each
    /// gets a queued start (`queued_starts`, kind `renewal`) due `before` its lifetime ends, spread over the first half
    /// of that window by activity id, so a feed started for everyone at once is not renewed in one second. A
    /// follower without a device id, or whose device has no live push-to-start token for the feed's attributes type
    /// (iOS before 17.2), gets its queued start dropped at once with the reason, which its record shows. Each is marked
    /// planned (`activities.renewal_planned`). Whether a planned renewal still goes out (the
    /// feed updated lately, the activity still running, room in the device's budget) is decided when it is due.
    /// - Parameters:
    ///   - activityLifetime: How long an activity stays active (`activity-lifetime`).
    ///   - horizon: How far ahead renewals are planned: at least the time between two passes.
    /// - Returns: How many followers were (or, counting, would be) planned or marked.
    package func planRenewals(_ appID: Int64, activityLifetime: Duration, horizon: Duration, _ run: Run) async throws -> Int {
        let lifetime = activityLifetime.wholeSeconds
        return try await self.run(run) { limit, locking in
            """
            SELECT a.id, a.app_id, a.feed_id, a.device_id, a.started_at, f.renewal_before, f.relevance_score,
                EXISTS (SELECT 1 FROM push_to_start_tokens t
                        WHERE t.app_id = a.app_id AND t.device_id = a.device_id AND t.attributes_type = f.attributes_type
                          AND t.invalidated_at IS NULL) AS has_token
            FROM feeds f JOIN activities a ON a.feed_id = f.id
            WHERE f.app_id = \(appID) AND f.renewal_before IS NOT NULL AND f.state <> \(unescaped: FeedState.ended.sql)
              AND a.state IN \(unescaped: ActivityState.runningSQL) AND NOT a.renewal_planned AND a.renewed_to IS NULL
              AND a.started_at <= now() + make_interval(secs => (\(horizon.wholeSeconds) - (\(lifetime) - f.renewal_before))::float8)
            ORDER BY a.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF a SKIP LOCKED" : "")
            """
        } change: { due in
            self.wrapping(
                "WITH due AS (",
                due,
                """
                ),
                marked AS (
                    UPDATE activities a SET renewal_planned = true FROM due WHERE a.id = due.id RETURNING a.id
                ),
                queued AS (
                    INSERT INTO queued_starts (app_id, feed_id, device_id, kind, activity_id, relevance_score, due_at, state, reason)
                    SELECT due.app_id, due.feed_id, due.device_id, \(QueuedStartKind.renewal.sql), due.id, due.relevance_score,
                        due.started_at + make_interval(secs => (\(lifetime) - due.renewal_before + due.id % greatest(1, due.renewal_before / 2))::float8),
                        CASE WHEN due.device_id IS NULL OR NOT due.has_token THEN \(QueuedStartState.dropped.sql) ELSE \(QueuedStartState.waiting.sql) END,
                        CASE WHEN due.device_id IS NULL THEN '\(QueuedStartDrop.noDevice)'
                             WHEN NOT due.has_token THEN '\(QueuedStartDrop.noPushToStartToken)' END
                    FROM due JOIN marked ON marked.id = due.id
                    ON CONFLICT DO NOTHING
                )
                SELECT id FROM marked
                """
            )
        }
    }

    /// Running activities that a renewal replaced on their own update token, whose successor has a live update token
    /// now: their end is due (it missed the registration that should have ended it, a crash say). After the id
    /// `after`, in id order.
    package func renewedActivities(_ appID: Int64, after: Int64, limit: Int) async throws -> [(id: Int64, key: String)] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT o.id, o.activity_key FROM activities o JOIN activities n ON n.id = o.renewed_to
            WHERE o.app_id = \(appID) AND o.state IN \(unescaped: ActivityState.runningSQL) AND o.channel_id IS NULL AND o.id > \(after)
              AND EXISTS (SELECT 1 FROM activity_tokens t WHERE t.activity_id = n.id AND t.invalidated_at IS NULL)
            ORDER BY o.id LIMIT \(limit)
            """,
            logger: self.logger
        )
        var activities: [(id: Int64, key: String)] = []
        for try await (id, key) in rows.decode((Int64, String).self) { activities.append((id, key)) }
        return activities
    }
}
