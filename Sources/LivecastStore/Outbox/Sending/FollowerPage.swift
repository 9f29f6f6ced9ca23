import PostgresNIO

/// The next page of a feed's token-based followers in keyset order, up to a slice's end, with their live update tokens.
/// Prepared once per connection: the fan-out's hot query.
///
/// Each follower's token is looked up on its own (`activity_tokens_live`), in a subquery that `OFFSET 0` keeps
/// PostgreSQL from flattening into a join, so a page costs the same whatever the statistics say. As a join, its plan
/// hung on them: with the tables analyzed, a merge join (2.3 ms a page of 2,000 at 600,000 followers; this is 4.1);
/// with followers that registered since the last analyze (a feed that just filled up), a nested loop that read every
/// token above the cursor for each follower: 1.3 s a page of 2,000 at 3,000 followers, growing with their square
/// (docs/PERFORMANCE.md).
struct FollowerPage: PostgresPreparedStatement {
    static let sql = """
        SELECT a.id, t.id, t.token, t.unproven FROM activities a
        CROSS JOIN LATERAL (
            SELECT t.id, t.token, t.unproven FROM activity_tokens t WHERE t.activity_id = a.id AND t.invalidated_at IS NULL OFFSET 0
        ) t
        WHERE a.feed_id = $1 AND a.state IN \(ActivityState.runningSQL) AND a.channel_id IS NULL AND a.id > $2 AND a.id <= $3
        ORDER BY a.id
        LIMIT $4
        """

    /// Activity id, token id, token, whether the token is unproven.
    typealias Row = (Int64, Int64, String, Bool)

    var feedID: Int64
    var after: Int64
    /// The slice's last follower (`Int64.max` for an update walked whole).
    var through: Int64
    var limit: Int

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.feedID)
        bindings.append(self.after)
        bindings.append(self.through)
        bindings.append(self.limit)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
