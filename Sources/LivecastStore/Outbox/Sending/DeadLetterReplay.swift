import LivecastCore
package import Logging
package import PostgresNIO

/// Replays a dead letter: its push goes back to `owed_pushes` (a fan-out given up as a whole goes back to the
/// outbox from its checkpoint), to be sent as any owed push is, with a new retry deadline; unless its target is
/// gone (a token invalidated, an activity dismissed, a channel retired, a feed ended) or a newer update has been
/// accepted for it since, which the device would show instead. A dead letter is replayed once; what came of it is
/// kept with it.
package struct DeadLetterReplay: Sendable {
    /// What a replay did (`dead_letters.replay_outcome`).
    package enum Outcome: String, Sendable, Hashable, CaseIterable, Encodable, StoredState {
        /// Owed again: the dispatcher sends it.
        case requeued
        /// Not sent: a newer update has been accepted for its target.
        case superseded
        /// Not sent: its target is gone.
        case targetGone
    }

    /// Why a dead letter cannot be replayed.
    package enum Refusal: Error, Sendable, Hashable {
        /// It was replayed before, with that outcome.
        case alreadyReplayed(Outcome)
    }

    private let database: PostgresClient
    private let retryDeadline: RetryDeadline
    private var logger: Logger

    /// - Parameters:
    ///   - retryDeadline: How long a requeued push is tried again (`--retry-deadline`). Defaults to an hour.
    package init(database: PostgresClient, retryDeadline: Duration = .seconds(3600), logger: Logger) {
        self.database = database
        self.retryDeadline = RetryDeadline(period: retryDeadline)
        self.logger = logger
    }

    /// The same replay logging to `logger`: a route passes its request's.
    package func logging(to logger: Logger) -> Self {
        var replay = self
        replay.logger = logger
        return replay
    }

    /// Replays one of an app's dead letters.
    /// - Returns: What the replay did, or `nil` when the app has no such dead letter.
    /// - Throws: ``Refusal/alreadyReplayed(_:)`` for one replayed before.
    package func replay(id: Int64, appID: Int64) async throws -> Outcome? {
        // Errors thrown in a transaction come out wrapped: the refusal is returned from it, then thrown.
        let result: Result<Outcome, Refusal>? = try await self.database.withGuardedTransaction(logger: self.logger) { connection in
            let rows = try await connection.query(
                """
                SELECT l.update_id, l.target_kind, l.target_id, l.replay_outcome FROM dead_letters l
                WHERE l.id = \(id) AND l.app_id = \(appID) FOR UPDATE
                """,
                logger: self.logger
            )
            var letter: (updateID: Int64, kind: DeadLetterTargetKind, targetID: Int64, replayed: Outcome?)?
            for try await row in rows.decode((Int64, DeadLetterTargetKind, Int64, Outcome?).self) { letter = row }
            guard let letter else { return nil }
            if let replayed = letter.replayed { return .failure(.alreadyReplayed(replayed)) }
            let outcome = try await self.outcome(of: letter.updateID, kind: letter.kind, targetID: letter.targetID, on: connection)
            if outcome == .requeued {
                try await self.requeue(letter.updateID, kind: letter.kind, targetID: letter.targetID, on: connection)
            }
            try await connection.query(
                "UPDATE dead_letters SET replayed_at = now(), replay_outcome = \(outcome) WHERE id = \(id)",
                logger: self.logger
            )
            return .success(outcome)
        }
        return try result?.get()
    }

    /// Whether the target is still there and no newer update has been accepted for it.
    private func outcome(of updateID: Int64, kind: DeadLetterTargetKind, targetID: Int64, on connection: PostgresConnection) async throws -> Outcome {
        let newer = "u2.id > u.id AND u2.status <> \(OutboxStatus.superseded.sql) AND u2.event <> \(LiveActivityEvent.start.sql)"
        let rows = try await connection.query(
            PostgresQuery(
                unsafeSQL: """
                    SELECT
                        CASE $2
                            WHEN 'activity' THEN EXISTS (
                                SELECT 1 FROM activities a WHERE a.id = $3 AND a.state <> \(ActivityState.dismissed.sql)
                                  AND (EXISTS (SELECT 1 FROM activity_tokens t WHERE t.activity_id = a.id AND t.invalidated_at IS NULL)
                                       OR EXISTS (SELECT 1 FROM channels c WHERE c.id = a.channel_id AND c.state = \(ChannelState.active.sql))))
                            WHEN 'push_to_start' THEN EXISTS (
                                SELECT 1 FROM push_to_start_tokens p, feeds f
                                WHERE p.id = $3 AND p.invalidated_at IS NULL AND f.id = u.feed_id AND f.state <> \(FeedState.ended.sql))
                            WHEN 'channel' THEN EXISTS (SELECT 1 FROM channels c WHERE c.id = $3 AND c.state = \(ChannelState.active.sql))
                            ELSE EXISTS (SELECT 1 FROM feeds f WHERE f.id = u.feed_id)
                        END,
                        CASE $2
                            WHEN 'activity' THEN EXISTS (
                                SELECT 1 FROM activities a, updates u2
                                WHERE a.id = $3 AND (u2.activity_id = a.id OR u2.feed_id = a.feed_id) AND \(newer))
                            WHEN 'push_to_start' THEN false
                            ELSE EXISTS (
                                SELECT 1 FROM updates u2
                                WHERE (u2.feed_id = u.feed_id OR u2.activity_id = u.activity_id) AND \(newer))
                        END
                    FROM updates u WHERE u.id = $1
                    """,
                binds: try Self.binds(updateID, kind, targetID)
            ),
            logger: self.logger
        )
        for try await (isLive, isSuperseded) in rows.decode((Bool, Bool).self) {
            guard isLive else { return .targetGone }
            return isSuperseded ? .superseded : .requeued
        }
        return .targetGone
    }

    private static func binds(_ updateID: Int64, _ kind: DeadLetterTargetKind, _ targetID: Int64) throws -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(updateID)
        binds.append(kind.rawValue)
        binds.append(targetID)
        return binds
    }

    /// Owes the push again, due now, with a new deadline; a fan-out given up as a whole (or a slice of it) goes back
    /// to the outbox, from its checkpoint, with its tries counted afresh. The update no longer counts it as failed.
    private func requeue(_ updateID: Int64, kind: DeadLetterTargetKind, targetID: Int64, on connection: PostgresConnection) async throws {
        if kind == .feed {
            // A split fan-out goes on from its slices given up; its update stays theirs (`dispatching`, unclaimed).
            try await connection.query(
                """
                UPDATE fan_out_slices SET status = \(unescaped: OutboxStatus.pending.sql), attempts = 0, claimed_by = NULL, not_before = now()
                WHERE update_id = \(updateID) AND status = \(unescaped: OutboxStatus.failed.sql)
                """,
                logger: self.logger
            )
            try await connection.query(
                """
                UPDATE updates SET status = CASE WHEN sliced THEN \(unescaped: OutboxStatus.dispatching.sql) ELSE \(unescaped: OutboxStatus.pending.sql) END,
                    attempts = 0, claimed_by = NULL, not_before = now(), completed_at = NULL, failed_count = greatest(failed_count - 1, 0)
                WHERE id = \(updateID) AND status = \(unescaped: OutboxStatus.failed.sql)
                """,
                logger: self.logger
            )
            return
        }
        try await connection.query(
            """
            INSERT INTO owed_pushes AS o
                (app_id, update_id, target_kind, target_id, channel_payload, attempts, last_reason, not_before, deadline)
            SELECT u.app_id, u.id, t.kind, \(targetID),
                t.kind = 'push_to_start' AND u.channel_payload IS NOT NULL AND coalesce(
                    (SELECT \(unescaped: AudienceMember.onIOS18SQL(osVersion: "p.os_version")) FROM push_to_start_tokens p WHERE p.id = \(targetID)),
                    false),
                1, 'Replayed', now(),
                \(unescaped: self.retryDeadline.owedSQL(kind: "t.kind", event: "u.event", activityStartedAt: "a.started_at"))
            FROM (SELECT \(kind)::text AS kind) t CROSS JOIN updates u LEFT JOIN activities a ON t.kind = 'activity' AND a.id = \(targetID)
            WHERE u.id = \(updateID)
            ON CONFLICT (update_id, target_kind, target_id) DO UPDATE SET not_before = now(), deadline = excluded.deadline, claimed_by = NULL
            """,
            logger: self.logger
        )
        try await connection.query(
            "UPDATE updates SET failed_count = greatest(failed_count - 1, 0) WHERE id = \(updateID)",
            logger: self.logger
        )
    }
}
