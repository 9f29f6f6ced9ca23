import PostgresNIO

/// The answer kept for an app's update with an idempotency key on a route and target, in the outbox or scheduled,
/// and the fingerprint of the body it answered (``UpdateResponses/response(appID:idempotencyKey:)``). A request with
/// a key asks it when it is to be scheduled, or refused before the outbox (one for the outbox is replayed by the
/// transaction that would store it: ``OutboxRules/replays(_:on:logger:)``); prepared once per connection, it is not
/// parsed and planned each time.
struct KeptAnswerStatement: PostgresPreparedStatement {
    static let sql = """
        SELECT response, idempotency_fingerprint FROM updates
        WHERE app_id = $1 AND idempotency_scope = $2 AND idempotency_key = $3 AND response IS NOT NULL
        UNION ALL
        SELECT response, idempotency_fingerprint FROM scheduled_updates
        WHERE app_id = $1 AND idempotency_scope = $2 AND idempotency_key = $3 AND response IS NOT NULL
        LIMIT 1
        """

    /// The answer, and the fingerprint of the body it answered.
    typealias Row = (String, String?)

    var appID: Int64
    var idempotencyKey: IdempotencyKey

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(self.appID)
        bindings.append(self.idempotencyKey.scope)
        bindings.append(self.idempotencyKey.key)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
