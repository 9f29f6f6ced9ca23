import ArgumentParser
import Foundation
import LivecastStore
import Logging
import PostgresNIO

/// `--database-url` (or `DATABASE_URL`, or `database-url` in the config file), `--database-ca-file` (or
/// `LIVECAST_DATABASE_CA_FILE`, or `database-ca-file`) and `--database-password-file` (or
/// `LIVECAST_DATABASE_PASSWORD_FILE`, or `database-password-file`), as ``LivecastConfig`` reads them.
struct DatabaseOptions: ParsableArguments {
    @Option(
        help: """
            postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require|verify-ca|verify-full][&sslrootcert=FILE] \
            (default: $DATABASE_URL). sslmode defaults to verify-full: encrypted, the certificate and host name verified; \
            require encrypts without verifying. A password given here shows in ps: prefer $DATABASE_URL or \
            --database-password-file.
            """
    )
    var databaseUrl: String?

    @Option(
        help:
            "File holding the database password, for a URL without one (default: $LIVECAST_DATABASE_PASSWORD_FILE)."
    )
    var databasePasswordFile: String?

    @Option(
        help:
            "PEM file of the CAs that sign PostgreSQL's certificate, for sslmode=verify-ca or verify-full (default: $LIVECAST_DATABASE_CA_FILE, else the URL's sslrootcert, else the system's)."
    )
    var databaseCaFile: String?

    /// These flags, by setting key.
    var flags: [String: String?] {
        ["database-url": self.databaseUrl, "database-ca-file": self.databaseCaFile, "database-password-file": self.databasePasswordFile]
    }

    /// Writes ``warnings(_:)`` to standard error, `warning: ` before each (the commands' loggers are mostly off).
    func printWarnings(_ settings: LivecastConfig) {
        for warning in (try? self.warnings(settings)) ?? [] {
            FileHandle.standardError.write(Data("warning: \(warning)\n".utf8))
        }
    }

    /// What to warn about at start: TLS that can be read or intercepted (``DatabaseTLS/warning``), and a password on
    /// the command line, which every local user sees in `ps`. - Throws: `ValidationError` as ``configuration(_:)``.
    func warnings(_ settings: LivecastConfig) throws -> [String] {
        let tls = try settings.read(flags: self.flags) { try DatabaseTLS(reader: $0) }
        var warnings = tls.warning.map { [$0] } ?? []
        if let url = self.databaseUrl, URLComponents(string: url)?.password != nil {
            warnings.append(
                "the database password is on the command line (--database-url), where ps shows it: give the URL in "
                    + "DATABASE_URL or the --config file, or the password in --database-password-file"
            )
        }
        return warnings
    }

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
        self.printWarnings(settings)
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

extension DatabaseOptions {
    /// Runs `body` with a running client (``withClient(_:logger:_:)``) and the app `selection` names.
    /// - Throws: `ValidationError` when there is no such app, or the bundle id needs its environment.
    func withApp<Result: Sendable>(
        _ selection: AppSelection,
        _ settings: LivecastConfig,
        _ body: (PostgresClient, Apps.App) async throws -> Result
    ) async throws -> Result {
        try await self.withClient(settings, logger: .disabled) { client in
            let app = try await selection.app(in: Apps(client: client, masterKey: nil, logger: .disabled))
            return try await body(client, app)
        }
    }
}
