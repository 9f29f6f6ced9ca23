import LivecastStore

/// What `GET /ready` checks besides PostgreSQL answering.
public struct Readiness: Sendable {
    /// Migrations that must have been applied (normally every file of `sql/`).
    public var migrations: [Migration]
    /// Whether this process's dispatcher runs; `nil` when the process runs none (the check is left out).
    public var isDispatcherRunning: (@Sendable () -> Bool)?

    public init(migrations: [Migration], isDispatcherRunning: (@Sendable () -> Bool)? = nil) {
        self.migrations = migrations
        self.isDispatcherRunning = isDispatcherRunning
    }
}
