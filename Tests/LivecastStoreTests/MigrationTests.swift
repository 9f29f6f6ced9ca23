import Foundation
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Testing

/// The migration runner against a real PostgreSQL: applies `sql/`, once, under a lock, and refuses changed files.
@Suite struct MigrationTests {
    private let logger = Logger(label: "test.migrations", factory: { _ in SwiftLogNoOpLogHandler() })

    private var repositoryMigrations: [Migration] {
        get throws { try Migration.load(from: Fixtures.repositoryRoot.appendingPathComponent("sql").path) }
    }

    @Test func appliesEveryFileOnceAndRecordsChecksums() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "migrations")
        let migrations = try self.repositoryMigrations
        #expect(Array(migrations.map(\.name).prefix(2)) == ["0001_initial.sql", "0002_update_payloads.sql"])
        try await TestPostgres.withClient(database) { client in
            let first = try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger)
            #expect(first.applied == migrations.map(\.name))
            #expect(first.alreadyApplied == 0)
            let second = try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger)
            #expect(second.applied.isEmpty)
            #expect(second.alreadyApplied == migrations.count)
            let recorded = try await MigrationRunner.applied(on: client, logger: self.logger)
            #expect(recorded.map(\.checksum) == migrations.map(\.checksum))
            let tables = try await client.query("SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'")
            var names: Set<String> = []
            for try await name in tables.decode(String.self) { names.insert(name) }
            #expect(
                names == [
                    "apps", "api_keys", "push_to_start_tokens", "feeds", "channels", "activities", "activity_tokens", "updates",
                    "deliveries", "feed_starts", "priority_budget", "livecast_migrations", "owed_pushes", "dead_letters",
                    "scheduled_updates", "console_sessions", "client_devices", "identity_keys", "events", "webhook_endpoints", "fan_out_slices",
                    "webhook_deliveries", "start_ledger", "queued_starts", "client_buckets",
                    "apple_metrics_credentials", "apple_metrics_exports", "apple_broadcast_days", "apple_delivery_days", "delivery_divergences",
                    "livecast_daily_counts",
                    "console_streams",
                    "unfinished_updates",  // a view (0024)
                ]
            )
        }
    }

    @Test func concurrentRunnersTakeTurns() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "migrations_race")
        let migrations = try self.repositoryMigrations
        try await TestPostgres.withClient(database) { client in
            let reports = try await withThrowingTaskGroup(of: MigrationRunner.Report.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            // Exactly one runner applied the files; the others found them applied.
            #expect(reports.filter { !$0.applied.isEmpty }.count == 1)
            #expect(reports.filter { $0.applied.isEmpty }.allSatisfy { $0.alreadyApplied == migrations.count })
        }
    }

    @Test func aChangedOrMissingAppliedFileIsRefused() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "migrations_changed")
        let first = try Migration(name: "0001_one.sql", sql: "CREATE TABLE one (id int);")
        try await TestPostgres.withClient(database) { client in
            _ = try await MigrationRunner(migrations: [first]).run(on: client, logger: self.logger)
            let edited = try Migration(name: "0001_one.sql", sql: "CREATE TABLE one (id bigint);")
            let second = try Migration(name: "0002_two.sql", sql: "CREATE TABLE two (id int);")
            await #expect(throws: MigrationError.self) {
                try await MigrationRunner(migrations: [edited, second]).run(on: client, logger: self.logger)
            }
            await #expect(throws: MigrationError.self) {
                try await MigrationRunner(migrations: [second]).run(on: client, logger: self.logger)
            }
            // Nothing of the refused runs was applied.
            let two = try await client.query("SELECT to_regclass('two') IS NULL")
            for try await absent in two.decode(Bool.self) { #expect(absent) }
        }
    }

    /// `sql/0031` shipped twice with different comments (953f3d0, then 054034b): a database that applied either
    /// migrates on, while any other change to an applied file is still refused (above).
    @Test func aFileReleasedEarlierWithOtherCommentsIsAccepted() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "migrations_released_earlier")
        let migrations = try self.repositoryMigrations
        try await TestPostgres.withClient(database) { client in
            _ = try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger)
            let earlier = "b061f96300544d362b8e911503b5428dfed2f26e76d4fcfbfb7c29b22ee93336"
            try await client.query("UPDATE livecast_migrations SET checksum = \(earlier) WHERE version = 31")
            let report = try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger)
            #expect(report.alreadyApplied == migrations.count)
            // The same checksum recorded for another file is refused.
            try await client.query("UPDATE livecast_migrations SET checksum = \(earlier) WHERE version = 30")
            await #expect(throws: MigrationError.self) {
                try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger)
            }
        }
    }

    @Test func aFailingFileIsRolledBackAndEarlierFilesStay() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "migrations_failing")
        let good = try Migration(name: "0001_good.sql", sql: "CREATE TABLE good (id int);")
        let bad = try Migration(name: "0002_bad.sql", sql: "CREATE TABLE half (id int);\nSELECT no_such_function();")
        try await TestPostgres.withClient(database) { client in
            do {
                _ = try await MigrationRunner(migrations: [good, bad]).run(on: client, logger: self.logger)
                Issue.record("the failing migration was applied")
            } catch let error as MigrationError {
                #expect(error.message.contains("0002_bad.sql"))
            }
            let recorded = try await MigrationRunner.applied(on: client, logger: self.logger)
            #expect(recorded.map(\.name) == ["0001_good.sql"])
            let half = try await client.query("SELECT to_regclass('half') IS NULL")
            for try await absent in half.decode(Bool.self) { #expect(absent) }
        }
    }

    @Test func statementsSplitOutsideQuotesAndBodies() throws {
        let migration = try Migration(
            name: "0003_functions.sql",
            sql: """
                -- a comment; with a semicolon
                CREATE TABLE t (note text DEFAULT 'a;b');
                CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;
                /* block; comment */ SELECT 1;
                """
        )
        #expect(migration.version == 3)
        #expect(throws: MigrationError.self) { try Migration(name: "initial.sql", sql: "") }
    }

    @Test func schemaConstraintsHold() async throws {
        let database = try await TestPostgres.shared.makeDatabase(named: "schema")
        let migrations = try self.repositoryMigrations
        try await TestPostgres.withClient(database) { client in
            _ = try await MigrationRunner(migrations: migrations).run(on: client, logger: self.logger)
            try await client.query(
                "INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path) VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/a.p8')"
            )
            func insertToken(_ device: String, _ token: String, invalidated: Bool = false) async throws {
                try await client.query(
                    "INSERT INTO push_to_start_tokens (app_id, device_id, attributes_type, token, invalidated_at) SELECT id, \(device), 'GameAttributes', \(token), \(invalidated ? Date() : nil) FROM apps"
                )
            }
            try await insertToken("device-1", "aa01")
            // A second live token for the same device and type is refused…
            await #expect(throws: PSQLError.self) { try await insertToken("device-1", "aa02") }
            // …but an invalidated one beside it is history, not a conflict.
            try await insertToken("device-1", "aa03", invalidated: true)
            // A token belongs to one device of an app.
            await #expect(throws: PSQLError.self) { try await insertToken("device-2", "aa01") }
            // Tokens are hex.
            await #expect(throws: PSQLError.self) { try await insertToken("device-3", "not-hex") }
            // The same bundle id in one environment is one app.
            await #expect(throws: PSQLError.self) {
                try await client.query(
                    "INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path) VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/b.p8')"
                )
            }
        }
    }
}
