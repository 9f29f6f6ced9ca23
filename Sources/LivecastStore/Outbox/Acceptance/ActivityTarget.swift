import LivecastCore
import Logging
import PostgresNIO

/// A single activity as its own update or end sees it, locked for the transaction that accepts it: a standalone
/// activity, or a token-based follower ended alone (its feed is then read too, `FOR SHARE`).
struct ActivityTarget: ContentTarget {
    var id: Int64
    /// The state of its channel, for a channel-based activity.
    var channelState: ChannelState?
    /// The later of its own last timestamp and its feed's.
    var lastTimestamp: Int?
    /// Its feed's content state, for a follower.
    var feedContentState: String?

    /// Locks and reads an activity that takes an update of its own.
    /// - Parameters:
    ///   - asFollower: Whether it must follow a feed (ended alone) or must not (a standalone activity).
    ///   - afterItsFeed: Whether a follower takes its end after its feed's (one reported after the feed ended).
    /// - Throws: ``StoreError``: `notFound`; `conflict` when it follows a feed and `asFollower` is not set (or the
    ///   other way round), or is a channel-based follower; `activityEnded` when it has ended, or its feed has and
    ///   `afterItsFeed` is not set; `channelRetired` when its channel is no longer active.
    static func lock(
        appID: Int64,
        activityKey: String,
        asFollower: Bool,
        afterItsFeed: Bool = false,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> ActivityTarget {
        let rows = try await connection.query(
            """
            SELECT a.id, a.state, a.last_timestamp, c.state, a.feed_id FROM activities a LEFT JOIN channels c ON c.id = a.channel_id
            WHERE a.app_id = \(appID) AND a.activity_key = \(activityKey) FOR UPDATE OF a
            """,
            logger: logger
        )
        var found: Row?
        for try await row in rows.decode((Int64, ActivityState, Int?, ChannelState?, Int64?).self) { found = Row(row) }
        guard let activity = found else { throw StoreError(.notFound, "no activity \(activityKey)", field: "activityId") }
        try activity.checkTakesUpdates(asFollower: asFollower)
        // A follower's feed is read FOR SHARE: a feed end accepted meanwhile is seen, one accepted later waits.
        var feed: (state: FeedState, lastTimestamp: Int?, contentState: String?)?
        if let feedID = activity.feedID {
            let feeds = try await connection.query(
                "SELECT state, last_timestamp, content_state FROM feeds WHERE id = \(feedID) FOR SHARE",
                logger: logger
            )
            for try await row in feeds.decode((FeedState, Int?, String?).self) { feed = row }
            guard feed?.state != .ended || afterItsFeed else {
                throw StoreError(.activityEnded, "the activity's feed has ended", field: "activityId")
            }
        }
        try activity.checkChannel(asFollower: asFollower)
        return ActivityTarget(
            id: activity.id,
            channelState: activity.channelState,
            lastTimestamp: [activity.lastTimestamp, feed?.lastTimestamp].compactMap { $0 }.max(),
            feedContentState: feed?.contentState
        )
    }

    /// A standalone activity's target from its locked row (``Row``), as ``lock(appID:activityKey:asFollower:on:logger:)``
    /// makes it with `asFollower` unset.
    /// - Throws: what that throws for the row.
    static func standalone(_ activity: Row) throws(StoreError) -> ActivityTarget {
        try activity.checkTakesUpdates(asFollower: false)
        try activity.checkChannel(asFollower: false)
        return ActivityTarget(id: activity.id, channelState: activity.channelState, lastTimestamp: activity.lastTimestamp)
    }

    /// An activity's row as its lock reads it: `a.id, a.state, a.last_timestamp, c.state, a.feed_id`.
    struct Row {
        var id: Int64
        var state: ActivityState
        var lastTimestamp: Int?
        var channelState: ChannelState?
        var feedID: Int64?

        init(_ row: (Int64, ActivityState, Int?, ChannelState?, Int64?)) {
            (self.id, self.state, self.lastTimestamp, self.channelState, self.feedID) = row
        }

        /// Whether it takes an update of its own: a follower (ended alone) or not, as asked, and not ended.
        func checkTakesUpdates(asFollower: Bool) throws(StoreError) {
            // Its feed's updates carry the feed's timestamps; updates of its own would interleave with them.
            guard (self.feedID != nil) == asFollower else {
                throw StoreError(
                    .conflict,
                    asFollower ? "the activity follows no feed" : "the activity follows a feed: update the feed instead",
                    field: "activityId"
                )
            }
            guard self.state.isRunning else {
                throw StoreError(.activityEnded, "the activity has ended", field: "activityId")
            }
        }

        /// Whether its channel, if any, still reaches it.
        func checkChannel(asFollower: Bool) throws(StoreError) {
            if asFollower, self.channelState != nil {
                throw StoreError(.conflict, "a channel-based follower cannot be ended alone: a broadcast ends every follower", field: "activityId")
            }
            if let channelState = self.channelState, channelState != .active {
                throw StoreError(.channelRetired, "the activity's channel is \(channelState): nothing can reach it", field: "activityId")
            }
        }
    }

    /// A channel-based activity is reached by a broadcast, a token-based one by a device push.
    var destination: PushDestination { self.channelState == nil ? .device : .broadcast }

    /// The content's own state, else its feed's last (a follower ended alone).
    func contentState(for content: UpdateContent) throws -> RawJSON? {
        try content.contentState ?? self.feedContentState.map { try RawJSON(validating: $0) }
    }

    /// Only the one asked for.
    func staleDate(for content: UpdateContent, timestamp: Int) -> Int? { content.staleDate }

    /// Supersedes the activity's pending updates: a newer one replaces them.
    func supersedePending(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await OutboxStatements.supersede(
            """
            UPDATE updates SET status = \(unescaped: OutboxStatus.superseded.sql), completed_at = now()
            WHERE activity_id = \(self.id) AND status = \(unescaped: OutboxStatus.pending.sql)
            RETURNING timestamp
            """,
            on: connection,
            logger: logger
        )
    }

    func address(_ row: inout OutboxRow) {
        row.activityID = self.id
    }

    /// The activity's timestamp and stale date move on; an end ends it with its dismissal date.
    /// Records the accepted update on the activity, and supersedes its older updates that APNs asked to retry
    /// (`pending` after a try): this one carries the latest content, and a device would ignore theirs after it. The
    /// rule is `supersede_retried_updates` (migrations `0018` and `0031`), as for a batch; the update joins its one row so that
    /// PostgreSQL runs it.
    func recordAccepted(_ payload: LiveActivityPayload, on connection: PostgresConnection, logger: Logger) async throws {
        let isEnd = payload.event == .end
        try await connection.query(
            """
            WITH superseded AS (
                SELECT supersede_retried_updates(ARRAY[\(self.id)]::bigint[], ARRAY[\(payload.timestamp)]::bigint[])
            )
            UPDATE activities SET last_timestamp = \(payload.timestamp),
                stale_date = CASE WHEN \(isEnd) THEN stale_date ELSE coalesce(\(payload.staleDate), stale_date) END,
                state = CASE WHEN \(isEnd) THEN \(unescaped: ActivityState.ended.sql) ELSE state END,
                ended_at = CASE WHEN \(isEnd) THEN now() ELSE ended_at END,
                dismissal_date = CASE WHEN \(isEnd) THEN \(payload.dismissalDate) ELSE dismissal_date END
            FROM superseded
            WHERE id = \(self.id)
            """,
            logger: logger
        )
    }
}
