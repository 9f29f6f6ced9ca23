import LivecastCore
import Logging
import PostgresNIO

/// A feed as an update sees it, locked for the transaction that accepts the update.
struct FeedTarget: ContentTarget {
    var id: Int64
    var attributesType: String
    var attributes: String
    var contentState: String?
    var state: FeedState
    var lastTimestamp: Int?
    var staleAfterSeconds: Int?
    /// The APNs id of the feed's live channel.
    var channelID: String?
    /// Whether running activities follow it with their own tokens.
    var hasTokenFollowers: Bool

    /// Locks and reads a feed that takes updates. - Throws: ``StoreError`` `notFound`, or `feedEnded`.
    static func lock(appID: Int64, feedKey: String, on connection: PostgresConnection, logger: Logger) async throws -> FeedTarget {
        let rows = try await connection.query(
            """
            SELECT f.id, f.attributes_type, f.attributes, f.content_state, f.state, f.last_timestamp, f.stale_after_seconds,
                (SELECT c.channel_id FROM channels c WHERE c.feed_id = f.id AND c.state = \(unescaped: ChannelState.active.sql)),
                EXISTS (SELECT 1 FROM activities a WHERE a.feed_id = f.id AND a.channel_id IS NULL AND a.state IN \(unescaped: ActivityState.runningSQL))
            FROM feeds f WHERE f.app_id = \(appID) AND f.feed_key = \(feedKey) FOR UPDATE OF f
            """,
            logger: logger
        )
        for try await row in rows.decode((Int64, String, String, String?, FeedState, Int?, Int?, String?, Bool).self) {
            let feed = FeedTarget(
                id: row.0,
                attributesType: row.1,
                attributes: row.2,
                contentState: row.3,
                state: row.4,
                lastTimestamp: row.5,
                staleAfterSeconds: row.6,
                channelID: row.7,
                hasTokenFollowers: row.8
            )
            guard feed.state != .ended else { throw StoreError(.feedEnded, "the feed \(feedKey) has ended", field: "feedKey") }
            return feed
        }
        throw StoreError(.notFound, "no feed \(feedKey)", field: "feedKey")
    }

    /// Token followers get device pushes, so the payload must fit one; a channel alone takes a broadcast's size.
    var destination: PushDestination { self.hasTokenFollowers || self.channelID == nil ? .device : .broadcast }

    /// An update's own content state; an end without one repeats the feed's last.
    func contentState(for content: UpdateContent) throws -> RawJSON? {
        guard content.contentState == nil, content.event == .end else { return content.contentState }
        return try self.contentState.map { try RawJSON(validating: $0) }
    }

    /// The `stale-date` an update gets (see ``staleDate(requested:timestamp:)``); an end keeps only the one asked for.
    func staleDate(for content: UpdateContent, timestamp: Int) -> Int? {
        guard content.event != .end else { return content.staleDate }
        return self.staleDate(requested: content.staleDate, timestamp: timestamp)
    }

    /// The `stale-date` a start or an update gets: the one asked for, or the feed's policy applied to its timestamp.
    func staleDate(requested: Int?, timestamp: Int) -> Int? {
        requested ?? self.staleAfterSeconds.map { timestamp + $0 }
    }

    /// Supersedes the feed's pending updates that no dispatcher has begun: a newer one replaces them.
    func supersedePending(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await OutboxStatements.supersede(
            """
            UPDATE updates SET status = \(unescaped: OutboxStatus.superseded.sql), completed_at = now()
            WHERE feed_id = \(self.id) AND status = \(unescaped: OutboxStatus.pending.sql) AND cursor_id = 0 AND NOT channel_done AND event <> \(unescaped: LiveActivityEvent.start.sql)
            RETURNING timestamp
            """,
            on: connection,
            logger: logger
        )
    }

    /// The row fans out from the feed; its channel, when it has one, gets the same bytes.
    func address(_ row: inout OutboxRow) {
        row.feedID = self.id
        row.channelPayload = self.channelID == nil ? nil : row.payload
    }

    /// The feed's timestamp, content state, stale date and relevance move on (what the device keeps when an update
    /// leaves one out stays); an end ends it, noting who ended it (``EndedBy/declare(on:logger:)``;
    /// the feed's followers' `activity.ended` events, written as its end reaches them, report it).
    func recordAccepted(_ payload: LiveActivityPayload, on connection: PostgresConnection, logger: Logger) async throws {
        let isEnd = payload.event == .end
        try await connection.query(
            """
            UPDATE feeds SET last_timestamp = \(payload.timestamp), content_state = coalesce(\(payload.contentState?.text), content_state),
                stale_date = coalesce(\(payload.staleDate), stale_date), relevance_score = coalesce(\(payload.relevanceScore), relevance_score),
                state = CASE WHEN \(isEnd) THEN \(unescaped: FeedState.ended.sql) ELSE \(unescaped: FeedState.active.sql) END,
                ended_at = CASE WHEN \(isEnd) THEN now() END, updated_at = now(),
                ended_by = CASE WHEN \(isEnd) THEN coalesce(nullif(current_setting('livecast.ended_by', true), ''), 'backend') END
            WHERE id = \(self.id)
            """,
            logger: logger
        )
    }
}
