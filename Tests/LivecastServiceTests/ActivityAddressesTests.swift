import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

@testable import LivecastService

/// Where the dispatcher sends standalone activities' updates (``ActivityAddressQuery``), asked on every send.
@Suite struct ActivityAddressesTests {
    @Test func aSendAmongManyNewActivitiesReadsOnlyItsOwnTokens() async throws {
        try await StoreFixture.with("activity_addresses") { fixture in
            // A thousand activities, each with a live update token, just created: no statistics gathered yet, as
            // at a launch.
            try await fixture.insertActivities(1000)
            try await fixture.client.query(
                """
                INSERT INTO activity_tokens (app_id, activity_id, token, generation)
                SELECT app_id, id, lpad(to_hex(id), 64, '0'), 1 FROM activities
                """
            )
            var lastIDs: [Int64] = []
            for try await id in try await fixture.client.query("SELECT id FROM activities ORDER BY id DESC LIMIT 3").decode(Int64.self) {
                lastIDs.append(id)
            }
            let ids = lastIDs.map(String.init).joined(separator: ",")
            let plan = try await fixture.client.withConnection { connection in
                try await connection.query("PREPARE addresses(bigint[]) AS \(unescaped: ActivityAddressQuery.sql)", logger: fixture.logger)
                return try await QueryPlan(
                    connection.query("EXPLAIN (ANALYZE, COSTS OFF) EXECUTE addresses('{\(unescaped: ids)}')", logger: fixture.logger)
                )
            }

            #expect(plan.rows == 3, "\(plan)")
            // Each activity's own token, found by `activity_tokens_live`; not every live token.
            #expect(plan.rowsRead(from: "activity_tokens") == 3, "\(plan)")
        }
    }
}
