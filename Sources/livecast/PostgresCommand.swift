import ArgumentParser
import Foundation
import LocalPostgres
import Logging
import ServiceLifecycle
import UnixSignals

/// `livecast postgres`: the throwaway PostgreSQL of the demo and the tests, for scripts (`scripts/fuzz.sh`) and
/// trying things by hand, until SIGINT or SIGTERM.
struct PostgresCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "postgres",
        abstract: "Run a throwaway PostgreSQL (a new cluster in a temporary directory, on a free loopback port).",
        discussion: """
            Prints one line on stdout once it accepts connections: its URL, for --database-url or DATABASE_URL \
            (postgres://livecast@127.0.0.1:PORT/postgres?sslmode=disable). On SIGINT or SIGTERM it stops the \
            server and removes the directory with everything in it. Needs PostgreSQL's server programs (initdb, \
            postgres); as root they run as the postgres user.
            """
    )

    func run() async throws {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        let logger = Logger(label: "livecast.postgres")
        let postgres = try await TemporaryPostgres.start()
        logger.info("PostgreSQL running", metadata: ["version": "\(postgres.version)", "directory": "\(postgres.directory.path)"])
        // Written straight to the file descriptor so a reading process sees it at once, whatever the buffering.
        FileHandle.standardOutput.write(Data("postgres://livecast@127.0.0.1:\(postgres.port)/postgres?sslmode=disable\n".utf8))
        let group = ServiceGroup(
            services: [TemporaryPostgresService(postgres: postgres)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
    }
}

/// Keeps the server running until graceful shutdown, then stops it and removes its directory.
private struct TemporaryPostgresService: Service {
    let postgres: TemporaryPostgres

    func run() async throws {
        try? await gracefulShutdown()
        await self.postgres.stop()
    }
}
