import ArgumentParser
import Foundation
import LivecastStore
import Logging
import PostgresNIO

/// `livecast migrate`: applies the SQL migrations the database lacks.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply the numbered SQL files of sql/ that the database lacks, under an advisory lock.",
        discussion: """
            Prints one line per file applied (`applied 0001_initial.sql`), or `up to date`. Refuses to run when a \
            file applied earlier has changed or is gone.
            """
    )

    @Option(help: "postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=disable|prefer|require] (default: $DATABASE_URL).")
    var databaseUrl: String?

    @Option(help: "The directory of the migration files (default: $LIVECAST_MIGRATIONS_DIR, ./sql, or /usr/share/livecast/sql).")
    var migrations: String?

    func run() async throws {
        guard let url = self.databaseUrl ?? ProcessInfo.processInfo.environment["DATABASE_URL"] else {
            throw ValidationError("give --database-url or set DATABASE_URL")
        }
        let configuration: PostgresClient.Configuration
        do {
            configuration = try PostgresClient.Configuration(url: url)
        } catch {
            throw ValidationError("--database-url: \(error.message)")
        }
        let migrations: [Migration]
        do {
            migrations = try Migration.load(from: try self.migrationsDirectory())
        } catch let error as MigrationError {
            throw ValidationError(error.message)
        }
        let logger = Logger(label: "livecast.migrate", factory: { _ in SwiftLogNoOpLogHandler() })
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let report = try await withThrowingTaskGroup(of: MigrationRunner.Report?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            do {
                return try await MigrationRunner(migrations: migrations).run(on: client, logger: logger)
            } catch let error as MigrationError {
                throw ValidationError(error.message)
            } catch let error as PSQLError {
                throw ValidationError("cannot use the database: \(error.serverInfo?[.message] ?? "\(error.code)")")
            }
        }
        for name in report.applied { print("applied \(name)") }
        if report.applied.isEmpty { print("up to date") }
    }

    private func migrationsDirectory() throws -> String {
        if let migrations { return migrations }
        if let directory = ProcessInfo.processInfo.environment["LIVECAST_MIGRATIONS_DIR"] { return directory }
        for candidate in ["sql", "/usr/share/livecast/sql"] where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        throw ValidationError("no migrations directory: give --migrations or set LIVECAST_MIGRATIONS_DIR")
    }
}
