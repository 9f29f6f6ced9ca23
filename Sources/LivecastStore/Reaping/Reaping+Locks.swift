import PostgresNIO

/// Advisory lock namespaces of the scheduled jobs (see ``SendLocks`` for the dispatcher's; namespace 5 is
/// `analyze_if_outgrown`'s, in `sql/0026`).
enum ReaperLocks {
    /// One pass at a time per app (key: the app id).
    static let appNamespace: Int32 = 3
    /// The one `serve` instance that runs the periodic job (key 0).
    static let scheduleNamespace: Int32 = 4
}

extension Reaping {
    /// Runs `body` holding the app's reaper lock, if no other pass holds it: one pass at a time per app. The lock is
    /// held by a transaction that writes nothing, until `body` returns; `body` works on other connections.
    /// - Returns: What `body` returned, or `nil` when another pass holds the lock (`body` did not run).
    package func whileHoldingAppLock<Result: Sendable>(_ appID: Int64, _ body: @escaping @Sendable () async -> Result) async throws -> Result? {
        try await self.whileHolding(ReaperLocks.appNamespace, SendLocks.key(appID), body)
    }

    /// Runs `body` holding the lock of the periodic job, if no other instance holds it, as
    /// ``whileHoldingAppLock(_:_:)`` does.
    package func whileHoldingScheduleLock<Result: Sendable>(_ body: @escaping @Sendable () async -> Result) async throws -> Result? {
        try await self.whileHolding(ReaperLocks.scheduleNamespace, 0, body)
    }

    private func whileHolding<Result: Sendable>(
        _ namespace: Int32,
        _ key: Int32,
        _ body: @escaping @Sendable () async -> Result
    ) async throws -> Result? {
        try await self.client.withGuardedTransaction(logger: self.logger) { connection in
            let rows = try await connection.query("SELECT pg_try_advisory_xact_lock(\(namespace), \(key))", logger: self.logger)
            var locked = false
            for try await value in rows.decode(Bool.self) { locked = value }
            guard locked else { return nil }
            return await body()
        }
    }
}
