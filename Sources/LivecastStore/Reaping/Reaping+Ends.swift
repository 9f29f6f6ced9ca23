import LivecastCore
import PostgresNIO

/// The rows of the rules that end: stale activities and feeds, and activities nearing ActivityKit's 8-hour limit,
/// read in keyset pages (the ends themselves go through the outbox: ``ActivityUpdates``, ``FeedUpdates``).
extension Reaping {
    /// A running activity a rule may end.
    package struct Candidate: Sendable, Hashable {
        package var id: Int64
        package var key: String
        /// `starting` or `active`.
        package var state: ActivityState
        package var followsFeed: Bool
        package var onChannel: Bool
    }

    /// Standalone activities with no update since their `stale-date` plus the grace, after the id `after`, in id
    /// order.
    package func staleActivities(_ appID: Int64, now: Int, staleGrace: Duration, after: Int64, limit: Int) async throws -> [Candidate] {
        try await self.candidates(self.staleActivitiesQuery(appID, now: now, staleGrace: staleGrace, after: after, limit: limit))
    }

    /// How many activities ``staleActivities(_:now:staleGrace:after:limit:)`` would end.
    package func staleActivityCount(_ appID: Int64, now: Int, staleGrace: Duration) async throws -> Int {
        try await self.count(self.staleActivitiesQuery(appID, now: now, staleGrace: staleGrace, after: 0, limit: nil))
    }

    /// Running activities started before `startedBefore` (UNIX seconds), leaving out what the stale rules end (a
    /// stale standalone activity, the followers of a stale or ended feed: the feed's end reaches them), after the
    /// id `after`, in id order.
    package func agingActivities(
        _ appID: Int64,
        now: Int,
        staleGrace: Duration,
        startedBefore: Double,
        after: Int64,
        limit: Int
    ) async throws -> [Candidate] {
        try await self.candidates(
            self.agingActivitiesQuery(appID, now: now, staleGrace: staleGrace, startedBefore: startedBefore, after: after, limit: limit)
        )
    }

    /// How many activities ``agingActivities(_:now:staleGrace:startedBefore:after:limit:)`` would end.
    package func agingActivityCount(_ appID: Int64, now: Int, staleGrace: Duration, startedBefore: Double) async throws -> Int {
        try await self.count(self.agingActivitiesQuery(appID, now: now, staleGrace: staleGrace, startedBefore: startedBefore, after: 0, limit: nil))
    }

    /// Active feeds with no update since their `stale-date` (the last update's, else the feed's policy applied to
    /// its last timestamp) plus their grace, after the id `after`, in id order.
    package func staleFeeds(_ appID: Int64, now: Int, staleGrace: Duration, after: Int64, limit: Int) async throws -> [(id: Int64, key: String)] {
        var feeds: [(id: Int64, key: String)] = []
        let rows = try await self.client.guardedQuery(
            self.staleFeedsQuery(appID, now: now, staleGrace: staleGrace, after: after, limit: limit),
            logger: self.logger
        )
        for try await (id, key) in rows.decode((Int64, String).self) {
            feeds.append((id, key))
        }
        return feeds
    }

    /// How many feeds ``staleFeeds(_:now:staleGrace:after:limit:)`` would end.
    package func staleFeedCount(_ appID: Int64, now: Int, staleGrace: Duration) async throws -> Int {
        try await self.count(self.staleFeedsQuery(appID, now: now, staleGrace: staleGrace, after: 0, limit: nil))
    }

    /// Ends a running activity in the store only, with no push.
    /// - Parameter endedBy: The rule that ends it: `reaper` (stale) or `lifetime` (the 8-hour limit).
    /// - Returns: Whether it was running.
    package func markEnded(activityID: Int64, by endedBy: EndedBy) async throws -> Bool {
        try await self.changed(
            """
            UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now(), ended_by = \(endedBy.rawValue)
            WHERE id = \(activityID) AND state IN \(unescaped: ActivityState.runningSQL) RETURNING id
            """
        ) > 0
    }

    private func candidates(_ query: PostgresQuery) async throws -> [Candidate] {
        var page: [Candidate] = []
        let rows = try await self.client.guardedQuery(query, logger: self.logger)
        for try await (id, key, state, followsFeed, onChannel) in rows.decode((Int64, String, ActivityState, Bool, Bool).self) {
            page.append(Candidate(id: id, key: key, state: state, followsFeed: followsFeed, onChannel: onChannel))
        }
        return page
    }

    private func staleActivitiesQuery(_ appID: Int64, now: Int, staleGrace: Duration, after: Int64, limit: Int?) -> PostgresQuery {
        """
        SELECT a.id, a.activity_key, a.state, false, a.channel_id IS NOT NULL FROM activities a
        WHERE a.app_id = \(appID) AND a.feed_id IS NULL AND a.state IN \(unescaped: ActivityState.runningSQL)
          AND \(unescaped: self.activityIsStale("a", now: now, staleGrace: staleGrace)) AND a.id > \(after)
        ORDER BY a.id LIMIT \(limit ?? Int(Int32.max))
        """
    }

    private func agingActivitiesQuery(
        _ appID: Int64,
        now: Int,
        staleGrace: Duration,
        startedBefore cutoff: Double,
        after: Int64,
        limit: Int?
    ) -> PostgresQuery {
        """
        SELECT a.id, a.activity_key, a.state, a.feed_id IS NOT NULL, a.channel_id IS NOT NULL
        FROM activities a LEFT JOIN feeds f ON f.id = a.feed_id
        WHERE a.app_id = \(appID) AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.started_at < to_timestamp(\(cutoff))
          AND NOT coalesce(a.feed_id IS NULL AND \(unescaped: self.activityIsStale("a", now: now, staleGrace: staleGrace)), false)
          AND (f.id IS NULL OR (f.state <> \(unescaped: FeedState.ended.sql) AND NOT coalesce(\(unescaped: self.feedIsStale("f", now: now, staleGrace: staleGrace)), false)))
          AND a.id > \(after)
        ORDER BY a.id LIMIT \(limit ?? Int(Int32.max))
        """
    }

    private func staleFeedsQuery(_ appID: Int64, now: Int, staleGrace: Duration, after: Int64, limit: Int?) -> PostgresQuery {
        """
        SELECT f.id, f.feed_key FROM feeds f
        WHERE f.app_id = \(appID) AND f.state = \(unescaped: FeedState.active.sql) AND \(unescaped: self.feedIsStale("f", now: now, staleGrace: staleGrace)) AND f.id > \(after)
        ORDER BY f.id LIMIT \(limit ?? Int(Int32.max))
        """
    }

    /// SQL that is true for a stale activity `alias`: past its `stale-date` plus the grace, with no update since
    /// (NULL when it has no stale date). Only integers are spliced in.
    private func activityIsStale(_ alias: String, now: Int, staleGrace: Duration) -> String {
        let deadline = "\(alias).stale_date + \(staleGrace.wholeSeconds)"
        return "(\(deadline) < \(now) AND coalesce(\(alias).last_timestamp, 0) < \(deadline))"
    }

    /// SQL that is true for a stale feed `alias` (NULL when the feed has no stale date). Only integers are spliced in.
    private func feedIsStale(_ alias: String, now: Int, staleGrace: Duration) -> String {
        """
        coalesce((SELECT u.stale_date FROM updates u WHERE u.feed_id = \(alias).id AND u.status <> \(OutboxStatus.superseded.sql) ORDER BY u.id DESC LIMIT 1),
                 \(alias).last_timestamp + \(alias).stale_after_seconds)
            + coalesce(\(alias).stale_grace_seconds, \(staleGrace.wholeSeconds)) < \(now)
        """
    }
}
