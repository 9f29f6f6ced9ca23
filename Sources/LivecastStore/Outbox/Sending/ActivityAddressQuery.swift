import PostgresNIO

/// Where each of some standalone activities sends: its live update token, or its live channel. Asked on every send.
///
/// Each activity's token and channel are looked up in `LATERAL` subqueries, by the unique index
/// `activity_tokens_live` and the channels' key. As a plain join, on activities just created (a launch), before
/// autovacuum had gathered statistics on them, PostgreSQL read every live token for each send, several times slower
/// than this way (docs/PERFORMANCE.md).
///
/// Not prepared, like the outbox's statements: a generic plan made while a table is empty can go on scanning it
/// whole until autovacuum next analyzes it (seen with the dispatcher's update of sent updates, prepared: a
/// sequential scan of `updates`; docs/PERFORMANCE.md).
package enum ActivityAddressQuery {
    /// The statement, for the activities' ids as `$1`; rows of activity id, token id, token and whether it is
    /// unproven, channel row id,
    /// channel id and storage policy.
    package static let sql = """
        SELECT a.id, t.id, t.token, t.unproven, c.id, c.channel_id, c.storage_policy::int FROM activities a
        LEFT JOIN LATERAL (
            SELECT id, token, unproven FROM activity_tokens WHERE activity_id = a.id AND invalidated_at IS NULL LIMIT 1
        ) t ON true
        LEFT JOIN LATERAL (
            SELECT id, channel_id, storage_policy FROM channels WHERE id = a.channel_id AND state = \(ChannelState.active.sql) LIMIT 1
        ) c ON true
        WHERE a.id = ANY($1)
        """

    /// The statement for these activities.
    static func query(_ activityIDs: [Int64]) -> PostgresQuery {
        var bindings = PostgresBindings()
        bindings.append(activityIDs)
        return PostgresQuery(unsafeSQL: Self.sql, binds: bindings)
    }
}
