import LivecastTesting
import PostgresNIO

/// A PostgreSQL client for a dispatcher that a test kills, and the kill: a crashed process's connections close,
/// releasing its locks, so the test cuts every connection of the client, not only its tasks. A client whose tasks
/// are merely cancelled keeps its connections, and a send lock one of them holds would keep every other dispatcher
/// waiting for good.
struct DoomedDatabaseClient {
    let client: PostgresClient
    private let name: String
    private let running: Task<Void, Never>

    /// Starts a client named `name` (its connections' `application_name`).
    init(_ fixture: DispatchFixture, name: String) {
        var configuration = fixture.store.configuration
        configuration.options.additionalStartupParameters.append(("application_name", name))
        let client = PostgresClient(configuration: configuration, backgroundLogger: fixture.store.logger)
        self.client = client
        self.name = name
        self.running = Task { await client.run() }
    }

    /// Stops the client and cuts its connections from the server's side, as a crash would. Only this test's
    /// database is searched: tests running side by side may name their doomed clients alike.
    func kill(from fixture: DispatchFixture) async throws {
        self.running.cancel()
        try await fixture.store.client.query(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE application_name = \(self.name) AND datname = current_database()
            """
        )
    }
}
