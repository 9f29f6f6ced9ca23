import LivecastCore
import PostgresNIO

/// Deleting what an app's retention periods no longer keep. Each takes the time (UNIX seconds) before which a row
/// is old enough, and returns the rows deleted (or, counting, that would be), cascades not counted.
extension Reaping {
    /// Deliveries attempted before `cutoff`.
    package func pruneDeliveries(_ appID: Int64, attemptedBefore cutoff: Double, _ run: Run) async throws -> Int {
        try await self.prune("deliveries", run) { limit, locking in
            """
            SELECT d.id FROM deliveries d JOIN updates u ON u.id = d.update_id
            WHERE u.app_id = \(appID) AND d.attempted_at < to_timestamp(\(cutoff))
            ORDER BY d.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF d SKIP LOCKED" : "")
            """
        }
    }

    /// Finished updates (sent, superseded, failed) completed before `cutoff`. A start of a feed that has not ended
    /// is kept: its `feed_starts` rows are what keeps a device from being started twice.
    package func pruneFinishedUpdates(_ appID: Int64, completedBefore cutoff: Double, _ run: Run) async throws -> Int {
        try await self.prune("updates", run) { limit, locking in
            """
            SELECT u.id FROM updates u
            WHERE u.app_id = \(appID) AND u.status IN \(unescaped: OutboxStatus.finishedSQL)
              AND u.completed_at < to_timestamp(\(cutoff))
              AND NOT EXISTS (SELECT 1 FROM feed_starts s JOIN feeds f ON f.id = s.feed_id WHERE s.update_id = u.id AND f.state <> \(unescaped: FeedState.ended.sql))
            ORDER BY u.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF u SKIP LOCKED" : "")
            """
        }
    }

    /// Scheduled updates done with (sent, cancelled, refused) before `cutoff`.
    package func pruneScheduledUpdates(_ appID: Int64, doneBefore cutoff: Double, _ run: Run) async throws -> Int {
        try await self.prune("scheduled_updates", run) { limit, locking in
            """
            SELECT s.id FROM scheduled_updates s
            WHERE s.app_id = \(appID) AND s.status <> \(unescaped: ScheduledStatus.scheduled.sql) AND s.done_at < to_timestamp(\(cutoff))
            ORDER BY s.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF s SKIP LOCKED" : "")
            """
        }
    }

    /// Dismissed activities (with their tokens and updates) dismissed before `cutoff`.
    package func pruneDismissedActivities(_ appID: Int64, dismissedBefore cutoff: Double, _ run: Run) async throws -> Int {
        try await self.prune("activities", run) { limit, locking in
            """
            SELECT a.id FROM activities a
            WHERE a.app_id = \(appID) AND a.state = \(unescaped: ActivityState.dismissed.sql)
              AND coalesce(a.dismissed_at, a.ended_at) < to_timestamp(\(cutoff))
            ORDER BY a.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF a SKIP LOCKED" : "")
            """
        }
    }

    /// Events (with their webhook deliveries, pending or failed) written before `cutoff`: the event feed and the
    /// webhooks keep them as long as the app's records of updates.
    package func pruneEvents(_ appID: Int64, occurredBefore cutoff: Double, _ run: Run) async throws -> Int {
        try await self.prune("events", run) { limit, locking in
            """
            SELECT e.id FROM events e
            WHERE e.app_id = \(appID) AND e.occurred_at < to_timestamp(\(cutoff))
            ORDER BY e.id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF e SKIP LOCKED" : "")
            """
        }
    }

    /// Client devices (their admissions, `client_devices`) admitted before `cutoff` that hold no live push-to-start
    /// token and no running activity: gone for longer than the token expiry. One that comes back is a new device.
    /// Their request buckets go once full again (`client_buckets`, whose rows say nothing then).
    package func pruneClientDevices(_ appID: Int64, admittedBefore cutoff: Double, _ run: Run) async throws -> Int {
        let devices = try await self.run(run) { limit, locking in
            """
            SELECT c.app_id, c.device_id FROM client_devices c
            WHERE c.app_id = \(appID) AND c.first_seen_at < to_timestamp(\(cutoff))
              AND NOT EXISTS (SELECT 1 FROM push_to_start_tokens t WHERE t.app_id = c.app_id AND t.device_id = c.device_id AND t.invalidated_at IS NULL)
              AND NOT EXISTS (SELECT 1 FROM activities a WHERE a.app_id = c.app_id AND a.device_id = c.device_id AND a.state IN \(unescaped: ActivityState.runningSQL))
            ORDER BY c.first_seen_at LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF c SKIP LOCKED" : "")
            """
        } change: { old in
            self.wrapping("DELETE FROM client_devices WHERE (app_id, device_id) IN (", old, ") RETURNING device_id")
        }
        guard case .batches = run else { return devices }
        try await self.client.guardedQuery("DELETE FROM client_buckets WHERE app_id = \(appID) AND full_at < now()", logger: self.logger)
        return devices
    }

    private func prune(_ table: String, _ run: Run, _ candidates: (_ limit: Int?, _ locking: Bool) -> PostgresQuery) async throws -> Int {
        try await self.run(run, candidates: candidates) { old in
            self.wrapping("DELETE FROM \(table) WHERE id IN (", old, ") RETURNING id")
        }
    }
}
