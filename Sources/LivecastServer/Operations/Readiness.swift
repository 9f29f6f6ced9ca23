package import LivecastStore

/// What `GET /ready` checks besides PostgreSQL answering.
package struct Readiness: Sendable {
    /// Migrations that must have been applied (normally every file of `sql/`).
    package var migrations: [Migration]
    /// Whether this process's dispatcher runs; `nil` when the process runs none (the check is left out).
    package var isDispatcherRunning: (@Sendable () -> Bool)?

    package init(migrations: [Migration], isDispatcherRunning: (@Sendable () -> Bool)? = nil) {
        self.migrations = migrations
        self.isDispatcherRunning = isDispatcherRunning
    }
}
