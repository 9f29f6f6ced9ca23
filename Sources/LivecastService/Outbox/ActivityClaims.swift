import APNs
import Foundation
import LivecastCore
import LivecastStore
import PostgresNIO

/// One claimed update of a standalone activity.
struct ActivityClaim: Sendable {
    var updateID: Int64
    var appID: Int64
    var activityID: Int64
    var event: LiveActivityEvent
    var payload: [UInt8]
    var priority: Int
    /// Claims so far, this one included.
    var attempts: Int
    /// When it is given up if APNs keeps asking to retry (``RetryPolicy``), in UNIX seconds.
    var deadline: Double

    /// This update given up for `reason`.
    func deadLetter(reason: String) -> DeadLetter {
        DeadLetter(
            updateID: self.updateID,
            targetKind: OwedTarget.Kind.activity.rawValue,
            targetID: self.activityID,
            reason: reason,
            attempts: self.attempts
        )
    }
}

/// What to write for one claimed standalone activity update.
struct ActivityVerdict: Sendable {
    var updateID: Int64
    /// `sent` or `failed`; `nil` to try again after `retryAfter` seconds.
    var status: OutboxStatus?
    var retryAfter: Double = 0
    var target: String = ""
    /// `device` or `channel`: what `target` is.
    var targetKind: String = "device"
    /// The push's `apns-id` (a device push's ``PushID``), kept with a failure.
    var apnsID: String?
    var failure: (status: Int?, reason: String)?
    /// Given up: kept as a dead letter too.
    var deadLetter: DeadLetter?
    /// APNs' verdict on the token, applied after the send locks are released.
    var invalidation: PageDelivery.Invalidation?
}

extension Dispatcher {
    /// Claims each app's due standalone activity updates (each the oldest unfinished of its activity), oldest first,
    /// at most a batch per app, under a lease. The candidates come from `due_activity_updates` (migrations `0023`
    /// and `0024`), which keeps its plan and reads the outbox by index only.
    func claimActivityUpdates() async throws -> [ActivityClaim] {
        let deadline = self.retryPolicy.activityDeadlineSQL(event: "u.event", startedAt: "a.started_at", since: "u.created_at")
        let rows = try await self.database.guardedQuery(
            """
            WITH next AS (
                SELECT n.id FROM apps ap CROSS JOIN LATERAL due_activity_updates(ap.id, \(self.settings.batchSize)) AS n(id)
                WHERE ap.sending_held_at IS NULL
            )
            UPDATE updates u SET status = \(unescaped: OutboxStatus.dispatching.sql), claimed_by = \(self.id), attempts = u.attempts + 1,
                not_before = now() + make_interval(secs => \(self.settings.lease.inSeconds))
            FROM next, activities a
            WHERE u.id = next.id AND a.id = u.activity_id
            RETURNING u.id, u.app_id, u.activity_id, u.event, u.payload, u.priority::int, u.attempts,
                extract(epoch FROM \(unescaped: deadline))::float8
            """,
            logger: self.logger
        )
        var claims: [ActivityClaim] = []
        for try await row in rows.decode((Int64, Int64, Int64, String, String, Int, Int, Double).self) {
            claims.append(
                ActivityClaim(
                    updateID: row.0,
                    appID: row.1,
                    activityID: row.2,
                    event: LiveActivityEvent(rawValue: row.3) ?? .update,
                    payload: Array(row.4.utf8),
                    priority: row.5,
                    attempts: row.6,
                    deadline: row.7
                )
            )
        }
        return claims
    }

    /// What APNs' outcome means for a claimed update: sent, failed, or put back with backoff while before its
    /// deadline (after it, given up as a dead letter).
    /// - Parameter retryingAnyway: Retry it as APNs had asked, whatever the answer (the invalidation guard tripped).
    func verdict(_ claim: ActivityClaim, _ outcome: APNsOutcome, target: String, targetKind: String, retryingAnyway: Bool = false) -> ActivityVerdict
    {
        var verdict = ActivityVerdict(updateID: claim.updateID, target: target, targetKind: targetKind)
        if targetKind == "device" {
            verdict.apnsID = PushID(updateID: claim.updateID, targetKind: .activity, targetID: claim.activityID)?.uuidString
        }
        switch retryingAnyway ? .retryLater : outcome.classification {
        case .delivered:
            verdict.status = .sent
        case .retryLater:
            let delay = self.retryPolicy.backoff(afterAttempts: claim.attempts)
            if Date().timeIntervalSince1970 + delay < claim.deadline {
                verdict.retryAfter = delay
            } else {
                verdict.status = .failed
                verdict.failure = (outcome.status, outcome.failureReason)
                verdict.deadLetter = claim.deadLetter(reason: outcome.failureReason)
            }
        default:
            verdict.status = .failed
            verdict.failure = (outcome.status, outcome.failureReason)
        }
        return verdict
    }

    /// Puts back the claimed updates of an app whose signing key cannot be opened, for a minute; past their
    /// deadline they are given up as dead letters.
    func holdBack(_ claims: [ActivityClaim], reason: String) async throws {
        let now = Date().timeIntervalSince1970
        try await self.recordActivityVerdicts(
            claims.map { claim in
                guard now + RetryPolicy.unusableKeyPause.inSeconds >= claim.deadline else {
                    return ActivityVerdict(updateID: claim.updateID, retryAfter: RetryPolicy.unusableKeyPause.inSeconds)
                }
                return ActivityVerdict(
                    updateID: claim.updateID,
                    status: .failed,
                    failure: (nil, reason),
                    deadLetter: claim.deadLetter(reason: reason)
                )
            },
            appID: claims.first?.appID ?? 0
        )
    }

    /// Writes a batch's verdicts: APNs' verdicts on tokens, then finished updates, retries, failures and dead
    /// letters, one statement each.
    func recordActivityVerdicts(_ verdicts: [ActivityVerdict], appID: Int64) async throws {
        try await self.applyInvalidations(verdicts.compactMap(\.invalidation), appID: appID, tokens: .activityTokens)
        let finished = verdicts.filter { $0.status != nil }
        let retried = verdicts.filter { $0.status == nil }
        let failed = verdicts.filter { $0.failure != nil }
        try await self.database.withGuardedConnection { connection in
            if !finished.isEmpty {
                try await connection.query(
                    """
                    UPDATE updates u SET status = v.status, claimed_by = NULL, completed_at = now(),
                        sent_count = u.sent_count + (v.status = \(unescaped: OutboxStatus.sent.sql))::int,
                        failed_count = u.failed_count + (v.status = \(unescaped: OutboxStatus.failed.sql) AND NOT v.dead)::int
                    FROM unnest(\(finished.map(\.updateID))::bigint[], \(finished.map { $0.status?.rawValue ?? "failed" })::text[],
                                \(finished.map { $0.deadLetter != nil })::bool[]) AS v(id, status, dead)
                    WHERE u.id = v.id AND u.claimed_by = \(self.id)
                    """,
                    logger: self.logger
                )
            }
            if !retried.isEmpty {
                try await connection.query(
                    """
                    UPDATE updates u SET status = \(unescaped: OutboxStatus.pending.sql), claimed_by = NULL, not_before = now() + make_interval(secs => v.delay)
                    FROM unnest(\(retried.map(\.updateID))::bigint[], \(retried.map(\.retryAfter))::float8[]) AS v(id, delay)
                    WHERE u.id = v.id AND u.claimed_by = \(self.id)
                    """,
                    logger: self.logger
                )
            }
            if !failed.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
                    SELECT id, kind, target, nullif(status, 0), reason, nullif(apns_id, '')
                    FROM unnest(\(failed.map(\.updateID))::bigint[], \(failed.map(\.targetKind))::text[], \(failed.map(\.target))::text[],
                                \(failed.map { $0.failure?.status ?? 0 })::int[], \(failed.map { $0.failure?.reason ?? "" })::text[],
                                \(failed.map { $0.apnsID ?? "" })::text[])
                        AS f(id, kind, target, status, reason, apns_id)
                    """,
                    logger: self.logger
                )
            }
            try await self.deadLetter(verdicts.compactMap(\.deadLetter), appID: appID, on: connection)
        }
    }
}
