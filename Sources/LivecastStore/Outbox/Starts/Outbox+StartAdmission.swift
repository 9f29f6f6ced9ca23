import LivecastCore
package import PostgresNIO

/// What became of a device in a page of a feed's start (``Outbox/admitStarts(_:of:budget:on:)``).
package enum StartAdmission: Sendable, Hashable {
    /// The device has room in its budget: recorded in `feed_starts`, its start goes now.
    case send
    /// The device's budget is spent (or a newer start reached it first): the start waits in `queued_starts`.
    case queued
}

extension Outbox {
    /// Admits a page of a feed's start, device by device, in one statement: a device started by the feed before
    /// (unless its user dismissed it and the start includes such devices) or already waiting for this feed's start
    /// is left out; of the others, each with room in its push-to-start budget (``StartBudget``) and no newer start
    /// sent to it spends it (`start_ledger`) and is recorded in `feed_starts` before its push; each without is queued
    /// (`queued_starts`, kind `deferred`), due when its budget has room again, to be sent with the feed's latest
    /// content then. The ledger row is locked while it is spent, so every instance sees the same budget.
    /// - Parameters:
    ///   - deviceIDs: The page's devices.
    ///   - claim: The start.
    ///   - budget: The devices' push-to-start budget.
    /// - Returns: What became of each admitted device; one left out is absent.
    package func admitStarts(
        _ deviceIDs: [String],
        of claim: FanOutClaim,
        budget: StartBudget,
        on connection: PostgresConnection
    ) async throws -> [String: StartAdmission] {
        guard !deviceIDs.isEmpty else { return [:] }
        let window = budget.window.inSeconds
        let rows = try await connection.query(
            """
            WITH candidates AS (
                SELECT p.device_id FROM unnest(\(deviceIDs)::text[]) AS p(device_id)
                WHERE NOT EXISTS (
                        SELECT 1 FROM feed_starts s WHERE s.feed_id = \(claim.feedID) AND s.device_id = p.device_id
                          AND NOT (\(claim.includesDismissed) AND EXISTS (
                              SELECT 1 FROM activities a
                              WHERE a.app_id = \(claim.appID) AND a.device_id = p.device_id AND a.feed_id = \(claim.feedID)
                                AND a.dismissed_by = \(unescaped: DismissedBy.user.sql))))
                  AND NOT EXISTS (
                        SELECT 1 FROM queued_starts q
                        WHERE q.feed_id = \(claim.feedID) AND q.device_id = p.device_id AND q.kind = \(unescaped: QueuedStartKind.deferred.sql)
                          AND q.state IN \(unescaped: QueuedStartState.unfinishedSQL))
            ),
            spent AS (
                SELECT s.device_id FROM spend_start_budget(
                    \(claim.appID), ARRAY(SELECT device_id FROM candidates),
                    ARRAY(SELECT \(Int64(claim.timestamp))::bigint FROM candidates), \(budget.starts), \(window)) AS s(device_id)
            ),
            started AS (
                INSERT INTO feed_starts (feed_id, device_id, update_id)
                SELECT \(claim.feedID), device_id, \(claim.updateID) FROM spent
                ON CONFLICT (feed_id, device_id) DO UPDATE
                    SET update_id = excluded.update_id, started_at = now(), confirmed_at = NULL, unregistered_at = NULL
                RETURNING device_id
            ),
            queued AS (
                INSERT INTO queued_starts (app_id, feed_id, device_id, kind, update_id, relevance_score, due_at)
                SELECT \(claim.appID), \(claim.feedID), c.device_id, \(unescaped: QueuedStartKind.deferred.sql), \(claim.updateID),
                    \(claim.relevanceScore), now() + make_interval(secs => start_budget_wait(\(claim.appID), c.device_id, \(budget.starts), \(window)))
                FROM candidates c
                WHERE c.device_id NOT IN (SELECT device_id FROM spent)
                ON CONFLICT (feed_id, device_id) WHERE kind = \(unescaped: QueuedStartKind.deferred.sql)
                    AND state IN \(unescaped: QueuedStartState.unfinishedSQL) DO NOTHING
                RETURNING device_id
            )
            SELECT device_id, true FROM started
            UNION ALL
            SELECT device_id, false FROM queued
            """,
            logger: self.logger
        )
        var admitted: [String: StartAdmission] = [:]
        for try await (deviceID, sendsNow) in rows.decode((String, Bool).self) {
            admitted[deviceID] = sendsNow ? .send : .queued
        }
        return admitted
    }
}
