import Logging
import PostgresNIO
import Synchronization

/// The statements that apply the outbox's rules (``OutboxRules``) in an accepting transaction: the database's clock,
/// superseding, the idempotency keys' kept answers, the hourly priority-10 budget, and the transaction itself.
enum OutboxStatements {
    /// The database's time, in whole UNIX seconds: the one clock that orders updates (their timestamps, coalescing,
    /// and when a held update is due), so a server whose clock is off cannot reorder a target's updates. The
    /// server's clock only checks a client's dates (skew, stale and dismissal windows).
    static func databaseNow(on connection: PostgresConnection, logger: Logger) async throws -> Int {
        let rows = try await connection.query("SELECT floor(extract(epoch FROM clock_timestamp()))::bigint", logger: logger)
        for try await seconds in rows.decode(Int.self) { return seconds }
        throw StoreError(.notFound, "the database did not tell its time")
    }

    /// Runs a target's `UPDATE … SET status = 'superseded' … RETURNING timestamp`.
    /// - Returns: The timestamps of the updates it superseded.
    static func supersede(_ query: PostgresQuery, on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        var timestamps: [Int] = []
        for try await timestamp in try await connection.query(query, logger: logger).decode(Int.self) { timestamps.append(timestamp) }
        return timestamps
    }

    /// The first answer to a request with this idempotency key on the same route and target, if there was one.
    /// - Throws: ``StoreError`` `idempotencyKeyReused` when that request had another body.
    static func replay(
        appID: Int64,
        idempotencyKey: IdempotencyKey?,
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> AcceptedUpdate? {
        guard let idempotencyKey else { return nil }
        return try await Self.replays([(appID, idempotencyKey)], on: connection, logger: logger)[0]?.get()
    }

    /// The first answers to requests whose idempotency key was used before on the same route and target, by the
    /// place of their key in `keys`: the answer kept for the update its first request stored, or for the request
    /// when it was scheduled (``AcceptedUpdate/keptAnswer``); or ``StoreError`` `idempotencyKeyReused` when that
    /// request had another body. One statement for them all, and none for no key. Asked first in every transaction
    /// that accepts updates, it is the only look-up a request with a key makes before it is written.
    static func replays(
        _ keys: [(appID: Int64, key: IdempotencyKey)],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [Int: Result<AcceptedUpdate, any Error>] {
        guard !keys.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH r AS (
                SELECT * FROM unnest(\(keys.map(\.appID))::bigint[], \(keys.map(\.key.scope))::text[], \(keys.map(\.key.key))::text[])
                    WITH ORDINALITY AS r(app_id, scope, key, n)
            )
            SELECT r.n, u.id, u.timestamp, u.priority::int, u.priority_downgraded, u.idempotency_fingerprint, u.response
            FROM r JOIN updates u ON u.app_id = r.app_id AND u.idempotency_scope = r.scope AND u.idempotency_key = r.key
            WHERE u.idempotency_key IS NOT NULL
            UNION ALL
            SELECT r.n, s.id, 0, 5, false, s.idempotency_fingerprint, s.response
            FROM r JOIN scheduled_updates s ON s.app_id = r.app_id AND s.idempotency_scope = r.scope AND s.idempotency_key = r.key
            WHERE s.idempotency_key IS NOT NULL AND s.response IS NOT NULL
            """,
            logger: logger
        )
        var replays: [Int: Result<AcceptedUpdate, any Error>] = [:]
        let columns = (Int, Int64, Int, Int, Bool, String?, String?).self
        for try await (ordinal, id, timestamp, priority, downgraded, fingerprint, response) in rows.decode(columns) {
            let key = keys[ordinal - 1].key
            replays[ordinal - 1] = Result {
                try key.checkSameRequest(as: fingerprint)
                var replay = AcceptedUpdate(
                    updateID: id,
                    timestamp: timestamp,
                    priority: priority,
                    priorityDowngraded: downgraded,
                    coalesced: false,
                    dismissalDateClamped: false
                )
                // An update stored by an earlier version, which kept its answer after the commit (and so might not
                // have), is answered from its row.
                replay.keptAnswer = response ?? replay.answer
                return replay
            }
        }
        return replays
    }

    /// Spends up to `wanted` units of the app's hourly priority-10 budget in one statement (`sql/0028`), holding
    /// the hour's count locked until the transaction ends.
    /// - Returns: How many units were granted: `wanted` without a cap, else at most what is left of it.
    static func spendPriorityBudget(_ wanted: Int, appID: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        guard wanted > 0 else { return 0 }
        let rows = try await connection.query("SELECT spend_priority_budget(\(appID), \(Int32(wanted)))", logger: logger)
        for try await granted in rows.decode(Int32.self) { return Int(granted) }
        return 0
    }

    /// Runs `body` in a transaction, turning what PostgreSQL says into ``StoreError``s; the lease is named by the
    /// caller's `file` and `line`.
    /// - Parameter ifCommitLost: Should the connection be lost once `body` has finished (the `COMMIT` on its way, or
    ///   being made durable), what to answer instead of the loss, given `body`'s result and the loss: it asks
    ///   PostgreSQL whether the commit was made (``LostCommit``).
    static func transaction<Result: Sendable>(
        _ client: PostgresClient,
        logger: Logger,
        file: String = #fileID,
        line: Int = #line,
        ifCommitLost: (@Sendable (Result, any Error) async throws -> Result)? = nil,
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let finished = Mutex<Result?>(nil)
        do {
            return try await client.withGuardedTransaction(logger: logger, file: file, line: line) { connection in
                let result = try await body(connection)
                if ifCommitLost != nil { finished.withLock { $0 = result } }
                return result
            }
        } catch {
            if let ifCommitLost, StoreError.isConnectionLoss(error), let result = finished.withLock({ $0 }) {
                return try await ifCommitLost(result, error)
            }
            guard let error = error as? PostgresTransactionError else { throw error }
            if let storeError = error.closureError as? StoreError { throw storeError }
            if StoreError.isUniqueViolation(error) { throw StoreError(.conflict, "a request with this idempotency key is in progress; retry") }
            throw error
        }
    }
}
