import LivecastCore
import LivecastStore
import PostgresNIO

/// The rules that end: stale activities and feeds, and activities nearing ActivityKit's 8-hour limit. Ends go
/// through the outbox (``ActivityUpdates``, ``FeedUpdates``), so the ordering rules hold and the dispatcher sends
/// them; the store's locks and states make a second reaper's attempt a no-op.
extension Reaper {
    /// A running activity a rule may end.
    struct Candidate {
        var id: Int64
        var key: String
        var state: String
        var followsFeed: Bool
        var onChannel: Bool
    }

    /// Standalone activities with no update since their `stale-date` plus the grace.
    func staleActivities(_ app: App, now: Int, after: Int64, limit: Int?) -> PostgresQuery {
        """
        SELECT a.id, a.activity_key, a.state, false, a.channel_id IS NOT NULL FROM activities a
        WHERE a.app_id = \(app.id) AND a.feed_id IS NULL AND a.state IN \(unescaped: ActivityState.runningSQL)
          AND \(unescaped: self.activityIsStale("a", now: now)) AND a.id > \(after)
        ORDER BY a.id LIMIT \(limit ?? Int(Int32.max))
        """
    }

    /// Running activities older than the 8-hour limit less the margin, leaving out what the stale rules end (a
    /// stale standalone activity, the followers of a stale or ended feed: the feed's end reaches them).
    func agingActivities(_ app: App, now: Int, after: Int64, limit: Int?) -> PostgresQuery {
        let cutoff = Double(now) - (ReaperPolicy.activityLifetime - self.policy.lifetimeMargin).inSeconds
        return """
            SELECT a.id, a.activity_key, a.state, a.feed_id IS NOT NULL, a.channel_id IS NOT NULL
            FROM activities a LEFT JOIN feeds f ON f.id = a.feed_id
            WHERE a.app_id = \(app.id) AND a.state IN \(unescaped: ActivityState.runningSQL) AND a.started_at < to_timestamp(\(cutoff))
              AND NOT coalesce(a.feed_id IS NULL AND \(unescaped: self.activityIsStale("a", now: now)), false)
              AND (f.id IS NULL OR (f.state <> \(unescaped: FeedState.ended.sql) AND NOT coalesce(\(unescaped: self.feedIsStale("f", now: now)), false)))
              AND a.id > \(after)
            ORDER BY a.id LIMIT \(limit ?? Int(Int32.max))
            """
    }

    /// Active feeds with no update since their `stale-date` (the last update's, else the feed's policy applied to
    /// its last timestamp) plus their grace.
    func staleFeeds(_ app: App, now: Int, after: Int64, limit: Int?) -> PostgresQuery {
        """
        SELECT f.id, f.feed_key FROM feeds f
        WHERE f.app_id = \(app.id) AND f.state = \(unescaped: FeedState.active.sql) AND \(unescaped: self.feedIsStale("f", now: now)) AND f.id > \(after)
        ORDER BY f.id LIMIT \(limit ?? Int(Int32.max))
        """
    }

    /// SQL that is true for a stale activity `alias`: past its `stale-date` plus the grace, with no update since
    /// (NULL when it has no stale date). Only integers are spliced in.
    private func activityIsStale(_ alias: String, now: Int) -> String {
        let deadline = "\(alias).stale_date + \(self.policy.staleGrace.wholeSeconds)"
        return "(\(deadline) < \(now) AND coalesce(\(alias).last_timestamp, 0) < \(deadline))"
    }

    /// SQL that is true for a stale feed `alias` (NULL when the feed has no stale date). Only integers are spliced in.
    private func feedIsStale(_ alias: String, now: Int) -> String {
        """
        coalesce((SELECT u.stale_date FROM updates u WHERE u.feed_id = \(alias).id AND u.status <> \(OutboxStatus.superseded.sql) ORDER BY u.id DESC LIMIT 1),
                 \(alias).last_timestamp + \(alias).stale_after_seconds)
            + coalesce(\(alias).stale_grace_seconds, \(self.policy.staleGrace.wholeSeconds)) < \(now)
        """
    }

    func endStaleActivities(_ app: App, now: Int) async throws -> Int {
        let updates = ActivityUpdates(client: self.database, logger: self.logger)
        return try await self.forEachCandidate({ self.staleActivities(app, now: now, after: $0, limit: $1) }) { candidate in
            if candidate.state == ActivityState.starting.rawValue { return try await self.markEnded(candidate.id) }
            var end = ActivityUpdates.Request(appID: app.id, activityKey: candidate.key, event: .end)
            end.content.dismissalDate = now + Int(self.policy.staleDismissalDelay.wholeSeconds)
            return try await self.end(candidate) { _ = try await updates.accept(end) }
        }
    }

    func endAgingActivities(_ app: App, now: Int) async throws -> Int {
        let updates = ActivityUpdates(client: self.database, logger: self.logger)
        let dismissalDate = now + Int(ReaperPolicy.maximumDismissalDelay.wholeSeconds)
        return try await self.forEachCandidate({ self.agingActivities(app, now: now, after: $0, limit: $1) }) { candidate in
            // Nothing reaches an activity without a token alone, nor one follower of a channel: the device ends
            // them at 8 hours by itself; the store stops counting them as running.
            if candidate.state == ActivityState.starting.rawValue || (candidate.followsFeed && candidate.onChannel) {
                return try await self.markEnded(candidate.id)
            }
            if candidate.followsFeed {
                return try await self.end(candidate) {
                    _ = try await updates.endFollower(appID: app.id, activityKey: candidate.key, dismissalDate: dismissalDate)
                }
            }
            var end = ActivityUpdates.Request(appID: app.id, activityKey: candidate.key, event: .end)
            end.content.dismissalDate = dismissalDate
            return try await self.end(candidate) { _ = try await updates.accept(end) }
        }
    }

    func endStaleFeeds(_ app: App, now: Int) async throws -> Int {
        let updates = FeedUpdates(client: self.database, logger: self.logger)
        var ended = 0
        var after: Int64 = 0
        while true {
            var page: [(Int64, String)] = []
            for try await row in try await self.database.guardedQuery(
                self.staleFeeds(app, now: now, after: after, limit: self.policy.batchSize),
                logger: self.logger
            )
            .decode((Int64, String).self) {
                page.append(row)
            }
            for (id, key) in page {
                after = id
                var end = FeedUpdates.Request(appID: app.id, feedKey: key, event: .end)
                end.content.dismissalDate = now + Int(self.policy.staleDismissalDelay.wholeSeconds)
                do {
                    _ = try await updates.accept(end)
                    ended += 1
                } catch let error as StoreError where error.code == .feedEnded || error.code == .notFound {
                    continue  // another reaper, or the backend, ended it first
                }
            }
            if page.count < self.policy.batchSize { return ended }
        }
    }

    /// Walks a candidate query in keyset order, page by page. - Returns: how many `body` ended.
    private func forEachCandidate(_ query: (Int64, Int) -> PostgresQuery, _ body: (Candidate) async throws -> Bool) async throws -> Int {
        var ended = 0
        var after: Int64 = 0
        while true {
            var page: [Candidate] = []
            let rows = try await self.database.guardedQuery(query(after, self.policy.batchSize), logger: self.logger)
            for try await (id, key, state, followsFeed, onChannel) in rows.decode((Int64, String, String, Bool, Bool).self) {
                page.append(Candidate(id: id, key: key, state: state, followsFeed: followsFeed, onChannel: onChannel))
            }
            for candidate in page {
                after = candidate.id
                if try await body(candidate) { ended += 1 }
            }
            if page.count < self.policy.batchSize { return ended }
        }
    }

    /// Accepts an end. - Returns: whether it was accepted; `false` when the activity ended meanwhile.
    private func end(_ candidate: Candidate, _ accept: () async throws -> Void) async throws -> Bool {
        do {
            try await accept()
            return true
        } catch let error as StoreError {
            switch error.code {
            case .activityEnded, .notFound:
                return false  // another reaper, the backend or its feed's end got there first
            case .channelRetired:
                return try await self.markEnded(candidate.id)  // nothing can reach it
            default:
                self.logger.warning("the reaper could not end an activity", metadata: ["activity": "\(candidate.key)", "error": "\(error)"])
                return false
            }
        }
    }

    /// Ends a running activity in the store only, with no push. - Returns: whether it was running.
    private func markEnded(_ activityID: Int64) async throws -> Bool {
        try await self.changed(
            "UPDATE activities SET state = \(unescaped: ActivityState.ended.sql), ended_at = now() WHERE id = \(activityID) AND state IN \(unescaped: ActivityState.runningSQL) RETURNING id"
        ) > 0
    }
}
