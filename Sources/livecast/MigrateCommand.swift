import ArgumentParser
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

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var migrations: MigrationsOption
    @OptionGroup var config: ConfigFileOption

    func run() async throws {
        let settings = try self.config.settings()
        _ = try self.database.configuration(settings)
        let migrations = try self.migrations.load(settings)
        let logger = Logger(label: "livecast.migrate", factory: { _ in SwiftLogNoOpLogHandler() })
        let report = try await self.database.withClient(settings, logger: logger) { client in
            do {
                return try await MigrationRunner(migrations: migrations).run(on: client, logger: logger)
            } catch let error as MigrationError {
                throw ValidationError(error.message)
            }
        }
        for name in report.applied { print("applied \(name)") }
        if report.applied.isEmpty { print("up to date") }
    }
}
