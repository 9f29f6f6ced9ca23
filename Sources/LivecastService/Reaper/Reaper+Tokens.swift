import LivecastCore
import PostgresNIO

extension Reaper {
    /// Expires live push-to-start tokens the device has not registered again for the expiry period (reason
    /// `expired`). - Returns: how many were (or, in a dry run, would be) expired.
    func expireTokens(_ app: App, now: Int, dryRun: Bool) async throws -> Int {
        if dryRun { return try await self.count(self.unseenTokens(app, now: now, limit: nil, locking: false)) }
        return try await self.inBatches(
            self.wrapping(
                "UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'expired' WHERE id IN (",
                self.unseenTokens(app, now: now, limit: self.policy.batchSize, locking: true),
                ") RETURNING id"
            )
        )
    }

    private func unseenTokens(_ app: App, now: Int, limit: Int?, locking: Bool) -> PostgresQuery {
        """
        SELECT id FROM push_to_start_tokens
        WHERE app_id = \(app.id) AND invalidated_at IS NULL AND last_seen_at < to_timestamp(\(Double(now) - self.policy.tokenExpiry.inSeconds))
        ORDER BY id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE SKIP LOCKED" : "")
        """
    }
}
