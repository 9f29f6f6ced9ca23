import Foundation
import LivecastCore
import PostgresNIO

/// Claims each app's due queued starts, at most a batch per app and one per device: a device's highest
/// `relevance-score` first, then its oldest, which holds the device's others back until it is settled. A device with
/// a queued start already claimed under a live lease is left for a later round. Prepared once per connection, as the
/// owed pushes' claim is: the dispatcher asks on every quick round, nearly always to find nothing.
struct ClaimQueuedStartsStatement: PostgresPreparedStatement {
    static let sql = """
        WITH next AS (
            SELECT n.id FROM apps a CROSS JOIN LATERAL (
                SELECT q.id FROM queued_starts q
                WHERE q.app_id = a.id AND q.state IN \(QueuedStartState.unfinishedSQL) AND q.due_at <= now()
                  AND NOT EXISTS (
                      SELECT 1 FROM queued_starts other
                      WHERE other.app_id = q.app_id AND other.device_id = q.device_id AND other.id <> q.id
                        AND other.state IN \(QueuedStartState.unfinishedSQL)
                        AND ((other.state = \(QueuedStartState.sending.sql) AND other.due_at > now())
                             OR (coalesce(other.relevance_score, 0), -other.id) > (coalesce(q.relevance_score, 0), -q.id)))
                ORDER BY q.due_at, q.id LIMIT $1 FOR UPDATE SKIP LOCKED
            ) n
            WHERE a.sending_held_at IS NULL
        ),
        claimed AS (
            UPDATE queued_starts q SET state = \(QueuedStartState.sending.sql), claimed_by = $2,
                due_at = now() + make_interval(secs => $3), attempts = q.attempts + 1
            FROM next WHERE q.id = next.id
            RETURNING q.id, q.app_id, q.feed_id, q.device_id, q.kind, q.update_id, q.activity_id, q.attempts, q.created_at
        )
        SELECT c.id, c.app_id, c.device_id, c.kind, c.update_id, c.attempts,
            c.created_at + make_interval(secs => $4) < now(),
            f.id, f.state, f.attributes_type, f.attributes, f.content_state, f.last_timestamp, f.stale_date, f.relevance_score,
            f.start_alert, f.renewal_alert, f.renewal_before IS NOT NULL,
            coalesce(lu.created_at > now() - make_interval(secs => f.renewal_if_updated_within), false),
            (SELECT ch.channel_id FROM channels ch WHERE ch.feed_id = f.id AND ch.state = \(ChannelState.active.sql)),
            lu.id,
            t.id, t.token, t.unproven, \(AudienceMember.onIOS18SQL(osVersion: "t.os_version")),
            EXISTS (SELECT 1 FROM owed_pushes o WHERE o.target_kind = \(OwedTarget.Kind.pushToStart.sql) AND o.target_id = t.id),
            r.id, r.activity_key, r.state IN \(ActivityState.runningSQL), r.renewed_to IS NOT NULL, r.channel_id IS NOT NULL,
            r.started_at + make_interval(secs => $5) <= now(),
            l.last_timestamp
        FROM claimed c
        JOIN feeds f ON f.id = c.feed_id
        LEFT JOIN LATERAL (SELECT u.id, u.created_at FROM updates u WHERE u.feed_id = f.id ORDER BY u.id DESC LIMIT 1) lu ON true
        LEFT JOIN push_to_start_tokens t
            ON t.app_id = c.app_id AND t.device_id = c.device_id AND t.attributes_type = f.attributes_type AND t.invalidated_at IS NULL
        LEFT JOIN activities r ON r.id = c.activity_id
        LEFT JOIN start_ledger l ON l.app_id = c.app_id AND l.device_id = c.device_id
        """

    typealias Row = (
        Int64, Int64, String, QueuedStartKind, Int64?, Int, Bool,
        Int64, FeedState, String, String, String?, Int?, Int?, Double?, String?, String?, Bool, Bool, String?, Int64?,
        Int64?, String?, Bool?, Bool?, Bool,
        Int64?, String?, Bool?, Bool?, Bool?, Bool?,
        Int?
    )

    /// The most queued starts claimed for each app.
    var batchSize: Int
    /// The claiming dispatcher.
    var dispatcherID: UUID
    /// How long the claim holds.
    var leaseSeconds: Double
    /// How long a queued start may wait before it is given up.
    var deadlineSeconds: Double
    /// How long an activity stays active: a renewal after it is too late.
    var activityLifetimeSeconds: Double

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.batchSize)
        bindings.append(self.dispatcherID)
        bindings.append(self.leaseSeconds)
        bindings.append(self.deadlineSeconds)
        bindings.append(self.activityLifetimeSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}

extension QueuedStartClaim {
    /// The claim a row of ``ClaimQueuedStartsStatement`` describes.
    init(row: ClaimQueuedStartsStatement.Row) throws {
        var token: Token?
        if let rowID = row.21, let value = row.22 {
            token = Token(rowID: rowID, token: value, isUnproven: row.23 ?? false, onIOS18: row.24 ?? false, owesOlderStart: row.25)
        }
        var renewed: Renewed?
        if let id = row.26, let key = row.27 {
            renewed = Renewed(
                id: id,
                key: key,
                isRunning: row.28 ?? false,
                isRenewed: row.29 ?? false,
                onChannel: row.30 ?? false,
                lifetimeOver: row.31 ?? false
            )
        }
        self.init(
            id: row.0,
            appID: row.1,
            deviceID: row.2,
            kind: row.3,
            updateID: row.4,
            attempts: row.5,
            feed: Feed(
                id: row.7,
                state: row.8,
                attributesType: row.9,
                attributes: try RawJSON(validating: row.10),
                contentState: try row.11.map { try RawJSON(validating: $0) },
                lastTimestamp: row.12,
                staleDate: row.13,
                relevanceScore: row.14,
                startAlert: row.15.flatMap(LiveActivityAlert.init(jsonText:)),
                renewalAlert: row.16.flatMap(LiveActivityAlert.init(jsonText:)),
                renews: row.17,
                updatedWithinRenewalWindow: row.18,
                channelID: row.19,
                latestUpdateID: row.20
            ),
            token: token,
            renewed: renewed,
            ledgerTimestamp: row.32,
            pastDeadline: row.6
        )
    }
}
