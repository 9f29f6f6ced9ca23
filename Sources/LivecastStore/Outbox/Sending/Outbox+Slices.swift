import LivecastCore
package import PostgresNIO

/// A big fan-out split into slices of its followers, each claimed on its own by any worker of any instance
/// (`sql/0036`). The worker holding the update splits what it has yet to walk (``split(_:size:on:)``); workers claim
/// the slices (``claimSlice(perApp:)``), walk them with ``checkpoint(_:cursor:sent:failed:channelDone:on:)`` as they
/// would the update, and release them; the last slice released completes the update.
extension Outbox {
    /// Splits a claimed update's followers after its checkpoint into slices of `size`, if there are more than that,
    /// or if an older update of the feed is still out in slices (so this one's followers wait for theirs, slice by
    /// slice). The update is then the slices': it stays `dispatching`, unclaimed, until the last one is done.
    /// - Returns: Whether the update was split; if not, its holder walks the followers itself.
    /// - Throws: ``LostClaim`` when another dispatcher took the update over.
    package func split(_ claim: FanOutClaim, size: Int, on connection: PostgresConnection) async throws -> Bool {
        let decision = try await connection.query(
            """
            SELECT EXISTS (
                    SELECT 1 FROM updates e
                    WHERE e.feed_id = \(claim.feedID) AND e.id < \(claim.updateID) AND e.sliced AND e.status IN \(unescaped: OutboxStatus.unfinishedSQL))
                OR EXISTS (
                    SELECT 1 FROM activities a
                    WHERE a.feed_id = \(claim.feedID) AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.channel_id IS NULL AND a.id > \(claim.cursor)
                    ORDER BY a.id OFFSET \(size) LIMIT 1)
            """,
            logger: self.logger
        )
        var splits = false
        for try await value in decision.decode(Bool.self) { splits = value }
        guard splits else { return false }
        try await connection.withTransaction(logger: self.logger) { connection in
            let handed = try await connection.query(
                """
                UPDATE updates SET sliced = true, claimed_by = NULL, not_before = now(), attempts = 0
                WHERE id = \(claim.updateID) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                RETURNING id
                """,
                logger: self.logger
            )
            var held = false
            for try await _ in handed.decode(Int64.self) { held = true }
            guard held else { throw LostClaim(updateID: claim.updateID) }
            // Every size-th follower ends a slice; the last slice runs to the end (holding the last size or fewer), so
            // followers who join meanwhile are walked as they would be by one walk.
            try await connection.query(
                """
                INSERT INTO fan_out_slices (update_id, app_id, feed_id, lower_id, upper_id, cursor_id)
                SELECT \(claim.updateID), \(claim.appID), \(claim.feedID), bounds.lower_id, bounds.upper_id, bounds.lower_id
                FROM (
                    SELECT coalesce(lag(cut) OVER (ORDER BY cut), \(claim.cursor)) AS lower_id, cut AS upper_id
                    FROM (
                        SELECT id AS cut FROM (
                            SELECT a.id, row_number() OVER (ORDER BY a.id) AS n, count(*) OVER () AS total FROM activities a
                            WHERE a.feed_id = \(claim.feedID) AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.channel_id IS NULL
                              AND a.id > \(claim.cursor)
                        ) followers
                        WHERE n % \(size) = 0 AND n < total
                        UNION ALL SELECT \(Int64.max)
                    ) cuts
                ) bounds
                """,
                logger: self.logger
            )
        }
        return true
    }

    /// Claims the first due slice, under a lease, of an app with fewer than `perApp` slices claimed by this
    /// dispatcher (so one app's giant fan-out leaves each instance's other workers to the other apps), whose
    /// followers no older update's unfinished slice covers: a follower gets one update at a time, in order. A slice
    /// whose lease ran out is taken over from its checkpoint.
    package func claimSlice(perApp: Int) async throws -> FanOutClaim? {
        let rows = try await self.database.guardedQuery(
            """
            WITH next AS (
                SELECT s.id FROM fan_out_slices s
                WHERE s.status IN \(unescaped: OutboxStatus.unfinishedSQL) AND s.not_before <= now()
                  AND NOT EXISTS (SELECT 1 FROM apps h WHERE h.id = s.app_id AND h.sending_held_at IS NOT NULL)
                  AND NOT EXISTS (
                      SELECT 1 FROM fan_out_slices e
                      WHERE e.feed_id = s.feed_id AND e.update_id < s.update_id AND e.status IN \(unescaped: OutboxStatus.unfinishedSQL)
                        AND e.lower_id < s.upper_id AND s.lower_id < e.upper_id)
                  AND (SELECT count(*) FROM fan_out_slices d
                       WHERE d.app_id = s.app_id AND d.claimed_by = \(self.claimer) AND d.status = \(unescaped: OutboxStatus.dispatching.sql) AND d.not_before > now())
                      < \(perApp)
                ORDER BY s.update_id, s.lower_id
                LIMIT 1
                FOR UPDATE OF s SKIP LOCKED
            )
            UPDATE fan_out_slices s SET status = \(unescaped: OutboxStatus.dispatching.sql), claimed_by = \(self.claimer), attempts = s.attempts + 1,
                not_before = now() + make_interval(secs => \(self.lease.inSeconds))
            FROM next, updates u, feeds f
            WHERE s.id = next.id AND u.id = s.update_id AND f.id = s.feed_id
            RETURNING \(unescaped: FanOutClaim.columns(cursor: "s.cursor_id", channelDone: "true", attempts: "s.attempts", deadline: self.retryDeadline)),
                s.id, s.upper_id
            """,
            logger: self.logger
        )
        return try await FanOutClaim.first(of: rows)
    }

    /// Marks a claimed slice done (`sent`, `failed`) or puts it back (`pending`). The last slice done completes its
    /// update: `sent`, or `failed` if a slice was given up. The update's row is locked first, so of two last slices
    /// released at once the second sees the first done.
    func releaseSlice(
        _ slice: FanOutSlice,
        of updateID: Int64,
        status: OutboxStatus,
        retryAfter delay: Duration,
        resetAttempts: Bool,
        on connection: PostgresConnection
    ) async throws {
        guard status != .pending else {
            try await connection.query(
                """
                UPDATE fan_out_slices SET status = \(unescaped: OutboxStatus.pending.sql), claimed_by = NULL, not_before = now() + make_interval(secs => \(delay.inSeconds)),
                    attempts = CASE WHEN \(resetAttempts) THEN 0 ELSE attempts END
                WHERE id = \(slice.id) AND claimed_by = \(self.claimer)
                """,
                logger: self.logger
            )
            return
        }
        try await connection.withTransaction(logger: self.logger) { connection in
            let locked = try await connection.query("SELECT id FROM updates WHERE id = \(updateID) FOR NO KEY UPDATE", logger: self.logger)
            for try await _ in locked.decode(Int64.self) {}
            try await connection.query(
                """
                UPDATE fan_out_slices SET status = \(status.rawValue), claimed_by = NULL
                WHERE id = \(slice.id) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                """,
                logger: self.logger
            )
            try await connection.query(
                """
                UPDATE updates u SET claimed_by = NULL, completed_at = now(),
                    status = CASE WHEN EXISTS (SELECT 1 FROM fan_out_slices s WHERE s.update_id = u.id AND s.status = \(unescaped: OutboxStatus.failed.sql))
                                  THEN \(unescaped: OutboxStatus.failed.sql) ELSE \(unescaped: OutboxStatus.sent.sql) END
                WHERE u.id = \(updateID) AND u.sliced AND u.completed_at IS NULL
                  AND NOT EXISTS (SELECT 1 FROM fan_out_slices s WHERE s.update_id = u.id AND s.status IN \(unescaped: OutboxStatus.unfinishedSQL))
                """,
                logger: self.logger
            )
        }
    }
}
