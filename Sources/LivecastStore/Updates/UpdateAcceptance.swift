import LivecastCore
import Logging
import PostgresNIO

/// The one way an update or end of a feed or an activity enters the outbox: in one transaction, the idempotency
/// replay, the target's lock, the ordering of timestamps, the payload's checks, the priority budget, coalescing, the
/// outbox row and the target's new state (docs/ARCHITECTURE.md, invariants 1, 2, 4 and 7).
enum UpdateAcceptance {
    /// Accepts `content` for the target that `lock` reads and locks, in a transaction of its own, on the
    /// database's clock (``OutboxRules/databaseNow(on:logger:)``).
    /// - Parameters:
    ///   - lock: Reads and locks the target, throwing ``StoreError``s for one that takes no updates.
    /// - Throws: ``StoreError``: `invalid` for a bad priority or payload rule; `staleTimestamp`; `payloadTooLarge`;
    ///   whatever `lock` throws. Nothing is written when it throws.
    static func accept(
        _ content: UpdateContent,
        appID: Int64,
        client: PostgresClient,
        logger: Logger,
        lock: @escaping @Sendable (PostgresConnection) async throws -> some UpdateTarget
    ) async throws -> AcceptedUpdate {
        let priority = try OutboxRules.priority(requested: content.priority, hasAlert: content.alert != nil)
        return try await OutboxRules.transaction(client, logger: logger, ifCommitLost: LostCommit.keptUpdate(client: client, logger: logger)) {
            connection in
            if let replay = try await OutboxRules.replay(appID: appID, idempotencyKey: content.idempotencyKey, on: connection, logger: logger) {
                return replay
            }
            let target = try await lock(connection)
            let now = try await OutboxRules.databaseNow(on: connection, logger: logger)
            return try await Self.accept(content, appID: appID, priority: priority, into: target, now: now, on: connection, logger: logger)
        }
    }

    /// Accepts `content` into a target already locked by the caller's transaction.
    /// - Parameter now: The database's time (``OutboxRules/databaseNow(on:logger:)``), in UNIX seconds.
    static func accept(
        _ content: UpdateContent,
        appID: Int64,
        priority: Int,
        into target: some UpdateTarget,
        now: Int,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> AcceptedUpdate {
        var (timestamp, coalesced) = try OutboxRules.timestamp(requested: content.timestamp, last: target.lastTimestamp, now: now)
        // An update in the same second as one still waiting takes its place and its timestamp (latest wins), so a
        // busy target gets one update a second and its timestamps never run ahead of the clock.
        if coalesced, let last = target.lastTimestamp, try await target.supersedePending(on: connection, logger: logger).contains(last) {
            timestamp = last
        }
        let (payload, bytes, clamped) = try target.payload(for: content, at: timestamp)
        let sentPriority = try await OutboxRules.budgeted(priority, appID: appID, on: connection, logger: logger)
        var row = OutboxRow(
            appID: appID,
            content: payload,
            payload: bytes,
            requestedPriority: priority,
            sentPriority: sentPriority,
            idempotencyKey: content.idempotencyKey,
            coalesced: coalesced
        )
        target.address(&row)
        let accepted = try await row.insert(dismissalDateClamped: clamped, on: connection, logger: logger)
        try await target.recordAccepted(payload, on: connection, logger: logger)
        return accepted
    }
}
