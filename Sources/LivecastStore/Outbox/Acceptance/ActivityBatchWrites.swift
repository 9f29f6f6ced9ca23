import Foundation
import LivecastCore
import Logging
import PostgresNIO

/// Many standalone activities read, superseded and written in a few statements, for a group commit
/// (``ActivityUpdateBatch``): their activities locked by one prepared statement (``LockActivitiesStatement``), their
/// rows written by another (``InsertActivityUpdatesStatement``), their answers kept by one more.
struct ActivityBatchWrites: AcceptanceWrites {
    typealias Kind = ActivityUpdates
    typealias Target = ActivityTarget

    /// Locks the requests' activities and reads the database's clock (``LockActivitiesStatement``): a standalone
    /// activity's target for each found (``ActivityTarget/standalone(_:)``), else `notFound`.
    func lock(_ requests: IndexedRequests<Kind>, on connection: PostgresConnection, logger: Logger) async throws -> LockedTargets<Target> {
        guard !requests.isEmpty else { return ([], nil) }
        let statement = LockActivitiesStatement(appIDs: requests.map(\.request.appID), activityKeys: requests.map(\.request.targetKey))
        var found: [Int: ActivityTarget.Row] = [:]
        var now: Int?
        for try await (ordinal, id, state, lastTimestamp, channelState, feedID, clock) in try await connection.execute(statement, logger: logger) {
            found[ordinal - 1] = ActivityTarget.Row((id, state, lastTimestamp, channelState, feedID))
            now = clock
        }
        let targets: [(index: Int, target: Result<ActivityTarget, any Error>)] = requests.enumerated().map { position, request in
            let target = Result<ActivityTarget, any Error> {
                guard let row = found[position] else {
                    throw StoreError(.notFound, "no activity \(request.request.targetKey)", field: "activityId")
                }
                return try ActivityTarget.standalone(row)
            }
            return (request.index, target)
        }
        return (targets, now)
    }

    /// Supersedes the activities' pending updates in one statement.
    func supersedePending(_ targets: [ActivityTarget], on connection: PostgresConnection, logger: Logger) async throws -> [Int64: Set<Int>] {
        let rows = try await connection.query(
            """
            UPDATE updates SET status = \(unescaped: OutboxStatus.superseded.sql), completed_at = now()
            WHERE activity_id = ANY(\(targets.map(\.id))) AND status = \(unescaped: OutboxStatus.pending.sql)
            RETURNING activity_id, timestamp
            """,
            logger: logger
        )
        var replaced: [Int64: Set<Int>] = [:]
        for try await (activityID, timestamp) in rows.decode((Int64, Int).self) { replaced[activityID, default: []].insert(timestamp) }
        return replaced
    }

    /// Writes the admitted updates' outbox rows and their activities' new state (``InsertActivityUpdatesStatement``),
    /// then the answers of those with an idempotency key (``UpdateResponses/keep(_:on:logger:)``).
    func insert(_ admitted: [AdmittedUpdate<ActivityTarget>], on connection: PostgresConnection, logger: Logger) async throws -> InsertedUpdates {
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
        var accepted: [Int: AcceptedUpdate] = [:]
        var keyed: [AcceptedUpdate] = []
        for update in admitted {
            guard let updateID = updateIDs[update.target.id] else { continue }
            accepted[update.index] = update.accepted(updateID: updateID)
            if update.row.idempotencyKey != nil { keyed.append(update.accepted(updateID: updateID)) }
        }
        try await UpdateResponses.keep(keyed, on: connection, logger: logger)
        return (accepted, transactionID)
    }

    /// One outbox row as the insert's JSON carries it (PostgresNIO's arrays take no optionals).
    private struct InsertedRow: Encodable {
        var appId: Int64
        var activityId: Int64?
        var event: LiveActivityEvent
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
            self.event = row.content.event
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

    private static func json(_ admitted: [AdmittedUpdate<ActivityTarget>]) throws -> String {
        String(decoding: try JSONEncoder().encode(admitted.map { InsertedRow($0.row) }), as: UTF8.self)
    }
}
