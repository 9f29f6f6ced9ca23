import LivecastCore
package import PostgresNIO

extension Outbox {
    /// Claims the oldest due fan-out whose feed has no earlier unfinished update, of an app running fewer than
    /// `perApp` fan-outs, under a lease, in one statement. An earlier update split into slices does not hold a later
    /// update or end back (their slices keep order per follower, ``claimSlice(perApp:)``); it holds a start back,
    /// whose devices join the feed as followers its slices could still reach.
    package func claimFanOut(perApp: Int) async throws -> FanOutClaim? {
        let rows = try await self.database.guardedQuery(
            """
            WITH next AS (
                SELECT u.id FROM updates u
                WHERE u.status IN \(unescaped: OutboxStatus.unfinishedSQL) AND u.not_before <= now() AND u.feed_id IS NOT NULL AND NOT u.sliced
                  AND NOT EXISTS (SELECT 1 FROM apps h WHERE h.id = u.app_id AND h.sending_held_at IS NOT NULL)
                  AND NOT EXISTS (
                      SELECT 1 FROM updates e
                      WHERE e.feed_id = u.feed_id AND e.id < u.id AND e.status IN \(unescaped: OutboxStatus.unfinishedSQL)
                        AND (NOT e.sliced OR u.event = \(unescaped: LiveActivityEvent.start.sql)))
                  AND (SELECT count(*) FROM updates d
                       WHERE d.app_id = u.app_id AND d.feed_id IS NOT NULL AND d.status = \(unescaped: OutboxStatus.dispatching.sql)
                         AND NOT d.sliced AND d.not_before > now())
                      < \(perApp)
                ORDER BY u.not_before, u.id
                LIMIT 1
                FOR UPDATE SKIP LOCKED
            )
            UPDATE updates u SET status = \(unescaped: OutboxStatus.dispatching.sql), claimed_by = \(self.claimer), attempts = u.attempts + 1,
                not_before = now() + make_interval(secs => \(self.lease.inSeconds))
            FROM next, feeds f
            WHERE u.id = next.id AND f.id = u.feed_id
            RETURNING \(unescaped: FanOutClaim.columns(cursor: "u.cursor_id", channelDone: "u.channel_done", attempts: "u.attempts", deadline: self.retryDeadline)),
                NULL::bigint, NULL::bigint
            """,
            logger: self.logger
        )
        return try await FanOutClaim.first(of: rows)
    }

    /// Records progress: the cursor and counts, a fresh lease, and this claim as the only one since progress. A
    /// slice's cursor is its own; its counts add up in its update's.
    /// - Throws: ``LostClaim`` when another dispatcher took the update (or slice) over (this one's lease ran out).
    package func checkpoint(
        _ claim: inout FanOutClaim,
        cursor: Int64,
        sent: Int,
        failed: Int,
        channelDone: Bool? = nil,
        on connection: PostgresConnection
    ) async throws {
        let rows: PostgresRowSequence
        if let slice = claim.slice {
            rows = try await connection.query(
                """
                WITH slice AS (
                    UPDATE fan_out_slices SET cursor_id = \(cursor), not_before = now() + make_interval(secs => \(self.lease.inSeconds)), attempts = 1
                    WHERE id = \(slice.id) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                    RETURNING update_id
                )
                UPDATE updates u SET sent_count = u.sent_count + \(sent), failed_count = u.failed_count + \(failed)
                FROM slice WHERE u.id = slice.update_id
                RETURNING u.id
                """,
                logger: self.logger
            )
        } else {
            rows = try await connection.query(
                """
                UPDATE updates SET cursor_id = \(cursor), sent_count = sent_count + \(sent), failed_count = failed_count + \(failed),
                    channel_done = coalesce(\(channelDone), channel_done), not_before = now() + make_interval(secs => \(self.lease.inSeconds)),
                    attempts = 1
                WHERE id = \(claim.updateID) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                RETURNING id
                """,
                logger: self.logger
            )
        }
        var held = false
        for try await _ in rows.decode(Int64.self) { held = true }
        guard held else { throw LostClaim(updateID: claim.updateID) }
        claim.cursor = cursor
        if let channelDone { claim.channelDone = channelDone }
    }

    /// Marks a claim done (`sent`, `failed`) or puts it back (`pending`) for a later try. A slice's update is done
    /// with its last slice (``releaseSlice(_:status:retryAfter:resetAttempts:on:)``).
    /// - Parameter resetAttempts: Whether the put-back claim is not to count as one without progress (the app's
    ///   signing key could not be opened: its retries are bounded by the deadline instead).
    package func release(
        _ claim: FanOutClaim,
        status: OutboxStatus,
        retryAfter delay: Duration = .zero,
        resetAttempts: Bool = false,
        on connection: PostgresConnection
    ) async throws {
        if let slice = claim.slice {
            try await self.releaseSlice(slice, of: claim.updateID, status: status, retryAfter: delay, resetAttempts: resetAttempts, on: connection)
            return
        }
        try await connection.query(
            """
            UPDATE updates SET status = \(status.rawValue), claimed_by = NULL,
                completed_at = CASE WHEN \(status.rawValue) = \(unescaped: OutboxStatus.pending.sql) THEN NULL ELSE now() END,
                not_before = now() + make_interval(secs => \(delay.inSeconds)),
                attempts = CASE WHEN \(resetAttempts) THEN 0 ELSE attempts END
            WHERE id = \(claim.updateID) AND claimed_by = \(self.claimer)
            """,
            logger: self.logger
        )
    }
}
