import Foundation
import LivecastCore
import PostgresNIO

/// Claims each app's due owed pushes, oldest first, at most a batch per app, under a dispatcher's lease, with what
/// sending them needs. Prepared once per connection: the dispatcher asks on every round, nearly always to find
/// nothing, and planning the question took far longer than running it (docs/PERFORMANCE.md).
///
/// A target has at most one push in flight, and never an older one after a newer: an owed push whose target has an
/// older one in flight (claimed under a live lease) is left for a later round, and one that a newer push to its
/// target, or a newer update of its feed or standalone activity, has superseded is claimed only to be settled
/// unsent (its last column). Starts are not superseded, each being a different activity's: a push-to-start token's
/// owed starts go one at a time, oldest first.
struct ClaimOwedPushesStatement: PostgresPreparedStatement {
    static let sql = """
        WITH next AS (
            SELECT n.id FROM apps a CROSS JOIN LATERAL (
                SELECT o.id FROM owed_pushes o WHERE o.app_id = a.id AND o.not_before <= now()
                  AND NOT EXISTS (
                      SELECT 1 FROM owed_pushes older
                      WHERE older.target_kind = o.target_kind AND older.target_id = o.target_id AND older.update_id < o.update_id
                        AND (older.target_kind = \(OwedTarget.Kind.pushToStart.sql) OR (older.claimed_by IS NOT NULL AND older.not_before > now())))
                ORDER BY o.not_before, o.id LIMIT $1 FOR UPDATE SKIP LOCKED
            ) n
            WHERE a.sending_held_at IS NULL
        )
        UPDATE owed_pushes o SET claimed_by = $2, not_before = now() + make_interval(secs => $3)
        FROM next, updates u
        WHERE o.id = next.id AND u.id = o.update_id
        RETURNING o.id, o.app_id, o.update_id, o.target_kind, o.target_id, o.attempts, o.last_reason, o.deadline <= now(), u.event,
            CASE WHEN o.target_kind = \(OwedTarget.Kind.channel.sql) OR o.channel_payload THEN coalesce(u.channel_payload, u.payload) ELSE u.payload END,
            u.priority::int, u.feed_id,
            o.target_kind <> \(OwedTarget.Kind.pushToStart.sql) AND (
                EXISTS (SELECT 1 FROM owed_pushes newer
                        WHERE newer.target_kind = o.target_kind AND newer.target_id = o.target_id AND newer.update_id > o.update_id)
                OR EXISTS (SELECT 1 FROM updates later WHERE later.feed_id = u.feed_id AND later.id > u.id
                             AND later.event <> \(LiveActivityEvent.start.sql) AND later.status <> \(OutboxStatus.superseded.sql))
                OR EXISTS (SELECT 1 FROM updates later WHERE later.activity_id = u.activity_id AND later.id > u.id
                             AND later.status <> \(OutboxStatus.superseded.sql)))
        """

    /// `OwedClaim`'s fields, in its order; the payload as text.
    typealias Row = (Int64, Int64, Int64, OwedTarget.Kind, Int64, Int, String, Bool, LiveActivityEvent, String, Int, Int64?, Bool)

    /// The most owed pushes claimed for each app.
    var batchSize: Int
    /// The claiming dispatcher.
    var dispatcherID: UUID
    /// How long the claim holds.
    var leaseSeconds: Double

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.batchSize)
        bindings.append(self.dispatcherID)
        bindings.append(self.leaseSeconds)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
