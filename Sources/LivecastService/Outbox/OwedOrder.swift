import PostgresNIO

/// Order per target across the page walk and owed pushes: a target never has two pushes in flight, and never gets
/// an older update after a newer one (docs/ARCHITECTURE.md, invariant 1). A fan-out's walk reaches each target once
/// per update, in update order; what crosses it is an owed push of an older update, claimed by a quick round in
/// this or another instance. So before a page or a broadcast is sent, its targets' older owed pushes are dropped,
/// and a target whose older push is in flight is sent nothing now: its push is owed instead, due at once, and the
/// claim takes it only after the one in flight is answered (``ClaimOwedPushesStatement``).
extension Dispatcher {
    /// Makes way for `updateID`'s pushes to these targets, before they are sent: what older updates (or this one,
    /// from a repeated page) still owe them is dropped, as the newer push replaces it, unless it is in flight (claimed
    /// under a live lease). Those targets are returned: a push to them now could reach APNs before the one in
    /// flight, so the caller sends them nothing. Row locks (`FOR UPDATE`) order this against a concurrent claim of
    /// the same owed pushes: either the claim comes first and its push counts as in flight, or the owed push is gone
    /// before the claim can see it.
    /// - Returns: Each busy target, with the update of its push in flight.
    func clearOlderOwed(
        _ kind: OwedTarget.Kind,
        _ ids: [Int64],
        upTo updateID: Int64,
        on connection: PostgresConnection
    ) async throws -> [Int64: Int64] {
        guard !ids.isEmpty else { return [:] }
        let rows = try await connection.query(
            """
            WITH older AS (
                SELECT id, target_id, update_id, claimed_by IS NOT NULL AND not_before > now() AS in_flight
                FROM owed_pushes WHERE target_kind = \(kind.rawValue) AND target_id = ANY(\(ids)) AND update_id <= \(updateID)
                FOR UPDATE
            ), cleared AS (
                DELETE FROM owed_pushes o USING older WHERE o.id = older.id AND NOT older.in_flight
            )
            SELECT target_id, max(update_id) FROM older WHERE in_flight GROUP BY target_id
            """,
            logger: self.logger
        )
        var busy: [Int64: Int64] = [:]
        for try await (targetID, inFlight) in rows.decode((Int64, Int64).self) { busy[targetID] = inFlight }
        return busy
    }

    /// Splits a page's pushes around its busy targets (``clearOlderOwed(_:_:upTo:on:)``): the ones to send now,
    /// and the ones deferred behind an older push in flight, to be owed. A target whose push of this very update
    /// is in flight (a repeated page) gets neither: that push is this one. A push's target is its
    /// ``PageTarget/ownerID``.
    func makeWay(
        for targets: [PageTarget],
        kind: OwedTarget.Kind,
        busy: [Int64: Int64],
        updateID: Int64
    ) -> (ready: [PageTarget], deferred: [OwedTarget]) {
        guard !busy.isEmpty else { return (targets, []) }
        var ready: [PageTarget] = []
        var deferred: [OwedTarget] = []
        ready.reserveCapacity(targets.count)
        for target in targets {
            switch busy[target.ownerID] {
            case nil: ready.append(target)
            case updateID?: continue
            case _?: deferred.append(.deferred(kind, target.ownerID))
            }
        }
        return (ready, deferred)
    }
}
