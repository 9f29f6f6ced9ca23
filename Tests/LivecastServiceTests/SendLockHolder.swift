import LivecastStore
import LivecastTesting
import PostgresNIO

/// Holds a feed's send lock exclusively, as a token rotation does, from a connection of its own.
enum SendLockHolder {
    /// - Returns: Once the lock is held, the task that releases it after `duration`.
    static func hold(_ fixture: DispatchFixture, feed: String, for duration: Duration) async throws -> Task<Void, any Error> {
        let rows = try await fixture.store.client.query("SELECT id FROM feeds WHERE feed_key = \(feed)")
        var feedID: Int64 = 0
        for try await id in rows.decode(Int64.self) { feedID = id }
        let key = SendLocks.key(feedID)
        let (held, holding) = AsyncStream.makeStream(of: Void.self)
        let task = Task {
            try await fixture.store.client.withConnection { connection in
                try await connection.query("SELECT pg_advisory_lock(\(SendLocks.feedNamespace), \(key))", logger: fixture.store.logger)
                holding.yield()
                try await Task.sleep(for: duration)
                try await connection.query("SELECT pg_advisory_unlock(\(SendLocks.feedNamespace), \(key))", logger: fixture.store.logger)
            }
        }
        for await _ in held { break }
        return task
    }

    /// Waits until `count` sessions of the fixture's database wait for an advisory lock another holds (a send lock):
    /// the condition a test of the lock waits on, not a fixed sleep.
    static func waitForWaiters(_ fixture: DispatchFixture, count: Int = 1) async throws {
        try await eventually("\(count) sessions waiting for a send lock") {
            let rows = try await fixture.store.client.query(
                """
                SELECT count(*)::int FROM pg_locks
                WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                """
            )
            for try await waiting in rows.decode(Int.self) { return waiting >= count }
            return false
        }
    }
}
