import ArgumentParser
import LivecastStore
import PostgresNIO

/// What one of an app's lists is of, for its `--limit`.
protocol ListedRows {
    /// The help of `--limit`, naming the rows.
    static var limitHelp: String { get }
    /// How many rows a list has when `--limit` is not given.
    static var defaultLimit: Int { get }
}

/// The rows of `dead-letters list`.
enum DeadLetterRows: ListedRows {
    static let (limitHelp, defaultLimit) = ("At most this many (1 to 1000).", 100)
}

/// The pushes of `deliveries find`.
enum PushRows: ListedRows {
    static let (limitHelp, defaultLimit) = ("At most this many pushes (1 to 1000).", 100)
}

/// The updates of `feeds history`.
enum UpdateRows: ListedRows {
    static let (limitHelp, defaultLimit) = ("At most this many updates (1 to 1000).", 20)
}

/// `--limit N --bundle-id B [--environment E]`, the database's options and `--config`: what a command that lists
/// some of an app's rows takes.
struct AppListOptions<Rows: ListedRows>: ParsableArguments {
    @Option(help: ArgumentHelp(Rows.limitHelp))
    var limit: Int = Rows.defaultLimit

    @OptionGroup var app: AppSelection
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var config: ConfigFileOption

    func validate() throws {
        guard (1...1000).contains(self.limit) else { throw ValidationError("--limit must be from 1 to 1000") }
    }

    /// Runs `body` with a client of the database and the app.
    func withApp<Result: Sendable>(_ body: (PostgresClient, Apps.App) async throws -> Result) async throws -> Result {
        try await self.database.withApp(self.app, try self.config.settings(), body)
    }
}
