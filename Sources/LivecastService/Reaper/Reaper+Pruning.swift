import LivecastCore
import LivecastStore
import PostgresNIO

extension Reaper {
    /// Deletes, in bounded batches, what the app's retention periods no longer keep: deliveries, finished updates
    /// (sent, superseded, failed), scheduled updates done with (sent, cancelled, refused), and dismissed activities
    /// with their tokens and updates. A start of a feed that
    /// has not ended is kept: its `feed_starts` rows are what keeps a device from being started twice.
    /// - Returns: The rows deleted (or, in a dry run, that would be), cascades not counted.
    func prune(_ app: App, now: Int, dryRun: Bool) async throws -> Int {
        let queries = [
            self.oldDeliveries(app, now: now, limit: dryRun ? nil : self.policy.batchSize, locking: !dryRun),
            self.finishedUpdates(app, now: now, limit: dryRun ? nil : self.policy.batchSize, locking: !dryRun),
            self.doneScheduledUpdates(app, now: now, limit: dryRun ? nil : self.policy.batchSize, locking: !dryRun),
            self.dismissedActivities(app, now: now, limit: dryRun ? nil : self.policy.batchSize, locking: !dryRun),
        ]
        let tables = ["deliveries", "updates", "scheduled_updates", "activities"]
        var pruned = 0
        for (table, candidates) in zip(tables, queries) {
            if dryRun {
                pruned += try await self.count(candidates)
            } else {
                pruned += try await self.inBatches(self.wrapping("DELETE FROM \(table) WHERE id IN (", candidates, ") RETURNING id"))
            }
        }
        return pruned
    }

    private func cutoff(_ now: Int, keeping retention: Duration) -> Double { Double(now) - retention.inSeconds }

    private func oldDeliveries(_ app: App, now: Int, limit: Int?, locking: Bool) -> PostgresQuery {
        """
        SELECT d.id FROM deliveries d JOIN updates u ON u.id = d.update_id
        WHERE u.app_id = \(app.id) AND d.attempted_at < to_timestamp(\(self.cutoff(now, keeping: app.retention.deliveries)))
        ORDER BY d.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF d SKIP LOCKED" : "")
        """
    }

    private func finishedUpdates(_ app: App, now: Int, limit: Int?, locking: Bool) -> PostgresQuery {
        """
        SELECT u.id FROM updates u
        WHERE u.app_id = \(app.id) AND u.status IN \(unescaped: OutboxStatus.finishedSQL)
          AND u.completed_at < to_timestamp(\(self.cutoff(now, keeping: app.retention.updates)))
          AND NOT EXISTS (SELECT 1 FROM feed_starts s JOIN feeds f ON f.id = s.feed_id WHERE s.update_id = u.id AND f.state <> \(unescaped: FeedState.ended.sql))
        ORDER BY u.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF u SKIP LOCKED" : "")
        """
    }

    private func doneScheduledUpdates(_ app: App, now: Int, limit: Int?, locking: Bool) -> PostgresQuery {
        """
        SELECT s.id FROM scheduled_updates s
        WHERE s.app_id = \(app.id) AND s.status <> 'scheduled' AND s.done_at < to_timestamp(\(self.cutoff(now, keeping: app.retention.updates)))
        ORDER BY s.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF s SKIP LOCKED" : "")
        """
    }

    private func dismissedActivities(_ app: App, now: Int, limit: Int?, locking: Bool) -> PostgresQuery {
        """
        SELECT a.id FROM activities a
        WHERE a.app_id = \(app.id) AND a.state = \(unescaped: ActivityState.dismissed.sql)
          AND coalesce(a.dismissed_at, a.ended_at) < to_timestamp(\(self.cutoff(now, keeping: app.retention.dismissedActivities)))
        ORDER BY a.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF a SKIP LOCKED" : "")
        """
    }
}
