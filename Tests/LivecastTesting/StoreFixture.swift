import Foundation
import LivecastStore
import Logging
import PostgresNIO

/// A migrated database of its own, with one app (`com.example.game`, sandbox), for a store test.
package struct StoreFixture: Sendable {
    package let client: PostgresClient
    /// How to reach the fixture's database, for a second client.
    package let configuration: PostgresClient.Configuration
    package let appID: Int64
    package let logger = Logger(label: "test.store", factory: { _ in SwiftLogNoOpLogHandler() })

    /// - Parameter server: The PostgreSQL server to make the database on; the tests' shared one when `nil`.
    package static func with<Result: Sendable>(
        _ name: String,
        server: PostgresClient.Configuration? = nil,
        _ body: (StoreFixture) async throws -> Result
    ) async throws -> Result {
        let database =
            if let server {
                try await TestPostgres.makeDatabase(named: name, on: server)
            } else {
                try await TestPostgres.shared.makeDatabase(named: name)
            }
        let migrations = try Migration.load(from: Fixtures.repositoryRoot.appendingPathComponent("sql").path)
        return try await TestPostgres.withClient(database) { client in
            let logger = Logger(label: "test.store", factory: { _ in SwiftLogNoOpLogHandler() })
            _ = try await MigrationRunner(migrations: migrations).run(on: client, logger: logger)
            let rows = try await client.query(
                "INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path) VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/a.p8') RETURNING id"
            )
            var appID: Int64 = 0
            for try await id in rows.decode(Int64.self) { appID = id }
            return try await body(StoreFixture(client: client, configuration: database, appID: appID))
        }
    }

    /// Every row for a device and type: token, whether live, and the invalidation reason.
    package func rows(device: String, type: String = "GameAttributes") async throws -> [(token: String, live: Bool, reason: String?)] {
        let rows = try await self.client.query(
            "SELECT token, invalidated_at IS NULL, invalidation_reason FROM push_to_start_tokens WHERE app_id = \(self.appID) AND device_id = \(device) AND attributes_type = \(type) ORDER BY id"
        )
        var result: [(String, Bool, String?)] = []
        for try await row in rows.decode((String, Bool, String?).self) { result.append(row) }
        return result
    }

    /// Starts `count` activities of the app, `order-1` to `order-<count>`, of `OrderAttributes`, without tokens.
    package func insertActivities(_ count: Int) async throws {
        try await self.client.query(
            """
            INSERT INTO activities (app_id, activity_key, attributes_type)
            SELECT \(self.appID), 'order-' || n, 'OrderAttributes' FROM generate_series(1, \(count)) AS n
            """
        )
    }

    /// How many times `table` was analyzed by an `ANALYZE` statement (autovacuum's not counted), by PostgreSQL's
    /// statistics, which an `ANALYZE` reports at once.
    package func timesAnalyzed(_ table: String) async throws -> Int {
        let rows = try await self.client.query("SELECT analyze_count::int FROM pg_stat_user_tables WHERE relname = \(table)")
        for try await count in rows.decode(Int.self) { return count }
        throw StoreError(.notFound, "no table \(table)")
    }

    /// The database's clock hour, which the priority-10 budget counts by.
    package func databaseHour() async throws -> String {
        let rows = try await self.client.query("SELECT date_trunc('hour', now())::text")
        for try await hour in rows.decode(String.self) { return hour }
        throw StoreError(.notFound, "no clock")
    }
}
