import LivecastStore
import PostgresNIO

extension Dispatcher {
    /// Runs `body` while a heartbeat renews, every third of the lease, the lease of every claim this dispatcher
    /// holds (updates it is dispatching, owed pushes it is sending): a live dispatcher keeps a slow page's claim,
    /// and a dead one's claims are taken over once the lease runs out.
    func withHeartbeat<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.beat() }
            defer { group.cancelAll() }
            return try await body()
        }
    }

    private func beat() async {
        let lease = self.settings.leaseSeconds
        while (try? await Task.sleep(for: .seconds(lease / 3))) != nil {
            do {
                try await self.database.guardedQuery(
                    """
                    UPDATE updates SET not_before = now() + make_interval(secs => \(lease))
                    WHERE claimed_by = \(self.id) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                    """,
                    logger: self.logger
                )
                try await self.database.guardedQuery(
                    "UPDATE owed_pushes SET not_before = now() + make_interval(secs => \(lease)) WHERE claimed_by = \(self.id)",
                    logger: self.logger
                )
            } catch {
                self.logger.warning("could not renew the dispatcher's claims", metadata: ["error": "\(error)"])
            }
        }
    }
}
