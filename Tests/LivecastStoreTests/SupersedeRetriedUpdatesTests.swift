import LivecastTesting
import PostgresNIO
import Testing

/// `supersede_retried_updates` (migrations `0018` and `0031`), which every batch of accepted activity updates runs to
/// supersede its activities' older updates that APNs asked to retry.
@Suite struct SupersedeRetriedUpdatesTests {
    /// The function keeps the plan of its first call on a connection (planned anew, it cost more than it ran). Made on
    /// a new database's empty outbox, that plan still probes each activity's own updates in retry: with thousands in
    /// retry, as in a storm of APNs 503s, a call reads a few pages, where a plan that reads every update in retry (a
    /// hash join over `updates_retrying`) reads hundreds.
    @Test func aPlanMadeOnAnEmptyOutboxProbesEachActivitysUpdatesInRetry() async throws {
        try await StoreFixture.with("supersede_retried_plan") { fixture in
            try await fixture.insertActivities(1000)
            // No autovacuum: its ANALYZE would have the function plan again, on the statistics of the moment.
            try await fixture.client.query("ALTER TABLE updates SET (autovacuum_enabled = off)")
            try await fixture.client.withConnection { connection in
                let ids = try await connection.query("SELECT id FROM activities WHERE activity_key = 'order-1'", logger: fixture.logger)
                let first = try #require(try await ids.decode(Int64.self).first { _ in true })
                for _ in 0..<6 { #expect(try await self.supersede(first, olderThan: 100, on: connection, fixture) == 0) }
                // 20 updates in retry for each of the 1,000 activities, with timestamps 1 to 20.
                try await connection.query(
                    """
                    INSERT INTO updates (app_id, activity_id, event, timestamp, priority, attempts)
                    SELECT a.app_id, a.id, 'update', n, 5, 1 FROM generate_series(1, 20) AS n, activities a
                    """,
                    logger: fixture.logger
                )
                let onTheFirstPlan = try await self.pagesRead(superseding: first, on: connection, fixture)
                #expect(onTheFirstPlan < 60)
                // The statistics of a full outbox have it plan again: the same probes.
                try await connection.query("ANALYZE updates", logger: fixture.logger)
                let onANewPlan = try await self.pagesRead(superseding: first, on: connection, fixture)
                #expect(onANewPlan < 60)

                // The kept plan supersedes what it should: the activity's ten updates older than 11, no other.
                #expect(try await self.supersede(first, olderThan: 11, on: connection, fixture) == 10)
                let superseded = try await connection.query(
                    "SELECT count(*)::int, min(timestamp)::int, max(timestamp)::int FROM updates WHERE status = 'superseded' AND activity_id = \(first)",
                    logger: fixture.logger
                )
                for try await (count, oldest, newest) in superseded.decode((Int, Int, Int).self) {
                    #expect(count == 10 && oldest == 1 && newest == 10)
                }
                let elsewhere = try await connection.query(
                    "SELECT count(*)::int FROM updates WHERE status <> 'pending' AND activity_id <> \(first)",
                    logger: fixture.logger
                )
                for try await count in elsewhere.decode(Int.self) { #expect(count == 0) }
            }
        }
    }

    /// The pages a call for one activity reads when it supersedes nothing, after a first call (which may plan, and
    /// read the catalog to do so).
    private func pagesRead(superseding activityID: Int64, on connection: PostgresConnection, _ fixture: StoreFixture) async throws -> Int {
        #expect(try await self.supersede(activityID, olderThan: 1, on: connection, fixture) == 0)
        let plan = try await QueryPlan(
            connection.query(
                "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT supersede_retried_updates(ARRAY[\(activityID)]::bigint[], ARRAY[1]::bigint[])",
                logger: fixture.logger
            )
        )
        return try #require(plan.pages, "\(plan)")
    }

    /// Calls the function for one activity; returns how many updates it superseded.
    private func supersede(
        _ activityID: Int64,
        olderThan timestamp: Int64,
        on connection: PostgresConnection,
        _ fixture: StoreFixture
    ) async throws -> Int {
        let rows = try await connection.query(
            "SELECT supersede_retried_updates(ARRAY[\(activityID)]::bigint[], ARRAY[\(timestamp)]::bigint[])",
            logger: fixture.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return -1
    }
}
