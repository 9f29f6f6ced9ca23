import LivecastCore
package import PostgresNIO

extension Outbox {
    /// Claims the oldest due fan-out whose feed has no earlier unfinished update, of an app running fewer than
    /// `perApp` fan-outs, under a lease, in one statement.
    package func claimFanOut(perApp: Int) async throws -> FanOutClaim? {
        let rows = try await self.database.guardedQuery(
            """
            WITH next AS (
                SELECT u.id FROM updates u
                WHERE u.status IN \(unescaped: OutboxStatus.unfinishedSQL) AND u.not_before <= now() AND u.feed_id IS NOT NULL
                  AND NOT EXISTS (SELECT 1 FROM apps h WHERE h.id = u.app_id AND h.sending_held_at IS NOT NULL)
                  AND NOT EXISTS (
                      SELECT 1 FROM updates e
                      WHERE e.feed_id = u.feed_id AND e.id < u.id AND e.status IN \(unescaped: OutboxStatus.unfinishedSQL))
                  AND (SELECT count(*) FROM updates d
                       WHERE d.app_id = u.app_id AND d.feed_id IS NOT NULL AND d.status = \(unescaped: OutboxStatus.dispatching.sql) AND d.not_before > now())
                      < \(perApp)
                ORDER BY u.not_before, u.id
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            UPDATE updates u SET status = \(unescaped: OutboxStatus.dispatching.sql), claimed_by = \(self.claimer), attempts = u.attempts + 1,
                not_before = now() + make_interval(secs => \(self.lease.inSeconds))
            FROM next, feeds f
            WHERE u.id = next.id AND f.id = u.feed_id
            RETURNING u.id, u.app_id, u.feed_id, u.event, u.timestamp, u.dismissal_date, u.payload, u.channel_payload, u.priority::int,
                u.cursor_id, u.channel_done, u.audience_kind, u.audience, f.attributes_type, u.attempts,
                u.created_at + make_interval(secs => \(self.retryDeadline.period.inSeconds)) < now()
            """,
            logger: self.logger
        )
        for try await row in rows.decode(
            (Int64, Int64, Int64, String, Int, Int?, String, String?, Int, Int64, Bool, String?, [String]?, String, Int, Bool).self
        ) {
            return FanOutClaim(
                updateID: row.0,
                appID: row.1,
                feedID: row.2,
                event: LiveActivityEvent(rawValue: row.3) ?? .update,
                timestamp: row.4,
                dismissalDate: row.5,
                payload: Array(row.6.utf8),
                channelPayload: row.7.map { Array($0.utf8) },
                priority: row.8,
                cursor: row.9,
                channelDone: row.10,
                audienceKind: row.11,
                audience: row.12,
                attributesType: row.13,
                attempts: row.14,
                pastDeadline: row.15
            )
        }
        return nil
    }

    /// Records progress: the cursor and counts, a fresh lease, and this claim as the only one since progress.
    /// - Throws: ``LostClaim`` when another dispatcher took the update over (this one's lease ran out).
    package func checkpoint(
        _ claim: inout FanOutClaim,
        cursor: Int64,
        sent: Int,
        failed: Int,
        channelDone: Bool? = nil,
        on connection: PostgresConnection
    ) async throws {
        let rows = try await connection.query(
            """
            UPDATE updates SET cursor_id = \(cursor), sent_count = sent_count + \(sent), failed_count = failed_count + \(failed),
                channel_done = coalesce(\(channelDone), channel_done), not_before = now() + make_interval(secs => \(self.lease.inSeconds)),
                attempts = 1
            WHERE id = \(claim.updateID) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
            RETURNING id
            """,
            logger: self.logger
        )
        var held = false
        for try await _ in rows.decode(Int64.self) { held = true }
        guard held else { throw LostClaim(updateID: claim.updateID) }
        claim.cursor = cursor
        if let channelDone { claim.channelDone = channelDone }
    }

    /// Marks a claimed update done (`sent`, `failed`) or puts it back (`pending`) for a later try.
    /// - Parameter resetAttempts: Whether the put-back claim is not to count as one without progress (the app's
    ///   signing key could not be opened: its retries are bounded by the deadline instead).
    package func release(
        _ updateID: Int64,
        status: OutboxStatus,
        retryAfter delay: Duration = .zero,
        resetAttempts: Bool = false,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            UPDATE updates SET status = \(status.rawValue), claimed_by = NULL,
                completed_at = CASE WHEN \(status.rawValue) = \(unescaped: OutboxStatus.pending.sql) THEN NULL ELSE now() END,
                not_before = now() + make_interval(secs => \(delay.inSeconds)),
                attempts = CASE WHEN \(resetAttempts) THEN 0 ELSE attempts END
            WHERE id = \(updateID) AND claimed_by = \(self.claimer)
            """,
            logger: self.logger
        )
    }
}
