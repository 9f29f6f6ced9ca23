package import PostgresNIO

/// Order per target across the page walk and owed pushes: a target never has two pushes in flight, and never gets
/// an older update after a newer one (docs/ARCHITECTURE.md, invariant 1). A fan-out's walk reaches each target once
/// per update, in update order; what crosses it is an owed push of an older update, claimed by a quick round in
/// this or another instance. So before a fan-out walks its followers (or broadcasts), what the feed's older updates
/// still owe them is dropped, and a target whose older push is in flight is sent nothing by the walk: its push is
/// owed instead, due at once, and the claim takes it only after the one in flight is answered
/// (``ClaimOwedPushesStatement``).
///
/// This runs before the walk reads its first token, not after: a push in flight answered `410` invalidates its
/// token and only then settles, so a token read after its owed push was found settled is never a stale one.
extension Outbox {
    /// Makes way for a fan-out's pushes, before it reads its targets: what the feed's older updates (or this one,
    /// from a repeated walk) still owe the targets it has yet to walk is dropped, as the newer push replaces it,
    /// unless it is in flight (claimed under a live lease). Those targets are returned: a push to them now could
    /// reach APNs before the one in flight, so the walk sends them nothing. Row locks (`FOR UPDATE`) order this
    /// against a concurrent claim of the same owed pushes: either the claim comes first and its push counts as in
    /// flight, or the owed push is gone before the claim can see it.
    /// - Parameters:
    ///   - kind: The targets: the feed's activities, or its channel.
    ///   - after: The walk's checkpoint: targets up to it have this update's push or owe it already.
    ///   - through: The last target the walk will reach: its slice's end (``FanOutClaim/upperBound``).
    /// - Returns: Each busy target, with the update of its push in flight.
    package func clearOlderOwed(
        _ kind: OwedTarget.Kind,
        ofFeed feedID: Int64,
        after cursor: Int64,
        through upper: Int64,
        upTo updateID: Int64,
        on connection: PostgresConnection
    ) async throws -> [Int64: Int64] {
        let rows = try await connection.query(
            """
            WITH older AS (
                SELECT o.id, o.target_id, o.update_id, o.claimed_by IS NOT NULL AND o.not_before > now() AS in_flight
                FROM owed_pushes o
                WHERE o.target_kind = \(kind) AND o.target_id > \(cursor) AND o.target_id <= \(upper)
                  AND o.update_id IN (SELECT id FROM updates WHERE feed_id = \(feedID) AND id <= \(updateID))
                FOR UPDATE OF o
            ), cleared AS (
                DELETE FROM owed_pushes o USING older WHERE o.id = older.id AND NOT older.in_flight
            )
            SELECT target_id, max(update_id) FROM older WHERE in_flight GROUP BY target_id
            """,
            logger: self.logger
        )
        return try await Self.targets(rows)
    }

    /// The push-to-start tokens of an app that still owe a start older than `updateID`, read before a start's walk
    /// reads a token: each start is a different activity's, so none replaces another, but a token gets them in
    /// order (the claim takes the oldest first, ``ClaimOwedPushesStatement``).
    /// - Returns: Each such token, with its newest older start, as a busy target.
    package func tokensOwedOlderStarts(appID: Int64, before updateID: Int64, on connection: PostgresConnection) async throws -> [Int64: Int64] {
        let rows = try await connection.query(
            """
            SELECT target_id, max(update_id) FROM owed_pushes
            WHERE app_id = \(appID) AND target_kind = \(unescaped: OwedTarget.Kind.pushToStart.sql) AND update_id < \(updateID)
            GROUP BY target_id
            """,
            logger: self.logger
        )
        return try await Self.targets(rows)
    }

    private static func targets(_ rows: PostgresRowSequence) async throws -> [Int64: Int64] {
        var targets: [Int64: Int64] = [:]
        for try await (targetID, updateID) in rows.decode((Int64, Int64).self) { targets[targetID] = updateID }
        return targets
    }
}
