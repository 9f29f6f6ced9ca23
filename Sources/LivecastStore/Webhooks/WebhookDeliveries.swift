package import Foundation
import LivecastCore
package import Logging
import NIOCore
package import PostgresNIO

/// The webhook outbox as a deliverer works it: every statement on `webhook_endpoints`' delivery state and on
/// `webhook_deliveries` (`sql/0035_events.sql`).
///
/// An endpoint is claimed whole, under a lease in this deliverer's name (``claimer``), with a batch of its pending
/// deliveries in id order: one batch per endpoint is in flight at a time, so an endpoint sees each subject's events in
/// order. The outcome is written back under the same guard as the outbox's (`claimed_by = claimer`): an
/// acknowledgement or failure of a claim another deliverer took over after the lease ran out is refused, and that
/// deliverer sends the batch again (at least once).
///
/// When to retry (the backoff) is the service's policy; this type only reads and writes.
package struct WebhookDeliveries: Sendable {
    /// One claimed endpoint and the batch of its deliveries to send.
    package struct Batch: Sendable {
        package var endpointID: UUID
        package var appID: Int64
        package var url: String
        /// The current secret, sealed under the master key (``WebhookSecret/open(_:for:with:)``).
        package var sealedSecret: Data
        /// The secret before the last rotation, while it still signs (its expiry is in the future); else `nil`.
        package var sealedPreviousSecret: Data?
        /// When the previous secret stops signing.
        package var previousSecretExpiresAt: Date?
        /// Failed attempts in a row before this one: what the backoff counts from.
        package var consecutiveFailures: Int
        /// The deliveries, in id order.
        package var deliveries: [Delivery]

        /// The request body: `{"events":[…]}`, the events' stored JSON texts joined as they are.
        package var body: String {
            "{\"events\":[" + self.deliveries.map(\.eventJSON).joined(separator: ",") + "]}"
        }
    }

    /// One pending delivery of a batch.
    package struct Delivery: Sendable, Hashable {
        package var id: Int64
        package var eventID: Int64
        /// The event as JSON text (`event_json`).
        package var eventJSON: String
    }

    /// What a failure wrote back.
    package struct FailureOutcome: Sendable, Hashable {
        /// The deliveries whose attempts were counted.
        package var attempted: Int
        /// Those of them given up on (state `failed`): their events are older than the give-up age.
        package var gaveUp: Int
    }

    /// One endpoint's backlog, for the gauges.
    package struct Backlog: Sendable, Hashable {
        package var endpointID: UUID
        package var pending: Int
        /// Seconds since the oldest pending delivery was made.
        package var oldestAge: Double
    }

    /// The most deliveries a batch carries.
    package static let maximumBatch = 100

    /// The PostgreSQL notification channel new deliveries are announced on when their transaction commits (the
    /// trigger of `sql/0038`); the webhook workers `LISTEN` on it.
    package static let notificationChannel = "livecast_webhooks"

    /// The deliverer whose name claims carry.
    package let claimer: UUID
    /// How long a claim holds without a heartbeat.
    package let lease: Duration
    let database: PostgresClient
    let logger: Logger

    /// - Parameters:
    ///   - claimer: The deliverer whose name claims carry.
    ///   - lease: How long a claim holds without a heartbeat (``renew(endpointID:)``).
    package init(database: PostgresClient, claimer: UUID, lease: Duration, logger: Logger) {
        self.database = database
        self.claimer = claimer
        self.lease = lease
        self.logger = logger
    }

    /// Claims a due endpoint (enabled, its backoff over, not claimed or its lease run out, with pending deliveries)
    /// of an app not in `excludedApps`, and reads up to `limit` (at most ``maximumBatch``) of its pending deliveries,
    /// oldest first.
    ///
    /// Claims take turns, across every deliverer sharing the database: the app with the fewest endpoints claimed now
    /// goes first, then the app served least recently, then its endpoint claimed least recently. So a busy endpoint
    /// does not win every claim from the others, nor an app with many endpoints from an app with one.
    /// - Returns: `nil` when no endpoint is due.
    package func claim(limit: Int = WebhookDeliveries.maximumBatch, excludingApps excludedApps: [Int64] = []) async throws -> Batch? {
        let limit = max(1, min(limit, Self.maximumBatch))
        let rows = try await self.database.guardedQuery(
            """
            WITH candidates AS (
                SELECT w.id, w.app_id FROM webhook_endpoints w
                WHERE w.enabled AND w.next_attempt_at <= now()
                  AND (w.claimed_by IS NULL OR w.lease_until < now())
                  AND w.app_id <> ALL(\(excludedApps)::bigint[])
                  AND EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.state = \(unescaped: WebhookDeliveryState.pending.sql))
            ), turns AS (
                SELECT e.app_id, count(*) FILTER (WHERE e.claimed_by IS NOT NULL AND e.lease_until >= now()) AS claimed,
                    max(e.last_claimed_at) AS served
                FROM webhook_endpoints e WHERE e.app_id IN (SELECT app_id FROM candidates)
                GROUP BY e.app_id
            ), due AS (
                SELECT w.id FROM webhook_endpoints w JOIN turns t ON t.app_id = w.app_id
                WHERE w.id IN (SELECT id FROM candidates)
                  AND w.enabled AND w.next_attempt_at <= now() AND (w.claimed_by IS NULL OR w.lease_until < now())
                ORDER BY t.claimed, t.served NULLS FIRST, w.last_claimed_at NULLS FIRST, w.id
                LIMIT 1
                FOR UPDATE OF w SKIP LOCKED
            )
            UPDATE webhook_endpoints w
            SET claimed_by = \(self.claimer), lease_until = now() + make_interval(secs => \(self.lease.inSeconds)), last_claimed_at = now()
            FROM due WHERE w.id = due.id
            RETURNING w.id, w.app_id, w.url, w.secret_sealed,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_sealed END,
                w.previous_secret_expires_at, w.consecutive_failures
            """,
            logger: self.logger
        )
        var claimed: Batch?
        for try await (id, appID, url, secret, previous, expiresAt, failures) in rows.decode(
            (UUID, Int64, String, ByteBuffer, ByteBuffer?, Date?, Int32).self
        ) {
            claimed = Batch(
                endpointID: id,
                appID: appID,
                url: url,
                sealedSecret: Data(secret.readableBytesView),
                sealedPreviousSecret: previous.map { Data($0.readableBytesView) },
                previousSecretExpiresAt: expiresAt,
                consecutiveFailures: Int(failures),
                deliveries: []
            )
        }
        guard var batch = claimed else { return nil }
        let deliveries = try await self.database.guardedQuery(
            """
            SELECT d.id, e.id, event_json(e)::text FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            WHERE d.endpoint_id = \(batch.endpointID) AND d.state = \(unescaped: WebhookDeliveryState.pending.sql)
            ORDER BY d.id
            LIMIT \(limit)
            """,
            logger: self.logger
        )
        for try await (id, eventID, json) in deliveries.decode((Int64, Int64, String).self) {
            batch.deliveries.append(Delivery(id: id, eventID: eventID, eventJSON: json))
        }
        return batch
    }

    /// Records that `batch` was delivered: deletes its deliveries, resets the endpoint's failures, notes the
    /// success and releases the claim.
    /// - Returns: `false` when the claim is no longer this deliverer's (its lease ran out and another took it
    ///   over): nothing is written, and the other deliverer sends the batch again.
    @discardableResult
    package func acknowledge(_ batch: Batch) async throws -> Bool {
        let rows = try await self.database.guardedQuery(
            """
            WITH mine AS (
                UPDATE webhook_endpoints
                SET claimed_by = NULL, lease_until = NULL, consecutive_failures = 0, last_success_at = now()
                WHERE id = \(batch.endpointID) AND claimed_by = \(self.claimer)
                RETURNING id
            ), delivered AS (
                DELETE FROM webhook_deliveries
                WHERE id = ANY(\(batch.deliveries.map(\.id))) AND endpoint_id IN (SELECT id FROM mine)
                RETURNING id
            )
            SELECT (SELECT count(*) FROM mine)::int, (SELECT count(*) FROM delivered)::int
            """,
            logger: self.logger
        )
        for try await (mine, _) in rows.decode((Int, Int).self) { return mine > 0 }
        return false
    }

    /// Records a failed attempt at `batch`: counts an attempt on each of its deliveries, gives up on those made
    /// (with their event, or by a replay) longer than `giveUpAfter` ago (state `failed`, with `reason`), counts a failure of the endpoint, sets its
    /// next attempt `retryIn` from now and releases the claim.
    /// - Parameters:
    ///   - reason: Why, short and free of secrets (`http_503`, `timeout`, `address_not_allowed`).
    ///   - retryIn: The backoff before the endpoint is tried again.
    ///   - giveUpAfter: How long a delivery is tried. Defaults to 24 hours.
    /// - Returns: `nil` when the claim is no longer this deliverer's: nothing is written.
    @discardableResult
    package func fail(
        _ batch: Batch,
        reason: String,
        retryIn: Duration,
        giveUpAfter: Duration = .seconds(86_400)
    ) async throws -> FailureOutcome? {
        let rows = try await self.database.guardedQuery(
            """
            WITH mine AS (
                UPDATE webhook_endpoints
                SET claimed_by = NULL, lease_until = NULL, consecutive_failures = consecutive_failures + 1,
                    next_attempt_at = now() + make_interval(secs => \(retryIn.inSeconds)),
                    last_failure_at = now(), last_failure = \(reason)
                WHERE id = \(batch.endpointID) AND claimed_by = \(self.claimer)
                RETURNING id
            ), tried AS (
                UPDATE webhook_deliveries d
                SET attempts = d.attempts + 1,
                    state = CASE WHEN d.created_at < now() - make_interval(secs => \(giveUpAfter.inSeconds))
                                 THEN \(unescaped: WebhookDeliveryState.failed.sql) ELSE \(unescaped: WebhookDeliveryState.pending.sql) END,
                    failed_at = CASE WHEN d.created_at < now() - make_interval(secs => \(giveUpAfter.inSeconds))
                                     THEN now() END,
                    last_error = \(reason)
                WHERE d.id = ANY(\(batch.deliveries.map(\.id))) AND d.state = \(unescaped: WebhookDeliveryState.pending.sql)
                  AND d.endpoint_id IN (SELECT id FROM mine)
                RETURNING d.state
            )
            SELECT (SELECT count(*) FROM mine)::int, (SELECT count(*) FROM tried)::int,
                (SELECT count(*) FROM tried WHERE state = \(unescaped: WebhookDeliveryState.failed.sql))::int
            """,
            logger: self.logger
        )
        for try await (mine, attempted, gaveUp) in rows.decode((Int, Int, Int).self) where mine > 0 {
            return FailureOutcome(attempted: attempted, gaveUp: gaveUp)
        }
        return nil
    }

    /// Extends the lease of this deliverer's claim on the endpoint (its heartbeat while a request runs).
    /// - Returns: `false` when the claim is no longer this deliverer's.
    @discardableResult
    package func renew(endpointID: UUID) async throws -> Bool {
        let rows = try await self.database.guardedQuery(
            """
            UPDATE webhook_endpoints SET lease_until = now() + make_interval(secs => \(self.lease.inSeconds))
            WHERE id = \(endpointID) AND claimed_by = \(self.claimer)
            RETURNING id
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }

    /// Each endpoint's pending deliveries: how many, and how long the oldest has waited.
    package func backlog() async throws -> [Backlog] {
        let rows = try await self.database.guardedQuery(
            """
            SELECT endpoint_id, count(*)::int, extract(epoch FROM now() - min(created_at))::float8
            FROM webhook_deliveries WHERE state = \(unescaped: WebhookDeliveryState.pending.sql)
            GROUP BY endpoint_id
            """,
            logger: self.logger
        )
        var backlog: [Backlog] = []
        for try await (id, pending, age) in rows.decode((UUID, Int, Double).self) {
            backlog.append(Backlog(endpointID: id, pending: pending, oldestAge: max(age, 0)))
        }
        return backlog
    }
}
