import LivecastCore
import PostgresNIO

extension Reaping {
    /// Marks the app's ended activities dismissed once their dismissal date passed (`maximumDelay` after the end when
    /// they have none), and forgets their update tokens (reason `dismissed`). An activity whose end is still in the
    /// outbox waits for it.
    /// - Parameter now: UNIX seconds.
    /// - Returns: How many were (or, counting, would be) dismissed.
    package func dismissActivities(_ appID: Int64, now: Int, maximumDelay: Duration, _ run: Run) async throws -> Int {
        try await self.run(run) { limit, locking in
            """
            SELECT a.id FROM activities a
            WHERE a.app_id = \(appID) AND a.state = \(unescaped: ActivityState.ended.sql)
              AND coalesce(a.dismissal_date, extract(epoch FROM a.ended_at)::bigint + \(maximumDelay.wholeSeconds)) <= \(now)
              AND NOT EXISTS (SELECT 1 FROM updates u WHERE u.activity_id = a.id AND u.status IN \(unescaped: OutboxStatus.unfinishedSQL))
            ORDER BY a.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF a SKIP LOCKED" : "")
            """
        } change: { due in
            self.wrapping(
                "WITH due AS (",
                due,
                """
                ),
                dismissed AS (
                    UPDATE activities a SET state = \(ActivityState.dismissed.sql), dismissed_at = now(), dismissed_by = \(DismissedBy.reaper.sql) FROM due WHERE a.id = due.id RETURNING a.id
                ),
                forgotten AS (
                    UPDATE activity_tokens t SET invalidated_at = now(), invalidation_reason = 'dismissed'
                    FROM dismissed d WHERE t.activity_id = d.id AND t.invalidated_at IS NULL
                )
                SELECT id FROM dismissed
                """
            )
        }
    }
}
