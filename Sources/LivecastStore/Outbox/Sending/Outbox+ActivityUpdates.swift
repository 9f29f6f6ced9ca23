import LivecastCore
package import PostgresNIO

extension Outbox {
    /// Claims each app's due standalone activity updates (each the oldest unfinished of its activity), oldest first,
    /// at most `batchSize` per app, under a lease. The candidates come from `due_activity_updates` (migrations
    /// `0023` and `0024`), which keeps its plan and reads the outbox by index only.
    package func claimActivityUpdates(batchSize: Int) async throws -> [ActivityClaim] {
        let deadline = self.retryDeadline.activitySQL(event: "u.event", startedAt: "a.started_at", since: "u.created_at")
        let rows = try await self.database.guardedQuery(
            """
            WITH next AS (
                SELECT n.id FROM apps ap CROSS JOIN LATERAL due_activity_updates(ap.id, \(batchSize)) AS n(id)
                WHERE ap.sending_held_at IS NULL
            )
            UPDATE updates u SET status = \(unescaped: OutboxStatus.dispatching.sql), claimed_by = \(self.claimer), attempts = u.attempts + 1,
                not_before = now() + make_interval(secs => \(self.lease.inSeconds))
            FROM next, activities a
            WHERE u.id = next.id AND a.id = u.activity_id
            RETURNING u.id, u.app_id, u.activity_id, u.event, u.payload, u.priority::int, u.attempts,
                extract(epoch FROM \(unescaped: deadline))::float8
            """,
            logger: self.logger
        )
        var claims: [ActivityClaim] = []
        for try await row in rows.decode((Int64, Int64, Int64, LiveActivityEvent, String, Int, Int, Double).self) {
            claims.append(
                ActivityClaim(
                    updateID: row.0,
                    appID: row.1,
                    activityID: row.2,
                    event: row.3,
                    payload: Array(row.4.utf8),
                    priority: row.5,
                    attempts: row.6,
                    deadline: row.7
                )
            )
        }
        return claims
    }

    /// Ends the claims of standalone activity updates: finished ones (sent, or failed: counted as a failed target
    /// unless a dead letter counts it) in one statement, ones to retry put back with their delays in another.
    package func settle(_ settlements: [ActivitySettlement], on connection: PostgresConnection) async throws {
        let finished = settlements.filter { $0.status != nil }
        let retried = settlements.filter { $0.status == nil }
        if !finished.isEmpty {
            try await connection.query(
                """
                UPDATE updates u SET status = v.status, claimed_by = NULL, completed_at = now(),
                    sent_count = u.sent_count + (v.status = \(unescaped: OutboxStatus.sent.sql))::int,
                    failed_count = u.failed_count + (v.status = \(unescaped: OutboxStatus.failed.sql) AND NOT v.dead)::int
                FROM unnest(\(finished.map(\.updateID))::bigint[], \(finished.map { $0.status?.rawValue ?? "failed" })::text[],
                            \(finished.map(\.isDeadLetter))::bool[]) AS v(id, status, dead)
                WHERE u.id = v.id AND u.claimed_by = \(self.claimer)
                """,
                logger: self.logger
            )
        }
        if !retried.isEmpty {
            try await connection.query(
                """
                UPDATE updates u SET status = \(unescaped: OutboxStatus.pending.sql), claimed_by = NULL, not_before = now() + make_interval(secs => v.delay)
                FROM unnest(\(retried.map(\.updateID))::bigint[], \(retried.map(\.retryAfter))::float8[]) AS v(id, delay)
                WHERE u.id = v.id AND u.claimed_by = \(self.claimer)
                """,
                logger: self.logger
            )
        }
    }
}
