package import Foundation
import LivecastCore
import Logging
import NIOCore
import PostgresNIO

/// An app's webhook endpoints (`webhook_endpoints`, `sql/0035_events.sql`), as operators manage them: made with a
/// random secret sealed under the master key and shown once, changed, disabled, removed, their secret rotated (the
/// old one signs beside the new for 24 hours), and the deliveries they gave up on listed and replayed.
///
/// The delivery worker owns the rest of an endpoint's delivery state (its lease, backoff, last success and failure).
package struct WebhookEndpoints: DatabaseBacked {
    /// How many endpoints an app may have.
    package static let limit = 16
    /// How long the secret a rotation replaces keeps signing deliveries beside the new one.
    package static let rotationOverlap: Duration = .seconds(24 * 3600)

    /// What an update changes; `nil` leaves a value as it is.
    package struct Changes: Sendable, Hashable {
        package var enabled: Bool?
        /// The event types wanted; empty: every type.
        package var events: [EventType]?
        package var url: WebhookURL?

        package init(enabled: Bool? = nil, events: [EventType]? = nil, url: WebhookURL? = nil) {
            self.enabled = enabled
            self.events = events
            self.url = url
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Adds an endpoint to an app, with a new random secret sealed under `masterKey`.
    /// - Parameter events: The event types it wants; empty: every type.
    /// - Returns: The endpoint and its secret, which is never shown again.
    /// - Throws: ``StoreError`` `limitReached` when the app has ``limit`` endpoints already.
    package func create(
        appID: Int64,
        url: WebhookURL,
        events: [EventType],
        masterKey: MasterKey
    ) async throws -> (endpoint: WebhookEndpoint, secret: WebhookSecret) {
        let id = UUID()
        let secret = WebhookSecret.random()
        let sealed = ByteBuffer(bytes: secret.sealed(for: id, with: masterKey))
        let types = events.map(\.rawValue)
        let logger = self.logger
        let created = try await self.client.withGuardedTransaction(logger: logger) { connection in
            // The app's row lock makes concurrent creations count one after the other.
            _ = try await connection.query("SELECT 1 FROM apps WHERE id = \(appID) FOR NO KEY UPDATE", logger: logger).collect()
            let rows = try await connection.query(
                """
                INSERT INTO webhook_endpoints (id, app_id, url, event_types, secret_sealed)
                SELECT \(id), \(appID), \(url.text), \(types)::text[], \(sealed)
                WHERE (SELECT count(*) FROM webhook_endpoints WHERE app_id = \(appID)) < \(Self.limit)
                RETURNING id
                """,
                logger: logger
            ).collect()
            return !rows.isEmpty
        }
        guard created else {
            throw StoreError(.limitReached, "the app has \(Self.limit) webhook endpoints, the most it may have: remove one first", field: "url")
        }
        guard let endpoint = try await self.endpoint(appID: appID, id: id) else {
            throw StoreError(.notFound, "the webhook endpoint was removed as it was made", field: "webhookId")
        }
        return (endpoint, secret)
    }

    /// The app's endpoints, oldest first.
    package func list(appID: Int64) async throws -> [WebhookEndpoint] {
        try await self.endpoints(appID: appID, id: nil)
    }

    /// One of the app's endpoints, or `nil` when it has none of that id.
    package func endpoint(appID: Int64, id: UUID) async throws -> WebhookEndpoint? {
        try await self.endpoints(appID: appID, id: id).first
    }

    /// Changes an endpoint. Enabling it, or giving it another URL, makes it due at once rather than after the
    /// backoff of earlier failures. Events written while it is disabled are never delivered to it.
    /// - Returns: The endpoint as changed, or `nil` when the app has none of that id.
    package func update(appID: Int64, id: UUID, changes: Changes) async throws -> WebhookEndpoint? {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE webhook_endpoints SET
                enabled = coalesce(\(changes.enabled), enabled),
                event_types = coalesce(\(changes.events.map { $0.map(\.rawValue) })::text[], event_types),
                url = coalesce(\(changes.url?.text), url),
                next_attempt_at = CASE
                    WHEN (\(changes.enabled) AND NOT enabled) OR \(changes.url?.text) IS DISTINCT FROM url AND \(changes.url != nil)
                    THEN least(next_attempt_at, now()) ELSE next_attempt_at END,
                updated_at = now()
            WHERE app_id = \(appID) AND id = \(id)
            RETURNING id
            """,
            logger: self.logger
        )
        guard !rows.isEmpty else { return nil }
        return try await self.endpoint(appID: appID, id: id)
    }

    /// Removes an endpoint, with what it was still owed and what it gave up on.
    /// - Returns: Whether the app had it.
    package func delete(appID: Int64, id: UUID) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            "DELETE FROM webhook_endpoints WHERE app_id = \(appID) AND id = \(id) RETURNING id",
            logger: self.logger
        )
        return !rows.isEmpty
    }

    /// Gives an endpoint a new random secret. The one it replaces keeps signing deliveries beside it for
    /// ``rotationOverlap`` (a second `v1` in `Livecast-Signature`), so the receiver can move to the new one; the
    /// secret before that, if a rotation was still running, stops at once.
    /// - Returns: The endpoint and its new secret, which is never shown again; `nil` when the app has no endpoint of
    ///   that id.
    package func rotateSecret(appID: Int64, id: UUID, masterKey: MasterKey) async throws -> (endpoint: WebhookEndpoint, secret: WebhookSecret)? {
        let secret = WebhookSecret.random()
        let sealed = ByteBuffer(bytes: secret.sealed(for: id, with: masterKey))
        let rows = try await self.client.guardedQuery(
            """
            UPDATE webhook_endpoints SET
                previous_secret_sealed = secret_sealed,
                previous_secret_expires_at = now() + make_interval(secs => \(Int(Self.rotationOverlap.components.seconds))),
                secret_sealed = \(sealed),
                updated_at = now()
            WHERE app_id = \(appID) AND id = \(id)
            RETURNING id
            """,
            logger: self.logger
        )
        guard !rows.isEmpty, let endpoint = try await self.endpoint(appID: appID, id: id) else { return nil }
        return (endpoint, secret)
    }

    /// The deliveries an endpoint gave up on, oldest first: at most `limit`, after the id `after` (a page's last)
    /// when given.
    /// - Returns: `nil` when the app has no endpoint of that id.
    package func failedDeliveries(appID: Int64, id: UUID, after: Int64?, limit: Int) async throws -> [WebhookFailedDelivery]? {
        guard try await self.exists(appID: appID, id: id) else { return nil }
        let rows = try await self.client.guardedQuery(
            """
            SELECT d.id, event_json(e)::text, d.attempts, coalesce(d.failed_at, d.created_at), d.last_error
            FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
            WHERE d.endpoint_id = \(id) AND d.state = \(unescaped: WebhookDeliveryState.failed.sql) AND d.id > \(after ?? 0)
            ORDER BY d.id LIMIT \(limit)
            """,
            logger: self.logger
        )
        var deliveries: [WebhookFailedDelivery] = []
        for try await (deliveryID, json, attempts, failedAt, lastError) in rows.decode((Int64, String, Int, Date, String?).self) {
            let event = (try? JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))) ?? .null
            deliveries.append(WebhookFailedDelivery(id: deliveryID, event: event, attempts: attempts, failedAt: failedAt, lastError: lastError))
        }
        return deliveries
    }

    /// Owes an endpoint again every delivery it gave up on (pending, tried from scratch), and makes it due now.
    /// - Returns: How many deliveries are owed again; `nil` when the app has no endpoint of that id.
    package func replayFailed(appID: Int64, id: UUID) async throws -> Int? {
        let rows = try await self.client.guardedQuery(
            """
            WITH endpoint AS (
                UPDATE webhook_endpoints SET next_attempt_at = least(next_attempt_at, now())
                WHERE app_id = \(appID) AND id = \(id) RETURNING id
            ), replayed AS (
                UPDATE webhook_deliveries SET state = \(unescaped: WebhookDeliveryState.pending.sql), attempts = 0, failed_at = NULL, created_at = now()
                WHERE endpoint_id = (SELECT id FROM endpoint) AND state = \(unescaped: WebhookDeliveryState.failed.sql) RETURNING id
            )
            SELECT (SELECT count(*) FROM replayed)::int FROM endpoint
            """,
            logger: self.logger
        )
        for try await count in rows.decode(Int.self) { return count }
        return nil
    }

    private func exists(appID: Int64, id: UUID) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            "SELECT 1 FROM webhook_endpoints WHERE app_id = \(appID) AND id = \(id)",
            logger: self.logger
        )
        return !rows.isEmpty
    }

    /// The app's endpoints (the one of `id` only, when given), oldest first, with their delivery state.
    private func endpoints(appID: Int64, id: UUID?) async throws -> [WebhookEndpoint] {
        let rows = try await self.client.guardedQuery(
            """
            SELECT w.id, w.url, w.event_types, w.enabled, w.created_at, w.updated_at,
                CASE WHEN w.previous_secret_expires_at > now() THEN w.previous_secret_expires_at END,
                (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.state = \(unescaped: WebhookDeliveryState.pending.sql))::int,
                oldest.created_at, extract(epoch FROM now() - oldest.created_at)::bigint,
                (SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.state = \(unescaped: WebhookDeliveryState.failed.sql))::int,
                w.consecutive_failures, w.next_attempt_at, w.last_success_at, w.last_failure_at, w.last_failure
            FROM webhook_endpoints w
            LEFT JOIN LATERAL (
                SELECT d.created_at FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.state = \(unescaped: WebhookDeliveryState.pending.sql) ORDER BY d.id LIMIT 1
            ) oldest ON true
            WHERE w.app_id = \(appID) AND (\(id)::uuid IS NULL OR w.id = \(id))
            ORDER BY w.created_at, w.id
            """,
            logger: self.logger
        )
        var endpoints: [WebhookEndpoint] = []
        for try await row in rows {
            let cells = row.makeRandomAccess()
            endpoints.append(
                WebhookEndpoint(
                    id: try cells[0].decode(UUID.self),
                    url: try cells[1].decode(String.self),
                    events: try cells[2].decode([String].self),
                    enabled: try cells[3].decode(Bool.self),
                    createdAt: try cells[4].decode(Date.self),
                    updatedAt: try cells[5].decode(Date.self),
                    previousSecretExpiresAt: try cells[6].decode(Date?.self),
                    delivery: WebhookEndpoint.Delivery(
                        pending: try cells[7].decode(Int.self),
                        oldestPendingAt: try cells[8].decode(Date?.self),
                        oldestPendingAgeSeconds: try cells[9].decode(Int64?.self).map { max(0, $0) },
                        failed: try cells[10].decode(Int.self),
                        consecutiveFailures: try cells[11].decode(Int.self),
                        nextAttemptAt: try cells[12].decode(Date.self),
                        lastSuccessAt: try cells[13].decode(Date?.self),
                        lastFailureAt: try cells[14].decode(Date?.self),
                        lastFailure: try cells[15].decode(String?.self)
                    )
                )
            )
        }
        return endpoints
    }
}
