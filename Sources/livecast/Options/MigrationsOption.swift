import ArgumentParser
import Foundation
import LivecastStore

/// `--migrations DIR`: where the numbered SQL files are.
struct MigrationsOption: ParsableArguments {
    @Option(help: "The directory of the migration files (default: $LIVECAST_MIGRATIONS_DIR, ./sql, or /usr/share/livecast/sql).")
    var migrations: String?

    /// The migrations. - Throws: `ValidationError` when there is no directory or a file is unusable.
    func load() throws -> [Migration] {
        do {
            return try Migration.load(from: try self.directory())
        } catch let error as MigrationError {
            throw ValidationError(error.message)
        }
    }

    private func directory() throws -> String {
        if let migrations { return migrations }
        if let directory = ProcessInfo.processInfo.environment["LIVECAST_MIGRATIONS_DIR"] { return directory }
        for candidate in ["sql", "/usr/share/livecast/sql"] where FileManager.default.fileExists(atPath: candidate) {
            return candidate
        }
        throw ValidationError("no migrations directory: give --migrations or set LIVECAST_MIGRATIONS_DIR")
    }
}
