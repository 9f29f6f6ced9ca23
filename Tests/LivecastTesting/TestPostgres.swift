import Foundation
import LivecastStore
import LocalPostgres
import Logging
import PostgresNIO

/// A PostgreSQL server for the tests: the one `DATABASE_URL` names, or a ``TemporaryPostgres`` shared by the test
/// process and stopped when it exits.
/// Each suite asks for its own database, so suites run in parallel.
package actor TestPostgres {
    /// The test process's server, started on first use.
    package static let shared = TestPostgres()

    /// The server, once starting began; actor methods re-enter while it starts, so they share this task.
    private var server: Task<PostgresClient.Configuration, any Error>?

    /// A new, empty database on the test server. - Returns: its configuration.
    package func makeDatabase(named prefix: String) async throws -> PostgresClient.Configuration {
        try await Self.makeDatabase(named: prefix, on: try await self.start())
    }

    /// A new, empty database on `server`. - Returns: its configuration.
    package static func makeDatabase(named prefix: String, on server: PostgresClient.Configuration) async throws -> PostgresClient.Configuration {
        let name = "\(prefix.lowercased())_\(UUID().uuidString.prefix(8).lowercased())"
        try await self.withClient(server) { client in
            _ = try await client.query(PostgresQuery(unsafeSQL: #"CREATE DATABASE "\#(name)""#))
        }
        var configuration = server
        configuration.database = name
        return configuration
    }

    /// Runs `body` with a running client for `configuration`.
    package static func withClient<Result: Sendable>(
        _ configuration: PostgresClient.Configuration,
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(
            configuration: configuration,
            backgroundLogger: Logger(label: "test.postgres", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    private func start() async throws -> PostgresClient.Configuration {
        if let server { return try await server.value }
        let server = Task {
            if let url = ProcessInfo.processInfo.environment["DATABASE_URL"] {
                return try PostgresClient.Configuration(url: url)
            }
            // Many suites run at once, each with its clients. No statement waits more than five minutes (a lock a
            // test leaks then fails that test instead of hanging the run).
            let postgres = try await TemporaryPostgres.start(settings: ["max_connections": "600", "statement_timeout": "5min"])
            postgres.stopWhenProcessExits()
            return postgres.configuration
        }
        self.server = server
        return try await server.value
    }
}
