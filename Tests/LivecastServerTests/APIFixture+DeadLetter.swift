import PostgresNIO

extension APIFixture {
    /// A dead letter as the dispatcher keeps one: an update of a registered standalone activity, given up after
    /// seven tries. - Returns: Its id.
    func deadLetter(activityKey: String) async throws -> Int64 {
        let rows = try await self.client.query(
            """
            WITH update AS (
                INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, priority, status, payload, completed_at)
                SELECT app_id, id, 'update', extract(epoch FROM now())::bigint, '{"eta":5}', 5, 'failed', '{"aps":{}}', now()
                FROM activities WHERE activity_key = \(activityKey) RETURNING id, app_id, activity_id
            )
            INSERT INTO dead_letters (app_id, update_id, target_kind, target_id, reason, attempts)
            SELECT app_id, id, 'activity', activity_id, 'ServiceUnavailable', 7 FROM update RETURNING id
            """
        )
        for try await id in rows.decode(Int64.self) { return id }
        return 0
    }
}
