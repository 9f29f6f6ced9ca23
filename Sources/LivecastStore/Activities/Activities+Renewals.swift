import PostgresNIO

extension Activities {
    /// What a new follower's registration found sent to its device for the feed.
    enum Adoption {
        /// Nothing: the app started the activity itself.
        case none
        /// The feed's start, which it confirms.
        case start
        /// A renewal, whose activity it replaces.
        case renewal
    }

    /// A new follower of a feed on a device, in its registration's transaction: confirms the feed's start to the
    /// device, and adopts the renewal sent to the device for the feed, if one waits for its successor. The renewed
    /// activity is linked to it, a user's dismissal of it is taken back (the renewal replaced it, the user did not
    /// swipe it away), and, on the feed's channel, it ends at once (`renewal`): ending it by broadcast would end its
    /// successor too, and LivecastKit ends it on the device. The successor's activity began when its push went out.
    /// - Returns: What it adopted.
    func adopt(_ activityID: Int64, feedID: Int64, deviceID: String, appID: Int64, on connection: PostgresConnection) async throws -> Adoption {
        let ending = "o.channel_id IS NOT NULL AND o.state IN \(ActivityState.runningSQL)"
        let rows = try await connection.query(
            """
            WITH confirmed AS (
                UPDATE feed_starts SET confirmed_at = now()
                WHERE feed_id = \(feedID) AND device_id = \(deviceID) AND confirmed_at IS NULL
                RETURNING started_at
            ),
            renewal AS (
                SELECT q.activity_id, q.sent_at FROM queued_starts q
                WHERE q.app_id = \(appID) AND q.device_id = \(deviceID) AND q.feed_id = \(feedID)
                  AND q.kind = \(unescaped: QueuedStartKind.renewal.sql)
                  AND q.state IN (\(unescaped: QueuedStartState.sending.sql), \(unescaped: QueuedStartState.sent.sql))
                  AND q.activity_id <> \(activityID)
                  AND EXISTS (SELECT 1 FROM activities o WHERE o.id = q.activity_id AND o.renewed_to IS NULL)
                ORDER BY q.id DESC LIMIT 1
            ),
            renewed AS (
                UPDATE activities o SET renewed_to = \(activityID),
                    dismissed_by = CASE WHEN o.dismissed_by = \(unescaped: DismissedBy.user.sql) THEN \(unescaped: DismissedBy.device.sql) ELSE o.dismissed_by END,
                    ended_by = CASE WHEN \(unescaped: ending) THEN \(EndedBy.renewal.rawValue) ELSE o.ended_by END,
                    ended_at = CASE WHEN \(unescaped: ending) THEN now() ELSE o.ended_at END,
                    state = CASE WHEN \(unescaped: ending) THEN \(unescaped: ActivityState.ended.sql) ELSE o.state END
                FROM renewal WHERE o.id = renewal.activity_id AND o.renewed_to IS NULL
                RETURNING o.id, renewal.sent_at
            )
            UPDATE activities n SET renewed_from = coalesce((SELECT id FROM renewed), n.renewed_from),
                started_at = least(n.started_at, coalesce((SELECT sent_at FROM renewed), (SELECT started_at FROM confirmed), n.started_at))
            WHERE n.id = \(activityID) AND (EXISTS (SELECT 1 FROM renewed) OR EXISTS (SELECT 1 FROM confirmed))
            RETURNING n.renewed_from IS NOT NULL
            """,
            logger: self.logger
        )
        for try await isRenewal in rows.decode(Bool.self) { return isRenewal ? .renewal : .start }
        return .none
    }

    /// The activity a renewal replaced by this one, when its end is due: this one has a live update token, and the
    /// replaced one still runs on its own token.
    func renewedActivityToEnd(by activityID: Int64, on connection: PostgresConnection) async throws -> String? {
        let rows = try await connection.query(
            """
            SELECT o.activity_key FROM activities n JOIN activities o ON o.id = n.renewed_from
            WHERE n.id = \(activityID) AND o.state IN \(unescaped: ActivityState.runningSQL) AND o.channel_id IS NULL
              AND EXISTS (SELECT 1 FROM activity_tokens t WHERE t.activity_id = n.id AND t.invalidated_at IS NULL)
            """,
            logger: self.logger
        )
        for try await key in rows.decode(String.self) { return key }
        return nil
    }
}
