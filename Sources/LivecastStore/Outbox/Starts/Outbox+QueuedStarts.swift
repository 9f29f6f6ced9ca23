import LivecastCore
package import PostgresNIO

extension Outbox {
    /// Claims each app's due queued starts, one per device, at most `batchSize` per app, under a lease
    /// (``ClaimQueuedStartsStatement``).
    /// - Parameter activityLifetime: How long an activity stays active: a renewal after it is too late.
    package func claimQueuedStarts(batchSize: Int, activityLifetime: Duration) async throws -> [QueuedStartClaim] {
        let statement = ClaimQueuedStartsStatement(
            batchSize: batchSize,
            dispatcherID: self.claimer,
            leaseSeconds: self.lease.inSeconds,
            deadlineSeconds: self.retryDeadline.period.inSeconds,
            activityLifetimeSeconds: activityLifetime.inSeconds
        )
        return try await self.database.guardedExecute(statement, logger: self.logger).map { try QueuedStartClaim(row: $0) }
    }

    /// Spends each device's push-to-start budget for one start carrying `timestamp`, under the ledger row's lock:
    /// a device has room when its window holds fewer than the budget's starts and no start to it carried this
    /// timestamp or a newer one.
    /// - Parameter starts: The devices, each once, with the timestamp its start carries.
    /// - Returns: For each device without room, how long until its budget has room again (zero when it has room but a
    ///   newer start reached it: the start is to be rebuilt with a newer timestamp). A device with room is absent.
    package func spendStartBudget(
        _ starts: [(deviceID: String, timestamp: Int)],
        appID: Int64,
        budget: StartBudget,
        on connection: PostgresConnection
    ) async throws -> [String: Duration] {
        guard !starts.isEmpty else { return [:] }
        let window = budget.window.inSeconds
        let devices = starts.map(\.deviceID)
        let rows = try await connection.query(
            """
            WITH spent AS (
                SELECT s.device_id FROM spend_start_budget(
                    \(appID), \(devices)::text[], \(starts.map { Int64($0.timestamp) })::bigint[], \(budget.starts), \(window)) AS s(device_id)
            )
            SELECT w.device_id, start_budget_wait(\(appID), w.device_id, \(budget.starts), \(window))
            FROM unnest(\(devices)::text[]) AS w(device_id)
            WHERE w.device_id NOT IN (SELECT device_id FROM spent)
            """,
            logger: self.logger
        )
        var waits: [String: Duration] = [:]
        for try await (deviceID, seconds) in rows.decode((String, Double).self) {
            waits[deviceID] = .milliseconds(Int64((seconds * 1000).rounded(.up)))
        }
        return waits
    }

    /// Settles claimed queued starts: sent ones are recorded (a deferred start in `feed_starts`, counted as sent by
    /// its update), dropped ones keep their reason (which a renewed activity's record shows), and the rest wait again; a device without room holds all its waiting starts as long. Only claims
    /// still this dispatcher's are settled.
    package func settle(_ outcomes: [QueuedStartOutcome], on connection: PostgresConnection) async throws {
        guard !outcomes.isEmpty else { return }
        var ids: [Int64] = []
        var states: [String] = []
        // Arrays of optionals do not bind: "" and 0 stand for none (`nullif` below).
        var reasons: [String] = []
        var delays: [Double] = []
        var timestamps: [Int64] = []
        var tokenIDs: [Int64] = []
        for outcome in outcomes {
            ids.append(outcome.claim.id)
            switch outcome.fate {
            case .sent(let timestamp, let tokenID):
                states.append(QueuedStartState.sent.rawValue)
                reasons.append("")
                delays.append(0)
                timestamps.append(Int64(timestamp))
                tokenIDs.append(tokenID)
            case .dropped(let reason):
                states.append(QueuedStartState.dropped.rawValue)
                reasons.append(reason)
                delays.append(0)
                timestamps.append(0)
                tokenIDs.append(0)
            case .later(let delay, let reason):
                states.append(QueuedStartState.waiting.rawValue)
                reasons.append(reason)
                delays.append(delay.inSeconds)
                timestamps.append(0)
                tokenIDs.append(0)
            case .awaitingRoom(let delay):
                states.append(QueuedStartState.waiting.rawValue)
                reasons.append(QueuedStartOutcome.startBudgetSpent)
                delays.append(delay.inSeconds)
                timestamps.append(0)
                tokenIDs.append(0)
            }
        }
        try await connection.query(
            """
            WITH settled AS (
                UPDATE queued_starts q SET state = o.state, reason = nullif(o.reason, ''), claimed_by = NULL,
                    due_at = CASE WHEN o.state = \(unescaped: QueuedStartState.waiting.sql) THEN now() + make_interval(secs => o.delay) ELSE q.due_at END,
                    sent_at = CASE WHEN o.state = \(unescaped: QueuedStartState.sent.sql) THEN now() END,
                    timestamp = coalesce(nullif(o.ts, 0), q.timestamp), token_id = coalesce(nullif(o.token_id, 0), q.token_id)
                FROM unnest(\(ids)::bigint[], \(states)::text[], \(reasons)::text[], \(delays)::float8[], \(timestamps)::bigint[], \(tokenIDs)::bigint[])
                    AS o(id, state, reason, delay, ts, token_id)
                WHERE q.id = o.id AND q.claimed_by = \(self.claimer)
                RETURNING q.*
            ),
            started AS (
                INSERT INTO feed_starts (feed_id, device_id, update_id)
                SELECT feed_id, device_id, update_id FROM settled
                WHERE kind = \(unescaped: QueuedStartKind.deferred.sql) AND state = \(unescaped: QueuedStartState.sent.sql)
                ON CONFLICT (feed_id, device_id) DO UPDATE
                    SET update_id = excluded.update_id, started_at = now(), confirmed_at = NULL, unregistered_at = NULL
            ),
            counted AS (
                UPDATE updates u SET sent_count = u.sent_count + c.sent
                FROM (SELECT update_id, count(*) AS sent FROM settled
                      WHERE kind = \(unescaped: QueuedStartKind.deferred.sql) AND state = \(unescaped: QueuedStartState.sent.sql)
                      GROUP BY 1) AS c
                WHERE u.id = c.update_id
            )
            UPDATE queued_starts q SET due_at = greatest(q.due_at, s.due_at)
            FROM settled s
            WHERE s.reason = \(QueuedStartOutcome.startBudgetSpent) AND s.state = \(unescaped: QueuedStartState.waiting.sql)
              AND q.app_id = s.app_id AND q.device_id = s.device_id AND q.id <> s.id AND q.state = \(unescaped: QueuedStartState.waiting.sql)
            """,
            logger: self.logger
        )
    }
}

/// Why a queued start was given up (`queued_starts.reason`, `start.dropped`'s `reason`).
package enum QueuedStartDrop {
    /// The feed ended before the device had room.
    package static let feedEnded = "feedEnded"
    /// The feed's stale date passed before the device had room.
    package static let feedStale = "feedStale"
    /// The device has no live push-to-start token for the feed's attributes type (iOS before 17.2, or none
    /// registered): a renewal planned for it is kept as dropped, so the activity's record says so.
    package static let noPushToStartToken = "noPushToStartToken"
    /// A renewal of an activity registered without a device id.
    package static let noDevice = "noDevice"
    /// It waited past the retry deadline.
    package static let deadline = "deadline"
    /// A renewal whose activity ended, was dismissed or was renewed meanwhile.
    package static let activityGone = "activityGone"
    /// A renewal whose activity's lifetime ran out before the device had room.
    package static let lifetimeOver = "lifetimeOver"
    /// A renewal whose feed was not updated within its `ifUpdatedWithin`, or no longer renews.
    package static let feedIdle = "feedIdle"
}
