import PostgresNIO

/// The advisory lock namespace of the Apple-metrics job (see ``ReaperLocks`` for 3 and 4; docs/ARCHITECTURE.md).
enum AppleMetricsLocks {
    /// The one instance that runs the job (key 0).
    static let scheduleNamespace: Int32 = 6
}

extension AppleMetricsExports {
    /// Runs `body` holding the Apple-metrics job's lock, if no other instance holds it. The lock is held by a
    /// transaction that writes nothing, until `body` returns; `body` works on other connections.
    /// - Returns: What `body` returned, or `nil` when another instance holds the lock (`body` did not run).
    package func whileHoldingScheduleLock<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) async throws -> Result? {
        try await self.client.withGuardedTransaction(logger: self.logger) { connection in
            let rows = try await connection.query("SELECT pg_try_advisory_xact_lock(\(AppleMetricsLocks.scheduleNamespace), 0)", logger: self.logger)
            var locked = false
            for try await value in rows.decode(Bool.self) { locked = value }
            guard locked else { return nil }
            return await body()
        }
    }
}
