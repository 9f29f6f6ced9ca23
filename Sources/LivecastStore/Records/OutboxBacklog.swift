import Logging
package import PostgresNIO

/// What waits in the outbox across every app, for the gauges: updates waiting or being sent, and how long the oldest
/// has waited.
package struct OutboxBacklog: Sendable, Hashable {
    /// Updates pending or being dispatched.
    package var pending: Int
    /// Seconds since the oldest of them was accepted; 0 when there is none.
    package var oldestAge: Double

    /// Reads the backlog (the `unfinished_updates` view).
    package static func read(client: PostgresClient, logger: Logger) async throws -> OutboxBacklog? {
        let rows = try await client.guardedQuery(
            """
            SELECT count(*)::int, coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8
            FROM unfinished_updates
            """,
            logger: logger
        )
        for try await (pending, oldest) in rows.decode((Int, Double).self) {
            return OutboxBacklog(pending: pending, oldestAge: oldest)
        }
        return nil
    }
}
