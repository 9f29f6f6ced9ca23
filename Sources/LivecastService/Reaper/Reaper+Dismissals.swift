import LivecastCore
import LivecastStore
import PostgresNIO

extension Reaper {
    /// Marks ended activities dismissed once their dismissal date passed (4 hours after the end when they have
    /// none, as ActivityKit does), and forgets their update tokens (reason `dismissed`). An activity whose end is
    /// still in the outbox waits for it.
    /// - Returns: How many were (or, in a dry run, would be) dismissed.
    func dismissActivities(_ app: App, now: Int, dryRun: Bool) async throws -> Int {
        if dryRun { return try await self.count(self.dueForDismissal(app, now: now, limit: nil, locking: false)) }
        return try await self.inBatches(
            self.wrapping(
                "WITH due AS (",
                self.dueForDismissal(app, now: now, limit: self.policy.batchSize, locking: true),
                """
                ),
                dismissed AS (
                    UPDATE activities a SET state = \(ActivityState.dismissed.sql), dismissed_at = now() FROM due WHERE a.id = due.id RETURNING a.id
                ),
                forgotten AS (
                    UPDATE activity_tokens t SET invalidated_at = now(), invalidation_reason = 'dismissed'
                    FROM dismissed d WHERE t.activity_id = d.id AND t.invalidated_at IS NULL
                )
                SELECT id FROM dismissed
                """
            )
        )
    }

    private func dueForDismissal(_ app: App, now: Int, limit: Int?, locking: Bool) -> PostgresQuery {
        """
        SELECT a.id FROM activities a
        WHERE a.app_id = \(app.id) AND a.state = \(unescaped: ActivityState.ended.sql)
          AND coalesce(a.dismissal_date, extract(epoch FROM a.ended_at)::bigint + \(ReaperPolicy.maximumDismissalDelay.wholeSeconds)) <= \(now)
          AND NOT EXISTS (SELECT 1 FROM updates u WHERE u.activity_id = a.id AND u.status IN \(unescaped: OutboxStatus.unfinishedSQL))
        ORDER BY a.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF a SKIP LOCKED" : "")
        """
    }
}
