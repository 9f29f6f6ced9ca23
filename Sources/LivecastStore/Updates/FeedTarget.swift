import Logging
import PostgresNIO

/// A feed as an update sees it, locked for the transaction that accepts the update.
struct FeedTarget {
    var id: Int64
    var attributesType: String
    var attributes: String
    var contentState: String?
    var state: String
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
                (SELECT c.channel_id FROM channels c WHERE c.feed_id = f.id AND c.state = 'active'),
                EXISTS (SELECT 1 FROM activities a WHERE a.feed_id = f.id AND a.channel_id IS NULL AND a.state IN ('starting', 'active'))
            FROM feeds f WHERE f.app_id = \(appID) AND f.feed_key = \(feedKey) FOR UPDATE OF f
            """,
            logger: logger
        )
        for try await row in rows.decode((Int64, String, String, String?, String, Int?, Int?, String?, Bool).self) {
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
            guard feed.state != "ended" else { throw StoreError(.feedEnded, "the feed \(feedKey) has ended", field: "feedKey") }
            return feed
        }
        throw StoreError(.notFound, "no feed \(feedKey)", field: "feedKey")
    }

    /// The `stale-date` an update gets: the one asked for, or the feed's policy applied to its timestamp.
    func staleDate(requested: Int?, timestamp: Int) -> Int? {
        requested ?? self.staleAfterSeconds.map { timestamp + $0 }
    }

    /// Supersedes the feed's pending updates that no dispatcher has begun: a newer one replaces them.
    func supersedeUnstarted(on connection: PostgresConnection, logger: Logger) async throws {
        try await connection.query(
            """
            UPDATE updates SET status = 'superseded', completed_at = now()
            WHERE feed_id = \(self.id) AND status = 'pending' AND cursor_id = 0 AND NOT channel_done AND event <> 'start'
            """,
            logger: logger
        )
    }
}
