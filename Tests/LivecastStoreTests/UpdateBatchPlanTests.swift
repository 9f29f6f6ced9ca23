import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastStore

/// The update batch's prepared statements keep plans that look activities up by index (migration `0021`).
/// PostgreSQL plans a prepared statement once for requests it cannot see; counted as ten or a hundred, reading and
/// hashing the whole `activities` table looked cheaper than a probe each, and every batch did it.
@Suite struct UpdateBatchPlanTests {
    @Test(arguments: [
        ("lock_plan", LockActivitiesStatement.sql, "bigint[], text[]", "('{1}', '{order-1}')"),
        ("insert_plan", InsertActivityUpdatesStatement.sql, "jsonb", "('[]')"),
    ])
    func thePlanKeptForAPreparedStatementProbesTheActivitiesIndexes(
        name: String,
        sql: String,
        parameters: String,
        arguments: String
    )
        async throws
    {
        try await StoreFixture.with("update_batch_plan_\(name)") { fixture in
            // A thousand activities, as in the API benchmark, with their statistics.
            try await fixture.insertActivities(1000)
            try await fixture.client.query("ANALYZE activities")
            let plan = try await fixture.client.withConnection { connection in
                // The plan a connection keeps once PostgreSQL settles on one for every execution.
                try await connection.query("SET plan_cache_mode = force_generic_plan", logger: fixture.logger)
                try await connection.query("PREPARE \(unescaped: name)(\(unescaped: parameters)) AS \(unescaped: sql)", logger: fixture.logger)
                return try await QueryPlan(
                    connection.query("EXPLAIN EXECUTE \(unescaped: name)\(unescaped: arguments)", logger: fixture.logger)
                ).description
            }
            #expect(plan.contains("activities"), "\(plan)")
            #expect(!plan.contains("Seq Scan on activities"), "\(plan)")
        }
    }
}
