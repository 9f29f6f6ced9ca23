import LivecastCore
import Logging
import PostgresNIO
import Synchronization

/// The rules every update follows when it is accepted, whatever its target (docs/ARCHITECTURE.md, invariants 1, 2, 4 and 7).
enum OutboxRules {
    /// The longest an ended activity may stay on the Lock Screen after its end.
    static let maximumDismissalDelay = 4 * 3600

    /// The timestamp an update goes out with: after the target's last one. An update in the same second as the last
    /// is coalesced: it takes the last one's place and timestamp if that one is still waiting
    /// (``UpdateAcceptance``), else it goes out one second later, held until that second begins. An explicit
    /// timestamp older than the last is refused.
    /// - Parameters:
    ///   - requested: The client's timestamp; the database's time when `nil`.
    ///   - last: The target's last accepted timestamp.
    ///   - now: The database's time, in UNIX seconds.
    static func timestamp(requested: Int?, last: Int?, now: Int) throws(StoreError) -> (timestamp: Int, coalesced: Bool) {
        let timestamp = requested ?? now
        guard let last else { return (timestamp, false) }
        if timestamp < last, requested != nil {
            throw StoreError(.staleTimestamp, "timestamp \(timestamp) is older than the last accepted, \(last)", field: "timestamp")
        }
        return timestamp <= last ? (last + 1, true) : (timestamp, false)
    }

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

    /// 10 when asked for or when the update carries an alert, else 5.
    static func priority(requested: Int?, hasAlert: Bool) throws(StoreError) -> Int {
        let priority = requested ?? (hasAlert ? 10 : 5)
        guard priority == 5 || priority == 10 else { throw StoreError(.invalid, "priority must be 5 or 10", field: "priority") }
        return priority
    }

    /// An end's `dismissal-date`, at most 4 hours after the end. - Returns: the date and whether it was clamped.
    static func dismissalDate(requested: Int?, timestamp: Int) -> (date: Int?, clamped: Bool) {
        guard let requested else { return (nil, false) }
        let date = min(requested, timestamp + Self.maximumDismissalDelay)
        return (date, date != requested)
    }

    /// The payload's bytes, checked against ActivityKit's rules and the destination's size limit.
    /// - Throws: ``StoreError`` `payloadTooLarge` with the measured size, or `invalid` naming the field.
    static func encode(_ payload: LiveActivityPayload, for destination: PushDestination) throws(StoreError) -> [UInt8] {
        do {
            return try payload.validated(for: destination)
        } catch {
            if error.code == .payloadTooLarge { throw StoreError(.payloadTooLarge, error.message, field: "contentState") }
            throw StoreError(.invalid, error.message, field: error.field.map(Self.requestField))
        }
    }

    /// The API's name for a payload key: `stale-date` is `staleDate` in a request.
    static func requestField(_ payloadKey: String) -> String {
        let words = payloadKey.split(separator: "-")
        return words.enumerated().map { $0.offset == 0 ? String($0.element) : $0.element.prefix(1).uppercased() + $0.element.dropFirst() }.joined()
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

    /// Spends one unit of the app's hourly priority-10 budget when the update asks for priority 10.
    /// - Returns: The priority to send with: 5 when the budget of this hour is spent.
    static func budgeted(_ priority: Int, appID: Int64, on connection: PostgresConnection, logger: Logger) async throws -> Int {
        guard priority == 10 else { return priority }
        return try await Self.spendPriorityBudget(1, appID: appID, on: connection, logger: logger) == 1 ? 10 : 5
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
