import LivecastStore
import PostgresNIO

extension Dispatcher {
    /// Runs `body` holding the send locks of these targets shared on `connection` (see ``SendLocks``), and releases
    /// them whatever happens, so the pooled connection never goes back holding one.
    func withSendLocks<Result>(
        _ namespace: Int32,
        _ ids: [Int64],
        on connection: PostgresConnection,
        _ body: () async throws -> Result
    ) async throws -> Result {
        let keys = ids.map(SendLocks.key)
        try await connection.query("SELECT pg_advisory_lock_shared(\(namespace), key) FROM unnest(\(keys)::int[]) AS k(key)", logger: self.logger)
        do {
            let result = try await body()
            try await self.unlock(namespace, keys, on: connection)
            return result
        } catch {
            try? await self.unlock(namespace, keys, on: connection)
            throw error
        }
    }

    private func unlock(_ namespace: Int32, _ keys: [Int32], on connection: PostgresConnection) async throws {
        try await connection.query("SELECT pg_advisory_unlock_shared(\(namespace), key) FROM unnest(\(keys)::int[]) AS k(key)", logger: self.logger)
    }
}
