import Foundation
import Logging
import PostgresNIO

extension ActivityUpdateBatch {
    /// Locks the requests' activities in the order of their ids, so two transactions never wait for each other.
    /// - Returns: Each found activity's row, by the index of its request.
    static func lock(
        _ requests: [ActivityUpdates.Request],
        on connection: PostgresConnection,
        logger: Logger
    ) async throws
        -> [(Int, ActivityTarget.Row)]
    {
        let rows = try await connection.query(
            """
            SELECT r.n::int, a.id, a.state, a.last_timestamp, c.state, a.feed_id
            FROM unnest(\(requests.map(\.appID))::bigint[], \(requests.map(\.activityKey))::text[]) WITH ORDINALITY AS r(app_id, activity_key, n)
            JOIN activities a ON a.app_id = r.app_id AND a.activity_key = r.activity_key
            LEFT JOIN channels c ON c.id = a.channel_id
            ORDER BY a.id FOR UPDATE OF a
            """,
            logger: logger
        )
        var locked: [(Int, ActivityTarget.Row)] = []
        for try await (ordinal, id, state, lastTimestamp, channelState, feedID) in rows.decode((Int, Int64, String, Int?, String?, Int64?).self) {
            locked.append((ordinal - 1, ActivityTarget.Row((id, state, lastTimestamp, channelState, feedID))))
        }
        return locked
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

    /// Writes the admitted updates' outbox rows and their activities' new state in one statement (the outbox's
    /// trigger wakes the dispatchers once), superseding each activity's older updates that APNs asked to retry, as
    /// ``ActivityTarget/recordAccepted(_:on:logger:)`` does for one.
    /// - Returns: Each new update's id, by its activity's id.
    static func insert(_ admitted: [AdmittedUpdate], on connection: PostgresConnection, logger: Logger) async throws -> [Int64: Int64] {
        guard !admitted.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH r AS (
                SELECT * FROM jsonb_to_recordset(\(try Self.json(admitted))::jsonb) AS r(
                    app_id bigint, activity_id bigint, event text, timestamp bigint, content_state text, stale_date bigint,
                    dismissal_date bigint, relevance_score double precision, priority smallint, priority_downgraded boolean,
                    coalesced boolean, payload text)
            ), inserted AS (
                INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, stale_date, dismissal_date,
                                     relevance_score, priority, priority_downgraded, not_before, payload)
                SELECT app_id, activity_id, event, timestamp, content_state, stale_date, dismissal_date, relevance_score,
                       priority, priority_downgraded, CASE WHEN coalesced THEN to_timestamp(timestamp) ELSE now() END, payload
                FROM r
                RETURNING id, activity_id
            ), retried AS (
                UPDATE updates u SET status = \(unescaped: OutboxStatus.superseded.sql), completed_at = now()
                FROM r
                WHERE u.activity_id = r.activity_id AND u.status = \(unescaped: OutboxStatus.pending.sql) AND u.attempts > 0
                  AND u.timestamp < r.timestamp
            ), recorded AS (
                UPDATE activities a SET last_timestamp = r.timestamp,
                    stale_date = CASE WHEN r.event = 'end' THEN a.stale_date ELSE coalesce(r.stale_date, a.stale_date) END,
                    state = CASE WHEN r.event = 'end' THEN 'ended' ELSE a.state END,
                    ended_at = CASE WHEN r.event = 'end' THEN now() ELSE a.ended_at END,
                    dismissal_date = CASE WHEN r.event = 'end' THEN r.dismissal_date ELSE a.dismissal_date END
                FROM r
                WHERE a.id = r.activity_id
            )
            SELECT activity_id, id FROM inserted
            """,
            logger: logger
        )
        var updateIDs: [Int64: Int64] = [:]
        for try await (activityID, updateID) in rows.decode((Int64, Int64).self) { updateIDs[activityID] = updateID }
        return updateIDs
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
        }
    }

    private static func json(_ admitted: [AdmittedUpdate]) throws -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return String(decoding: try encoder.encode(admitted.map { InsertedRow($0.row) }), as: UTF8.self)
    }
}
