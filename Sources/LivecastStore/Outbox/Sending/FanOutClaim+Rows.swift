import LivecastCore
import PostgresNIO

extension FanOutClaim {
    /// The columns a claim statement returns, in ``first(of:)``'s order, over `updates u` and `feeds f`, followed
    /// by the slice's id and last follower (NULL for the claim of an update itself).
    /// - Parameters: SQL for the claim's checkpoint, whether its channel is done, and its attempts.
    static func columns(cursor: String, channelDone: String, attempts: String, deadline: RetryDeadline) -> String {
        """
        u.id, u.app_id, u.feed_id, u.event, u.timestamp, u.dismissal_date, u.payload, u.channel_payload, u.priority::int,
            \(cursor), \(channelDone), u.audience_kind, u.audience, f.attributes_type, \(attempts),
            u.created_at + interval '\(deadline.period.wholeSeconds) seconds' < now(), u.relevance_score, u.include_dismissed
        """
    }

    /// The columns' types, in ``columns(cursor:channelDone:attempts:deadline:)``'s order.
    private typealias Row = (
        Int64, Int64, Int64, LiveActivityEvent, Int, Int?, String, String?, Int, Int64, Bool, String?, [String]?, String, Int, Bool,
        Double?, Bool, Int64?, Int64?
    )

    /// The claim in the first row of a claim statement (``columns(cursor:channelDone:attempts:deadline:)``), if any.
    static func first(of rows: StatementRows) async throws -> FanOutClaim? {
        for try await row in rows.decode(Row.self) {
            return FanOutClaim(
                updateID: row.0,
                appID: row.1,
                feedID: row.2,
                event: row.3,
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
                pastDeadline: row.15,
                relevanceScore: row.16,
                includesDismissed: row.17,
                slice: row.18.flatMap { id in row.19.map { FanOutSlice(id: id, upperID: $0) } }
            )
        }
        return nil
    }
}
