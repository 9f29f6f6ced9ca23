import LivecastCore
import PostgresNIO

extension Reaping {
    /// Marks the app's feed starts that went to a device before `cutoff` (UNIX seconds) and that the device's app
    /// never reported as an activity of the feed: each writes `start.unregistered` once. A start whose push APNs
    /// refused is not one (its delivery records the refusal), as in the feed's `starts.unregistered` count.
    /// - Returns: How many were (or, counting, would be) marked.
    package func markUnregisteredStarts(_ appID: Int64, startedBefore cutoff: Double, _ run: Run) async throws -> Int {
        try await self.run(run) { limit, locking in
            """
            SELECT s.feed_id, s.device_id FROM feed_starts s JOIN feeds f ON f.id = s.feed_id
            WHERE f.app_id = \(appID) AND s.unregistered_at IS NULL AND s.started_at < to_timestamp(\(cutoff))
              AND NOT EXISTS (SELECT 1 FROM activities a WHERE a.feed_id = s.feed_id AND a.device_id = s.device_id)
              AND NOT EXISTS (
                  SELECT 1 FROM deliveries d JOIN push_to_start_tokens p ON p.app_id = f.app_id AND p.token = d.target
                  WHERE d.update_id = s.update_id AND d.target_kind = \(unescaped: DeliveryTargetKind.device.sql) AND p.device_id = s.device_id)
            ORDER BY s.started_at LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE OF s SKIP LOCKED" : "")
            """
        } change: { due in
            self.wrapping(
                "WITH due AS (",
                due,
                """
                )
                UPDATE feed_starts s SET unregistered_at = now() FROM due
                WHERE s.feed_id = due.feed_id AND s.device_id = due.device_id RETURNING s.feed_id
                """
            )
        }
    }
}
