import ArgumentParser
import LivecastStore

/// `--migrations DIR`: where the numbered SQL files are.
struct MigrationsOption: ParsableArguments {
    @Option(help: "The directory of the migration files (default: $LIVECAST_MIGRATIONS_DIR, ./sql, or /usr/share/livecast/sql).")
    var migrations: String?

    /// This flag, by setting key.
    var flags: [String: String?] { ["migrations": self.migrations] }

    /// The migrations (`Migration.load(reader:)`). - Throws: `ValidationError` when there is no directory or a file
    /// is unusable.
    func load(_ settings: LivecastConfig) throws -> [Migration] {
        try settings.read(flags: self.flags) { try Migration.load(reader: $0) }
    }
}
