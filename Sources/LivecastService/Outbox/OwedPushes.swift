import LivecastCore
import LivecastStore
import PostgresNIO

/// A push APNs asked to retry later (429, 5xx, or a connection lost before its answer), owed to one target of an
/// update.
struct OwedTarget: Sendable {
    /// What the target is.
    enum Kind: String, Sendable {
        /// An activity: the push goes to its live update token when it is sent.
        case activity
        /// A push-to-start token.
        case pushToStart = "push_to_start"
        /// A channel of the registry.
        case channel
    }

    var kind: Kind
    /// `activities.id`, `push_to_start_tokens.id` or `channels.id`.
    var id: Int64
    /// An iOS 18 device's start goes with the update's channel payload.
    var usesChannelPayload = false
    var status: Int?
    var reason: String
    /// Not sent yet: an older push to the target was in flight when this update reached it
    /// (``Dispatcher/clearOlderOwed(_:ofFeed:after:upTo:on:)``). It is due at once, and goes once that push is answered.
    var isDeferred = false

    /// The reason kept with a deferred push.
    static let awaitingEarlierPush = "AwaitingEarlierPush"

    /// A push of this update held back for `target`, because an older push to it is still in flight.
    static func deferred(_ kind: Kind, _ id: Int64) -> OwedTarget {
        OwedTarget(kind: kind, id: id, reason: Self.awaitingEarlierPush, isDeferred: true)
    }
}

/// An owed push claimed for sending, with what it sends.
struct OwedClaim: Sendable {
    var id: Int64
    var appID: Int64
    var updateID: Int64
    var kind: OwedTarget.Kind
    var targetID: Int64
    /// Tries so far.
    var attempts: Int
    var lastReason: String
    var pastDeadline: Bool
    var event: LiveActivityEvent
    var payload: [UInt8]
    var priority: Int
    /// The update's feed, if it is a feed's.
    var feedID: Int64?
    /// A newer push to the same target is owed, or a newer update of the same feed or activity exists: this one
    /// is settled without being sent (the target gets the newer one).
    var isSuperseded: Bool

    /// This push given up for `reason`.
    func deadLetter(reason: String) -> DeadLetter {
        DeadLetter(updateID: self.updateID, targetKind: self.kind.rawValue, targetID: self.targetID, reason: reason, attempts: self.attempts)
    }
}

extension Dispatcher {
    /// Carries pushes forward: owed to their targets, due after a first backoff (a deferred one at once), given up at
    /// their deadline (``RetryPolicy``). A target already owed this update (a crash repeated its page) counts one
    /// more try.
    func owe(_ targets: [OwedTarget], updateID: Int64, appID: Int64, on connection: PostgresConnection) async throws {
        guard !targets.isEmpty else { return }
        let policy = self.retryPolicy
        let delays = targets.map { $0.isDeferred ? 0 : policy.backoff(afterAttempts: 1) }
        try await connection.query(
            """
            INSERT INTO owed_pushes AS o
                (app_id, update_id, target_kind, target_id, channel_payload, attempts, last_status, last_reason, not_before, deadline)
            SELECT \(appID), u.id, t.kind, t.id, t.channel_payload, 1, nullif(t.status, 0), t.reason, now() + make_interval(secs => t.delay),
                CASE WHEN t.kind = 'activity'
                     THEN \(unescaped: policy.activityDeadlineSQL(event: "u.event", startedAt: "coalesce(a.started_at, now())", since: "now()"))
                     ELSE \(unescaped: policy.deadlineSQL(event: "u.event", since: "now()")) END
            FROM unnest(\(targets.map(\.kind.rawValue))::text[], \(targets.map(\.id))::bigint[], \(targets.map(\.usesChannelPayload))::bool[],
                        \(targets.map { $0.status ?? 0 })::int[], \(targets.map(\.reason))::text[],
                        \(delays)::float8[])
                AS t(kind, id, channel_payload, status, reason, delay)
            JOIN updates u ON u.id = \(updateID)
            LEFT JOIN activities a ON t.kind = 'activity' AND a.id = t.id
            ON CONFLICT (update_id, target_kind, target_id) DO UPDATE SET attempts = o.attempts + 1, last_status = excluded.last_status,
                last_reason = excluded.last_reason, not_before = excluded.not_before, claimed_by = NULL
            """,
            logger: self.logger
        )
        self.owedDue.note(delays: delays)
    }

    /// Claims each app's due owed pushes, oldest first, at most a batch per app, under a lease
    /// (``ClaimOwedPushesStatement``).
    func claimOwedPushes() async throws -> [OwedClaim] {
        let statement = ClaimOwedPushesStatement(
            batchSize: self.settings.batchSize,
            dispatcherID: self.id,
            leaseSeconds: self.settings.lease.inSeconds
        )
        return try await self.database.guardedExecute(statement, logger: self.logger).map { row in
            OwedClaim(
                id: row.0,
                appID: row.1,
                updateID: row.2,
                kind: OwedTarget.Kind(rawValue: row.3) ?? .activity,
                targetID: row.4,
                attempts: row.5,
                lastReason: row.6,
                pastDeadline: row.7,
                event: LiveActivityEvent(rawValue: row.8) ?? .update,
                payload: Array(row.9.utf8),
                priority: row.10,
                feedID: row.11,
                isSuperseded: row.12
            )
        }
    }

    /// Owed pushes sent again that APNs still asks to retry later: due again after a longer backoff.
    func retryOwed(_ retries: [(claim: OwedClaim, status: Int?, reason: String)], on connection: PostgresConnection) async throws {
        guard !retries.isEmpty else { return }
        let delays = retries.map { self.retryPolicy.backoff(afterAttempts: $0.claim.attempts + 1) }
        try await connection.query(
            """
            UPDATE owed_pushes o SET attempts = o.attempts + 1, last_status = nullif(r.status, 0), last_reason = r.reason, claimed_by = NULL,
                not_before = now() + make_interval(secs => r.delay)
            FROM unnest(\(retries.map(\.claim.id))::bigint[], \(retries.map { $0.status ?? 0 })::int[], \(retries.map(\.reason))::text[],
                        \(delays)::float8[]) AS r(id, status, reason, delay)
            WHERE o.id = r.id AND o.claimed_by = \(self.id)
            """,
            logger: self.logger
        )
        self.owedDue.note(delays: delays)
    }

    /// Owed pushes settled for good (delivered, refused, superseded, given up, or without a live target): no longer
    /// owed. Delivered and refused ones count as sent and failed targets of their updates. Whatever older updates
    /// still owe the targets of the ones that were sent, delivered or not, goes too: those targets have had a newer
    /// push, so an older one would arrive out of order. Starts are kept: each is a different activity's.
    func settleOwed(_ settled: [OwedClaim], delivered: [OwedClaim], failed: [OwedClaim], on connection: PostgresConnection) async throws {
        guard !settled.isEmpty else { return }
        try await connection.query(
            "DELETE FROM owed_pushes WHERE id = ANY(\(settled.map(\.id))) AND claimed_by = \(self.id)",
            logger: self.logger
        )
        let counted = delivered.map { ($0.updateID, 1, 0) } + failed.map { ($0.updateID, 0, 1) }
        if !counted.isEmpty {
            try await connection.query(
                """
                UPDATE updates u SET sent_count = u.sent_count + c.sent, failed_count = u.failed_count + c.failed
                FROM (SELECT update_id, sum(sent) AS sent, sum(failed) AS failed
                      FROM unnest(\(counted.map(\.0))::bigint[], \(counted.map(\.1))::int[], \(counted.map(\.2))::int[]) AS c(update_id, sent, failed)
                      GROUP BY 1) AS c
                WHERE u.id = c.update_id
                """,
                logger: self.logger
            )
        }
        let sent = delivered + failed
        guard !sent.isEmpty else { return }
        try await connection.query(
            """
            DELETE FROM owed_pushes o USING unnest(\(sent.map(\.kind.rawValue))::text[], \(sent.map(\.targetID))::bigint[],
                                                   \(sent.map(\.updateID))::bigint[]) AS d(kind, target_id, update_id)
            WHERE o.target_kind = d.kind AND o.target_id = d.target_id AND o.update_id < d.update_id AND d.kind <> 'push_to_start'
            """,
            logger: self.logger
        )
    }
}

extension Dispatcher {
    /// Puts back an app's claimed owed pushes for a minute (its signing key cannot be opened); those past their
    /// deadline are given up as dead letters with `reason`.
    func holdBack(_ claims: [OwedClaim], reason: String) async throws {
        guard let appID = claims.first?.appID else { return }
        let expired = claims.filter(\.pastDeadline)
        let waiting = claims.filter { !$0.pastDeadline }
        try await self.database.withGuardedConnection { connection in
            try await self.deadLetter(
                expired.map { $0.deadLetter(reason: reason) },
                appID: appID,
                on: connection
            )
            try await self.settleOwed(expired, delivered: [], failed: [], on: connection)
            try await connection.query(
                """
                UPDATE owed_pushes SET claimed_by = NULL, not_before = now() + make_interval(secs => \(RetryPolicy.unusableKeyPause.inSeconds))
                WHERE id = ANY(\(waiting.map(\.id))) AND claimed_by = \(self.id)
                """,
                logger: self.logger
            )
        }
    }
}
