import LivecastTesting
import PostgresNIO
import Testing

/// The dispatcher's search for due standalone activity updates (`due_activity_updates`, migrations `0023` and
/// `0024`) over a backlog, such as builds up while APNs is slow or down.
@Suite struct DueActivityUpdatesTests {
    @Test func aSearchOverABacklogReadsAFewPagesForEachUpdateItFinds() async throws {
        try await StoreFixture.with("due_activity_backlog") { fixture in
            try await fixture.client.query(
                """
                INSERT INTO activities (app_id, activity_key, attributes_type)
                SELECT \(fixture.appID), 'order-' || n, 'OrderAttributes' FROM generate_series(1, 1000) AS n
                """
            )
            // Updates sent, then vacuumed: statistics taken while the outbox is empty, as after it has drained.
            try await self.insertUpdates(fixture, perActivity: 20)
            try await fixture.client.query("UPDATE updates SET status = 'sent', completed_at = now()")
            try await fixture.client.query("VACUUM ANALYZE")
            // Then 20,000 updates pile up.
            try await self.insertUpdates(fixture, perActivity: 20)
            // A PL/pgSQL function's first call on a connection also reads the catalog to plan its statement (270 pages
            // against 161 on the second call here, and 504 once in CI against the limit of 500 below): the search is
            // measured on the connection's second call.
            let explain: PostgresQuery = "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM due_activity_updates(\(fixture.appID), 50)"
            let plan = try await fixture.client.withConnection { connection in
                _ = try await connection.query(explain, logger: fixture.logger).collect()
                return try await QueryPlan(connection.query(explain, logger: fixture.logger))
            }

            #expect(plan.rows == 50, "\(plan)")
            // Each update found costs a few pages (the due index in order, the row, a probe of its activity's
            // unfinished updates); a probe that reads the whole due index costs a hundred or more.
            let pages = try #require(plan.pages, "\(plan)")
            #expect(pages > 0 && pages < 50 * 10, "\(plan)")
        }
    }

    /// `perActivity` pending updates for each activity, due in the last minute.
    private func insertUpdates(_ fixture: StoreFixture, perActivity: Int) async throws {
        try await fixture.client.query(
            """
            INSERT INTO updates (app_id, activity_id, event, timestamp, priority, not_before)
            SELECT a.app_id, a.id, 'update', n, 5, now() - interval '1 minute' + n * interval '1 ms'
            FROM activities a, generate_series(1, \(perActivity)) AS n
            """
        )
    }
}
