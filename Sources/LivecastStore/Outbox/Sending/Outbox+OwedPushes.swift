import LivecastCore
package import PostgresNIO

extension Outbox {
    /// Carries pushes forward: owed to their targets, each due after its delay (seconds), given up at their deadline
    /// (``RetryDeadline``). A target already owed this update (a crash repeated its page) counts one more try. A push
    /// awaiting proof (``OwedTarget/awaitsProof``) is due only once the app's credentials are proven: at once if they
    /// were proven meanwhile.
    package func owe(_ targets: [OwedTarget], delays: [Double], updateID: Int64, appID: Int64, on connection: PostgresConnection) async throws {
        guard !targets.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO owed_pushes AS o
                (app_id, update_id, target_kind, target_id, channel_payload, attempts, last_status, last_reason, not_before, deadline, awaits_proof)
            SELECT \(appID), u.id, t.kind, t.id, t.channel_payload, 1, nullif(t.status, 0), t.reason,
                CASE WHEN t.awaits_proof AND NOT proof.proven THEN 'infinity' ELSE now() + make_interval(secs => t.delay) END,
                \(unescaped: self.retryDeadline.owedSQL(kind: "t.kind", event: "u.event", activityStartedAt: "a.started_at")),
                t.awaits_proof AND NOT proof.proven
            FROM unnest(\(targets.map(\.kind.rawValue))::text[], \(targets.map(\.id))::bigint[], \(targets.map(\.usesChannelPayload))::bool[],
                        \(targets.map { $0.status ?? 0 })::int[], \(targets.map(\.reason))::text[],
                        \(delays)::float8[], \(targets.map(\.awaitsProof))::bool[])
                AS t(kind, id, channel_payload, status, reason, delay, awaits_proof)
            JOIN updates u ON u.id = \(updateID)
            CROSS JOIN (SELECT apns_proven_at IS NOT NULL AS proven FROM apps WHERE id = \(appID)) AS proof
            LEFT JOIN activities a ON t.kind = \(unescaped: OwedTarget.Kind.activity.sql) AND a.id = t.id
            ON CONFLICT (update_id, target_kind, target_id) DO UPDATE SET attempts = o.attempts + 1, last_status = excluded.last_status,
                last_reason = excluded.last_reason, not_before = excluded.not_before, awaits_proof = excluded.awaits_proof, claimed_by = NULL
            """,
            logger: self.logger
        )
    }

    /// Claims each app's due owed pushes, oldest first, at most `batchSize` per app, under a lease
    /// (``ClaimOwedPushesStatement``).
    package func claimOwedPushes(batchSize: Int) async throws -> [OwedClaim] {
        let statement = ClaimOwedPushesStatement(batchSize: batchSize, dispatcherID: self.claimer, leaseSeconds: self.lease.inSeconds)
        return try await self.database.guardedExecute(statement, logger: self.logger).map { row in
            OwedClaim(
                id: row.0,
                appID: row.1,
                updateID: row.2,
                kind: row.3,
                targetID: row.4,
                attempts: row.5,
                lastReason: row.6,
                pastDeadline: row.7,
                event: row.8,
                payload: Array(row.9.utf8),
                priority: row.10,
                feedID: row.11,
                isSuperseded: row.12
            )
        }
    }

    /// Owed pushes sent again that APNs still asks to retry later: due again after their delays, or, awaiting the
    /// app's proof, once its credentials are proven (``OwedTarget/awaitsProof``).
    package func retry(_ retries: [OwedRetry], on connection: PostgresConnection) async throws {
        guard !retries.isEmpty else { return }
        try await connection.query(
            """
            UPDATE owed_pushes o SET attempts = o.attempts + 1, last_status = nullif(r.status, 0), last_reason = r.reason, claimed_by = NULL,
                not_before = CASE WHEN r.awaits_proof AND ap.apns_proven_at IS NULL THEN 'infinity' ELSE now() + make_interval(secs => r.delay) END,
                awaits_proof = r.awaits_proof AND ap.apns_proven_at IS NULL
            FROM unnest(\(retries.map(\.claim.id))::bigint[], \(retries.map { $0.status ?? 0 })::int[], \(retries.map(\.reason))::text[],
                        \(retries.map(\.delay))::float8[], \(retries.map(\.awaitsProof))::bool[]) AS r(id, status, reason, delay, awaits_proof),
                 apps ap
            WHERE ap.id = o.app_id AND o.id = r.id AND o.claimed_by = \(self.claimer)
            """,
            logger: self.logger
        )
    }

    /// Owed pushes settled for good (delivered, refused, superseded, given up, or without a live target): no longer
    /// owed. Delivered and refused ones count as sent and failed targets of their updates, unless the claim was taken
    /// over (then its new claimer counts them). Whatever older updates still owe the targets of the ones that were
    /// sent, delivered or not, goes too, taken over or not: those targets have had a newer push, so an older one would
    /// arrive out of order. Starts are kept: each is a different activity's.
    package func settle(_ settled: [OwedClaim], delivered: [OwedClaim], failed: [OwedClaim], on connection: PostgresConnection) async throws {
        guard !settled.isEmpty else { return }
        let removed = try await connection.query(
            "DELETE FROM owed_pushes WHERE id = ANY(\(settled.map(\.id))) AND claimed_by = \(self.claimer) RETURNING id",
            logger: self.logger
        )
        var ours = Set<Int64>()
        for try await id in removed.decode(Int64.self) { ours.insert(id) }
        // Only the pushes still ours count: a claim taken over is counted by the claimer that took it.
        let counted =
            delivered.filter { ours.contains($0.id) }.map { ($0.updateID, 1, 0) }
            + failed.filter { ours.contains($0.id) }.map { ($0.updateID, 0, 1) }
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
            WHERE o.target_kind = d.kind AND o.target_id = d.target_id AND o.update_id < d.update_id AND d.kind <> \(unescaped: OwedTarget.Kind.pushToStart.sql)
            """,
            logger: self.logger
        )
    }

    /// Puts claimed owed pushes back, due after `pause`, unclaimed.
    package func putBack(_ claims: [OwedClaim], for pause: Duration, on connection: PostgresConnection) async throws {
        try await connection.query(
            """
            UPDATE owed_pushes SET claimed_by = NULL, not_before = now() + make_interval(secs => \(pause.inSeconds))
            WHERE id = ANY(\(claims.map(\.id))) AND claimed_by = \(self.claimer)
            """,
            logger: self.logger
        )
    }
}
