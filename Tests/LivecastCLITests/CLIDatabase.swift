import FoundationEssentials
import LivecastTesting
import PostgresNIO
import Testing

/// Test databases as the CLI reaches them: by `--database-url`, migrated by `livecast migrate`.
enum CLIDatabase {
    /// The repository's `sql/` directory, for `--migrations`.
    static var migrations: String {
        Fixtures.repositoryRoot.appendingPathComponent("sql").path
    }

    /// Adds the app the tests name with `--bundle-id com.example.game` (a sandbox app; its key path is never read).
    static let insertGameApp: PostgresQuery = """
        INSERT INTO apps (bundle_id, environment, team_id, key_id, signing_key_path)
        VALUES ('com.example.game', 'sandbox', 'TEAM123456', 'KEY1234567', '/keys/a.p8')
        """

    /// The `--database-url` of `database`.
    static func url(of database: PostgresClient.Configuration) -> String {
        "postgres://\(database.username)@\(database.host ?? "127.0.0.1"):\(database.port ?? 5432)/\(database.database ?? "")?sslmode=disable"
    }

    /// A new database on the test server that `livecast migrate` migrated, and its URL.
    static func migrated(named name: String) async throws -> (configuration: PostgresClient.Configuration, url: String) {
        let database = try await TestPostgres.shared.makeDatabase(named: name)
        let url = Self.url(of: database)
        let livecast = Fixtures.productsDirectory.appendingPathComponent("livecast").path
        let migrate = try await ExternalProcess.run(livecast, ["migrate", "--database-url", url, "--migrations", Self.migrations])
        #expect(migrate.status == 0, "\(migrate.stderr)")
        return (database, url)
    }
}
