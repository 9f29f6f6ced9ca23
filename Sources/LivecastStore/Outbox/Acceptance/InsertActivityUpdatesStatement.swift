import LivecastCore
import PostgresNIO

/// Writes an ``ActivityUpdateBatch``'s outbox rows and their activities' new state in one statement (the outbox's
/// trigger wakes the dispatchers once), superseding each activity's older updates that APNs asked to retry, as
/// ``ActivityTarget/recordAccepted(_:on:logger:)`` does for one, through `supersede_retried_updates` (migrations
/// `0018` and `0031`: its lookup probes by index whatever the outbox's statistics, in a plan it keeps; the final
/// SELECT joins its one row so that PostgreSQL runs it). It also gives the transaction's id, by which a commit whose
/// answer was lost is looked up (``LostCommit``). The rows come as one JSON array (PostgresNIO's arrays take no
/// optionals), read through `admitted_updates` (migrations `0021` and `0029`), which PostgreSQL counts as one row, so that the
/// plan it keeps updates the activities by index instead of reading the whole table. Prepared once per connection:
/// planning it took longer than running it.
struct InsertActivityUpdatesStatement: PostgresPreparedStatement {
    static let sql = """
        WITH r AS (
            SELECT * FROM admitted_updates($1::jsonb)
        ), inserted AS (
            INSERT INTO updates (app_id, activity_id, event, timestamp, content_state, stale_date, dismissal_date,
                                 relevance_score, priority, priority_downgraded, not_before, payload, idempotency_key,
                                 idempotency_scope, idempotency_fingerprint)
            SELECT app_id, activity_id, event, timestamp, content_state, stale_date, dismissal_date, relevance_score,
                   priority, priority_downgraded, CASE WHEN coalesced THEN to_timestamp(timestamp) ELSE now() END, payload,
                   idempotency_key, idempotency_scope, idempotency_fingerprint
            FROM r
            RETURNING id, activity_id
        ), retried AS (
            SELECT supersede_retried_updates(array_agg(activity_id), array_agg(timestamp)) FROM r
        ), recorded AS (
            UPDATE activities a SET last_timestamp = r.timestamp,
                stale_date = CASE WHEN r.event = \(LiveActivityEvent.end.sql) THEN a.stale_date ELSE coalesce(r.stale_date, a.stale_date) END,
                state = CASE WHEN r.event = \(LiveActivityEvent.end.sql) THEN \(ActivityState.ended.sql) ELSE a.state END,
                ended_at = CASE WHEN r.event = \(LiveActivityEvent.end.sql) THEN now() ELSE a.ended_at END,
                dismissal_date = CASE WHEN r.event = \(LiveActivityEvent.end.sql) THEN r.dismissal_date ELSE a.dismissal_date END
            FROM r
            WHERE a.id = r.activity_id
        )
        SELECT inserted.activity_id, inserted.id, pg_current_xact_id()::text::bigint FROM inserted, retried
        """

    /// The activity's id, its new update's, and the transaction's id (``LostCommit``).
    typealias Row = (Int64, Int64, Int64)

    /// The rows, a JSON array of objects with the columns of `r`.
    var rows: String

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.rows)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
