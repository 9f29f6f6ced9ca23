import LivecastTesting
import PostgresNIO
import Testing

/// The dispatcher's search for due standalone activity updates (`due_activity_updates`, migrations `0023` and
/// `0024`): over a backlog, such as builds up while APNs is slow or down, and over the entries sent updates leave.
@Suite struct DueActivityUpdatesTests {
    @Test func aSearchOverABacklogReadsAFewPagesForEachUpdateItFinds() async throws {
        try await StoreFixture.with("due_activity_backlog") { fixture in
            try await fixture.insertActivities(1000)
            // Updates sent, then vacuumed: statistics taken while the outbox is empty, as after it has drained.
            try await self.insertUpdates(fixture, perActivity: 20)
            try await fixture.client.query("UPDATE updates SET status = 'sent', completed_at = now()")
            try await fixture.client.query("VACUUM ANALYZE")
            // Then 20,000 updates pile up.
            try await self.insertUpdates(fixture, perActivity: 20)
            let plan = try await self.searchPlan(fixture)

            #expect(plan.rows == 50, "\(plan)")
            // Each update found costs a few pages (the due index in order, the row, a probe of its activity's
            // unfinished updates); a probe that reads the whole due index costs a hundred or more.
            let pages = try #require(plan.pages, "\(plan)")
            #expect(pages > 0 && pages < 50 * 10, "\(plan)")
        }
    }

    /// A VACUUM of the outbox removes the due index's entries for the updates sent since the last one (`sql/0030`),
    /// even when their dead rows lie on few of the table's pages, where PostgreSQL would otherwise leave the indexes
    /// alone; until then every claim steps over them.
    @Test func aVacuumClearsTheDueIndexOfSentUpdatesEvenWhenFewRowsDied() async throws {
        try await StoreFixture.with("due_activity_vacuum") { fixture in
            try await fixture.insertActivities(1000)
            // An outbox that kept what it sent: 40,000 updates of 1,500-byte payloads, 10,000 pages.
            try await fixture.client.query(
                """
                INSERT INTO updates (app_id, activity_id, event, timestamp, priority, status, payload, completed_at)
                SELECT a.app_id, a.id, 'update', n, 5, 'sent', repeat('x', 1500), now()
                FROM activities a, generate_series(1, 40) AS n
                """
            )
            try await fixture.client.query("VACUUM ANALYZE updates")
            // 1,000 updates sent since: each left the due index an entry for its dead pending row, and those rows lie
            // on 112 pages (in the big rows' free space), under the 2% of the table below which a VACUUM skips the
            // indexes by default.
            try await self.insertUpdates(fixture, perActivity: 1)
            try await fixture.client.query("UPDATE updates SET status = 'sent', completed_at = now() WHERE status = 'pending'")
            try await fixture.client.query("VACUUM updates")

            let plan = try await self.searchPlan(fixture)
            #expect(plan.rows == 0, "\(plan)")
            // With the entries gone, the index's root and a leaf; with them, their leaf pages and their rows' (131).
            let pages = try #require(plan.pages, "\(plan)")
            #expect(pages < 20, "\(plan)")
        }
    }

    /// The plan of a first search for the app's 50 due updates, on a connection that has planned the search.
    private func searchPlan(_ fixture: StoreFixture) async throws -> QueryPlan {
        // A PL/pgSQL function's first call on a connection also reads the catalog to plan its statement (270 pages
        // against 161 on the second call in the test above, and 504 once in CI): the connection first searches for an
        // app that does not exist. (A second search of the app itself would find the entries of dead rows marked
        // dead by the first, and skip their rows.)
        try await fixture.client.withConnection { connection in
            _ = try await connection.query("SELECT * FROM due_activity_updates(0, 50)", logger: fixture.logger).collect()
            return try await QueryPlan(
                connection.query(
                    "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM due_activity_updates(\(fixture.appID), 50)",
                    logger: fixture.logger
                )
            )
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
