import PostgresNIO

/// The next page of a feed's token-based followers in keyset order, up to a slice's end, with their live update tokens
/// (index `activities_followers`, merged with `activity_tokens_live`). Prepared once per connection: the fan-out's
/// hot query.
///
/// The cursor bounds both sides: PostgreSQL does not carry `a.id > $2` over to `t.activity_id`, and without it the
/// merge join reads every token below the cursor again on each page, far slower on a large feed
/// (docs/PERFORMANCE.md).
struct FollowerPage: PostgresPreparedStatement {
    static let sql = """
        SELECT a.id, t.id, t.token, t.unproven FROM activities a
        JOIN activity_tokens t ON t.activity_id = a.id AND t.invalidated_at IS NULL AND t.activity_id > $2 AND t.activity_id <= $3
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
