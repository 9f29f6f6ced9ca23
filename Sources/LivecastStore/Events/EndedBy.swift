import Logging
import PostgresNIO

/// Who ended an activity or a feed, as `activity.ended` events report it (`endedBy`).
package enum EndedBy: String, Sendable, Hashable, Codable, CaseIterable {
    /// The app's backend, through the API or the CLI.
    case backend
    /// The device: the app reported the activity ended, or the device was unregistered.
    case device
    /// The reaper, for an activity or a feed that went stale.
    case reaper
    /// The reaper, for an activity nearing ActivityKit's 8-hour limit.
    case lifetime
    /// Livecast, for an activity a renewal replaced (its successor follows the feed now).
    case renewal

    /// Tells the rest of the caller's transaction who ends what it ends: `sql/0035_events.sql` reads the setting
    /// `livecast.ended_by` when it writes `activity.ended` for an end accepted through the outbox. The backend, the
    /// default, needs no declaration.
    func declare(on connection: PostgresConnection, logger: Logger) async throws {
        guard self != .backend else { return }
        try await connection.query("SELECT set_config('livecast.ended_by', \(self.rawValue), true)", logger: logger)
    }
}
