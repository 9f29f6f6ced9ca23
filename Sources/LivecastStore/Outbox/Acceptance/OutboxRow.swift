import LivecastCore
import Logging
import PostgresNIO

/// One update as the accepting transaction writes it to the outbox.
struct OutboxRow {
    var appID: Int64
    /// The standalone activity it goes to, or
    var activityID: Int64?
    /// the feed it fans out from.
    var feedID: Int64?
    /// What it says; `payload` holds it encoded.
    var content: LiveActivityPayload
    /// The checked bytes sent to a device token (for a start, with `input-push-token`).
    var payload: String
    /// The bytes sent to the feed's channel (for a start, to a device with `input-push-channel`).
    var channelPayload: String?
    /// The priority the backend asked for, and the one it goes out with once the hourly budget is applied.
    var requestedPriority: Int
    var sentPriority: Int
    var idempotencyKey: IdempotencyKey?
    /// A coalesced update waits for its second to begin, so a later one in the same second can replace it too.
    var coalesced: Bool
    /// A start's audience.
    var audience: FeedStarts.Audience?
    /// Whether a start goes to devices whose user dismissed an activity of the feed too.
    var includesDismissed = false

    /// Inserts the row, with its answer when it has an idempotency key (``AcceptedUpdate/answer``); the dispatchers
    /// are woken once the transaction commits (``OutboxNotification``).
    /// - Returns: What the caller is told, with `dismissalDateClamped` as given.
    func insert(dismissalDateClamped: Bool, on connection: PostgresConnection, logger: Logger) async throws -> AcceptedUpdate {
        let timestamp = self.content.timestamp
        let rows = try await connection.query(
            """
            INSERT INTO updates (app_id, activity_id, feed_id, event, timestamp, content_state, stale_date, dismissal_date,
                                 relevance_score, priority, priority_downgraded, idempotency_key, idempotency_scope,
                                 idempotency_fingerprint, not_before, payload, channel_payload, audience_kind, audience, include_dismissed)
            VALUES (\(self.appID), \(self.activityID), \(self.feedID), \(self.content.event.rawValue), \(timestamp),
                    \(self.content.contentState?.text), \(self.content.staleDate), \(self.content.dismissalDate),
                    \(self.content.relevanceScore), \(Int16(self.sentPriority)), \(self.sentPriority != self.requestedPriority),
                    \(self.idempotencyKey?.key), \(self.idempotencyKey?.scope), \(self.idempotencyKey?.fingerprint),
                    CASE WHEN \(self.coalesced) THEN to_timestamp(\(Double(timestamp))) ELSE now() END,
                    \(self.payload), \(self.channelPayload), \(self.audience?.kind), \(self.audience?.listed), \(self.includesDismissed))
            RETURNING id
            """,
            logger: logger
        )
        var updateID: Int64 = 0
        for try await id in rows.decode(Int64.self) { updateID = id }
        let accepted = self.accepted(updateID: updateID, dismissalDateClamped: dismissalDateClamped)
        if self.idempotencyKey != nil {
            try await UpdateResponses.keep([accepted], on: connection, logger: logger)
        }
        return accepted
    }

    /// What the caller is told once the row is written as `updateID`.
    func accepted(updateID: Int64, dismissalDateClamped: Bool) -> AcceptedUpdate {
        AcceptedUpdate(
            updateID: updateID,
            timestamp: self.content.timestamp,
            priority: self.sentPriority,
            priorityDowngraded: self.sentPriority != self.requestedPriority,
            coalesced: self.coalesced,
            dismissalDateClamped: dismissalDateClamped
        )
    }
}
