import PostgresNIO

extension Reaping {
    /// Expires the app's live push-to-start tokens last registered before `seenBefore` (UNIX seconds; reason
    /// `expired`). - Returns: how many were (or, counting, would be) expired.
    package func expireTokens(_ appID: Int64, seenBefore: Double, _ run: Run) async throws -> Int {
        try await self.run(run) { limit, locking in
            """
            SELECT id FROM push_to_start_tokens
            WHERE app_id = \(appID) AND invalidated_at IS NULL AND last_seen_at < to_timestamp(\(seenBefore))
            ORDER BY id LIMIT \(limit ?? Int(Int32.max)) \(unescaped: locking ? "FOR UPDATE SKIP LOCKED" : "")
            """
        } change: { unseen in
            self.wrapping(
                "UPDATE push_to_start_tokens SET invalidated_at = now(), invalidation_reason = 'expired' WHERE id IN (",
                unseen,
                ") RETURNING id"
            )
        }
    }
}
