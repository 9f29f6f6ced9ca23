import ArgumentParser
import LivecastStore
import Logging
import PostgresNIO

/// `--database-url` (or `DATABASE_URL`, or `database-url` in the config file).
struct DatabaseOptions: ParsableArguments {
    @Option(help: "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] (default: $DATABASE_URL).")
    var databaseUrl: String?

    /// The client configuration. - Throws: `ValidationError` when no URL is given or it cannot be used.
    func configuration(_ settings: Settings) throws -> PostgresClient.Configuration {
        guard let url = settings.value(self.databaseUrl, env: "DATABASE_URL", key: "database-url") else {
            throw ValidationError("give --database-url or set DATABASE_URL")
        }
        do {
            return try PostgresClient.Configuration(url: url)
        } catch {
            throw ValidationError("--database-url: \(error.message)")
        }
    }

    /// Runs `body` with a running client, closed when it returns. Database errors become a `ValidationError`
    /// with PostgreSQL's message.
    func withClient<Result: Sendable>(
        _ settings: Settings,
        logger: Logger,
        _ body: (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration: try self.configuration(settings), backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do {
                return try await body(client)
            } catch let error as PSQLError {
                throw ValidationError("cannot use the database: \(error.serverInfo?[.message] ?? "\(error.code)")")
            } catch let error as StoreError {
                throw ValidationError(error.message)
            }
        }
    }
}
