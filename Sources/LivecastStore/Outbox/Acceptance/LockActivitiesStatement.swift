import PostgresNIO

/// Locks the activities an ``ActivityUpdateBatch`` updates, in the order of their ids so two transactions never wait
/// for each other, and reads the database's clock once every lock is held (``OutboxStatements/databaseNow(on:logger:)``,
/// without a round trip of its own): the clock's subquery counts the locked rows first. Prepared once per connection;
/// the requests come through `requested_activities` (migration `0021`), which PostgreSQL counts as one row, so that
/// the plan it keeps looks each activity up by index instead of reading the whole table.
struct LockActivitiesStatement: PostgresPreparedStatement {
    static let sql = """
        WITH locked AS MATERIALIZED (
            SELECT r.n::int AS n, a.id, a.state, a.last_timestamp, c.state AS channel_state, a.feed_id
            FROM requested_activities($1::bigint[], $2::text[]) AS r
            JOIN activities a ON a.app_id = r.app_id AND a.activity_key = r.activity_key
            LEFT JOIN channels c ON c.id = a.channel_id
            ORDER BY a.id FOR UPDATE OF a
        )
        SELECT n, id, state, last_timestamp, channel_state, feed_id,
            (SELECT floor(extract(epoch FROM clock_timestamp()))::bigint FROM (SELECT count(*) FROM locked) AS held)
        FROM locked
        """

    /// The request's place (from 1), then `ActivityTarget.Row`'s columns, then the clock in UNIX seconds.
    typealias Row = (Int, Int64, ActivityState, Int?, ChannelState?, Int64?, Int)

    var appIDs: [Int64]
    var activityKeys: [String]

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.appIDs)
        bindings.append(self.activityKeys)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
