import LivecastCore
import PostgresNIO

extension Outbox {
    /// Renews the lease of these claims of this dispatcher: updates it is sending, slices of updates, owed pushes and
    /// queued starts.
    package func renew(updates: [Int64], slices: [Int64], owedPushes: [Int64], queuedStarts: [Int64] = []) async throws {
        let lease = self.lease.inSeconds
        if !updates.isEmpty {
            try await self.database.guardedQuery(
                """
                UPDATE updates SET not_before = now() + make_interval(secs => \(lease))
                WHERE id = ANY(\(updates)) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                """,
                logger: self.logger
            )
        }
        if !slices.isEmpty {
            try await self.database.guardedQuery(
                """
                UPDATE fan_out_slices SET not_before = now() + make_interval(secs => \(lease))
                WHERE id = ANY(\(slices)) AND claimed_by = \(self.claimer) AND status = \(unescaped: OutboxStatus.dispatching.sql)
                """,
                logger: self.logger
            )
        }
        if !owedPushes.isEmpty {
            try await self.database.guardedQuery(
                """
                UPDATE owed_pushes SET not_before = now() + make_interval(secs => \(lease))
                WHERE id = ANY(\(owedPushes)) AND claimed_by = \(self.claimer)
                """,
                logger: self.logger
            )
        }
        if !queuedStarts.isEmpty {
            try await self.database.guardedQuery(
                """
                UPDATE queued_starts SET due_at = now() + make_interval(secs => \(lease))
                WHERE id = ANY(\(queuedStarts)) AND claimed_by = \(self.claimer) AND state = \(unescaped: QueuedStartState.sending.sql)
                """,
                logger: self.logger
            )
        }
    }
}
