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
}
