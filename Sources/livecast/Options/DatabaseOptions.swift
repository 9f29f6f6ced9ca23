import ArgumentParser
import LivecastStore
import Logging
import PostgresNIO

/// `--database-url` (or `DATABASE_URL`, or `database-url` in the config file) and `--database-ca-file` (or
/// `LIVECAST_DATABASE_CA_FILE`, or `database-ca-file`), as ``LivecastConfig`` reads them.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help: """
            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-ca|verify-full][&sslrootcert=FILE] \
            (default: $DATABASE_URL). sslmode defaults to require: encrypted, the certificate not verified.
            """
    )
    var databaseUrl: String?

    @Option(
        help:
            "PEM file of the CAs that sign PostgreSQL's certificate, for sslmode=verify-ca or verify-full (default: $LIVECAST_DATABASE_CA_FILE, else the URL's sslrootcert, else the system's)."
    )
    var databaseCaFile: String?

    /// These flags, by setting key.
    var flags: [String: String?] { ["database-url": self.databaseUrl, "database-ca-file": self.databaseCaFile] }

    /// The client configuration (`PostgresClient.Configuration(reader:)`). - Throws: `ValidationError` when no URL
    /// is given or it cannot be used.
    func configuration(_ settings: LivecastConfig) throws -> PostgresClient.Configuration {
        try settings.read(flags: self.flags) { try PostgresClient.Configuration(reader: $0) }
    }

    /// Runs `body` with a running client, closed when it returns. Database errors become a `ValidationError`
    /// with PostgreSQL's message.
    func withClient<Result: Sendable>(
        _ settings: LivecastConfig,
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
