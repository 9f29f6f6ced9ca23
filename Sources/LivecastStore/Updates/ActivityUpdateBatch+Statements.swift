import Foundation
import LivecastCore
import Logging
import PostgresNIO

extension ActivityUpdateBatch {
    /// The first answers to the requests whose idempotency key was used before on the same route and target, by the
    /// index of their request (``OutboxRules/replays(_:on:logger:)``).
    static func replays(
        _ requests: [ActivityUpdates.Request],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> [Int: Result<AcceptedUpdate, any Error>] {
        let keyed = requests.indices.compactMap { index in requests[index].content.idempotencyKey.map { (index, $0) } }
        let replays = try await OutboxRules.replays(keyed.map { (requests[$0.0].appID, $0.1) }, on: connection, logger: logger)
        return Dictionary(uniqueKeysWithValues: replays.map { (keyed[$0.key].0, $0.value) })
    }

    /// Locks the requests' activities and reads the database's clock (``LockActivitiesStatement``).
    /// - Returns: Each found activity's row, by the index of its request, and the database's time in UNIX seconds
    ///   (`nil` when no activity was found).
    static func lock(
        _ requests: [ActivityUpdates.Request],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> (rows: [(Int, ActivityTarget.Row)], now: Int?)
    {
        let statement = LockActivitiesStatement(appIDs: requests.map(\.appID), activityKeys: requests.map(\.activityKey))
        var locked: [(Int, ActivityTarget.Row)] = []
        var now: Int?
        for try await (ordinal, id, state, lastTimestamp, channelState, feedID, clock) in try await connection.execute(statement, logger: logger) {
            locked.append((ordinal - 1, ActivityTarget.Row((id, state, lastTimestamp, channelState, feedID))))
            now = clock
        }
        return (locked, now)
    }

    /// Supersedes the pending updates of the activities whose update came in the same second as their last: an
    /// update that replaces its activity's waiting one takes that one's timestamp (latest wins), as
    /// ``UpdateAcceptance`` does for one.
    static func replacePending(_ admitted: inout [AdmittedUpdate], on connection: PostgresConnection, logger: Logger) async throws {
        let coalesced = admitted.filter { $0.row.coalesced && $0.target.lastTimestamp != nil }.map(\.target.id)
        guard !coalesced.isEmpty else { return }
        let rows = try await connection.query(
            """
            UPDATE updates SET status = \(unescaped: OutboxStatus.superseded.sql), completed_at = now()
            WHERE activity_id = ANY(\(coalesced)) AND status = \(unescaped: OutboxStatus.pending.sql)
            RETURNING activity_id, timestamp
            """,
            logger: logger
        )
        var replaced: [Int64: Set<Int>] = [:]
        for try await (activityID, timestamp) in rows.decode((Int64, Int).self) { replaced[activityID, default: []].insert(timestamp) }
        for position in admitted.indices {
            let update = admitted[position]
            guard update.row.coalesced, let last = update.target.lastTimestamp, replaced[update.target.id]?.contains(last) == true else { continue }
            // An earlier timestamp passes every check the later one passed; should one fail, the round is undone.
            try admitted[position].encode(timestamp: last)
        }
    }

    /// Spends each app's hourly priority-10 budget once for all of its updates that ask for priority 10: the first
    /// of them, in the requests' order, go out at 10 while the budget lasts, the rest at 5, as if each had spent
    /// one unit in turn (``OutboxRules/spendPriorityBudget(_:appID:on:logger:)``). Apps in the order of their ids, so
    /// that two transactions lock their counts in the same order.
    static func spendPriorityBudgets(_ admitted: inout [AdmittedUpdate], on connection: PostgresConnection, logger: Logger) async throws {
        let asking = admitted.indices.filter { admitted[$0].row.requestedPriority == 10 }
        for (appID, positions) in Dictionary(grouping: asking, by: { admitted[$0].row.appID }).sorted(by: { $0.key < $1.key }) {
            let granted = try await OutboxRules.spendPriorityBudget(positions.count, appID: appID, on: connection, logger: logger)
            for (order, position) in positions.enumerated() where order >= granted {
                admitted[position].row.sentPriority = 5
            }
        }
    }

    /// Writes the admitted updates' outbox rows and their activities' new state (``InsertActivityUpdatesStatement``).
    /// - Returns: Each new update's id, by its activity's id, and the transaction's id (`nil` when none was admitted).
    static func insert(
        _ admitted: [AdmittedUpdate],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws -> (updateIDs: [Int64: Int64], transactionID: Int64?) {
        guard !admitted.isEmpty else { return ([:], nil) }
        var updateIDs: [Int64: Int64] = [:]
        var transactionID: Int64?
        for try await (activityID, updateID, transaction) in try await connection.execute(
            InsertActivityUpdatesStatement(rows: try Self.json(admitted)),
            logger: logger
        ) {
            updateIDs[activityID] = updateID
            transactionID = transaction
        }
        return (updateIDs, transactionID)
    }

    /// One outbox row as the insert's JSON carries it (PostgresNIO's arrays take no optionals).
    private struct InsertedRow: Encodable {
        var appId: Int64
        var activityId: Int64?
        var event: String
        var timestamp: Int
        var contentState: String?
        var staleDate: Int?
        var dismissalDate: Int?
        var relevanceScore: Double?
        var priority: Int
        var priorityDowngraded: Bool
        var coalesced: Bool
        var payload: String
        var idempotencyKey: String?
        var idempotencyScope: String?
        var idempotencyFingerprint: String?

        /// The insert's column names, spelled out: `JSONEncoder`'s snake-case conversion rewrote every key of every
        /// row.
        private enum CodingKeys: String, CodingKey {
            case appId = "app_id"
            case activityId = "activity_id"
            case event, timestamp
            case contentState = "content_state"
            case staleDate = "stale_date"
            case dismissalDate = "dismissal_date"
            case relevanceScore = "relevance_score"
            case priority
            case priorityDowngraded = "priority_downgraded"
            case coalesced, payload
            case idempotencyKey = "idempotency_key"
            case idempotencyScope = "idempotency_scope"
            case idempotencyFingerprint = "idempotency_fingerprint"
        }

        init(_ row: OutboxRow) {
            self.appId = row.appID
            self.activityId = row.activityID
            self.event = row.content.event.rawValue
            self.timestamp = row.content.timestamp
            self.contentState = row.content.contentState?.text
            self.staleDate = row.content.staleDate
            self.dismissalDate = row.content.dismissalDate
            self.relevanceScore = row.content.relevanceScore
            self.priority = row.sentPriority
            self.priorityDowngraded = row.sentPriority != row.requestedPriority
            self.coalesced = row.coalesced
            self.payload = row.payload
            self.idempotencyKey = row.idempotencyKey?.key
            self.idempotencyScope = row.idempotencyKey?.scope
            self.idempotencyFingerprint = row.idempotencyKey?.fingerprint
        }
    }

    private static func json(_ admitted: [AdmittedUpdate]) throws -> String {
        String(decoding: try JSONEncoder().encode(admitted.map { InsertedRow($0.row) }), as: UTF8.self)
    }
}
