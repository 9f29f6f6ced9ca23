import Logging
import PostgresNIO

/// Starts, updates and ends sent with `sendAt`: kept as they were posted until then, and then checked and put in
/// the outbox as if posted at that moment (``takeNextDue(_:)``). Each has an id from the updates' sequence.
package struct ScheduledUpdates: DatabaseBacked {
    /// A request kept for later.
    package struct Entry: Sendable, Hashable {
        package var id: Int64
        package var appID: Int64
        /// `feedStart`, `feedUpdate`, `feedEnd`, `activityUpdate` or `activityEnd`.
        package var route: String
        /// The feed key or activity id.
        package var target: String
        /// The request's body.
        package var body: [UInt8]
        /// UNIX seconds.
        package var sendAt: Int64
    }

    /// Where a scheduled request stands.
    package struct Status: Sendable, Hashable, Encodable {
        package var id: Int64
        package var status: ScheduledStatus
        package var sendAt: Int64
        package var updateID: Int64?
        package var refusal: String?

        /// The API's names (`GET` or `DELETE /v1/apps/{bundleId}/updates/{updateId}` of one not in the outbox): its
        /// own id is the `updateId` the caller was given.
        private enum CodingKeys: String, CodingKey {
            case id = "updateId"
            case status, sendAt
            case refusal = "reason"
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.id, forKey: .id)
            try container.encode(self.status.rawValue, forKey: .status)
            try container.encode(self.sendAt, forKey: .sendAt)
            try container.encodeIfPresent(self.refusal, forKey: .refusal)
        }
    }

    package let database: Database

    package init(database: Database) { self.database = database }

    /// Keeps a request until `sendAt`, and the answer given to it when it has an idempotency key, in one statement: a
    /// retry always finds that answer (``UpdateResponses/response(appID:idempotencyKey:)``, and the outbox's
    /// transaction after `sendAt`: ``OutboxStatements/replays(_:on:logger:)``).
    /// - Parameters:
    ///   - keyID: The API key that asked for it, which keeps it (`key_id`): revoking the key counts it, and can cancel
    ///     it, while it waits.
    ///   - unnumberedAnswer: The answer with 0 for its id (its JSON's only `"updateId":0`, since a JSON string holds
    ///     its quotation marks escaped), which the insert numbers with the id it draws; `nil` without a key.
    /// - Returns: Its id, and the answer as kept.
    /// - Throws: ``StoreError`` `conflict` when a request with the same idempotency key was kept meanwhile.
    package func schedule(
        appID: Int64,
        route: String,
        target: String,
        body: [UInt8],
        sendAt: Int,
        keyID: Int64,
        idempotencyKey: IdempotencyKey?,
        unnumberedAnswer: String?
    ) async throws -> (id: Int64, answer: String?) {
        do {
            let rows = try await self.client.guardedQuery(
                """
                WITH drawn AS (SELECT nextval(pg_get_serial_sequence('updates', 'id')) AS id)
                INSERT INTO scheduled_updates (id, app_id, route, target, body, send_at, key_id, idempotency_key, idempotency_scope,
                                               idempotency_fingerprint, response)
                SELECT drawn.id, \(appID), \(route), \(target), \(String(decoding: body, as: UTF8.self)), to_timestamp(\(sendAt)), \(keyID),
                       \(idempotencyKey?.key), \(idempotencyKey?.scope), \(idempotencyKey?.fingerprint),
                       replace(\(unnumberedAnswer), '"updateId":0', '"updateId":' || drawn.id)
                FROM drawn
                RETURNING id, response
                """,
                logger: self.logger
            )
            for try await (id, answer) in rows.decode((Int64, String?).self) { return (id, answer) }
        } catch  where StoreError.isUniqueViolation(error) {
            throw StoreError(.conflict, "a request with this idempotency key is in progress; retry")
        }
        throw StoreError(.notFound, "the scheduled update vanished")
    }

    /// Where one of an app's scheduled requests stands, or `nil`.
    package func status(id: Int64, appID: Int64) async throws -> Status? {
        let rows = try await self.client.guardedQuery(
            """
            SELECT status, extract(epoch FROM send_at)::bigint, update_id, refusal FROM scheduled_updates
            WHERE id = \(id) AND app_id = \(appID)
            """,
            logger: self.logger
        )
        for try await (status, sendAt, updateID, refusal) in rows.decode((ScheduledStatus, Int64, Int64?, String?).self) {
            return Status(id: id, status: status, sendAt: sendAt, updateID: updateID, refusal: refusal)
        }
        return nil
    }

    /// Cancels a scheduled request that has not been sent.
    /// - Returns: Where it stands afterwards (`cancelled`), or before when it could no longer be cancelled; `nil`
    ///   when the app has no such scheduled request.
    package func cancel(id: Int64, appID: Int64) async throws -> Status? {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE scheduled_updates SET status = \(unescaped: ScheduledStatus.cancelled.sql), done_at = now()
            WHERE id = \(id) AND app_id = \(appID) AND status = \(unescaped: ScheduledStatus.scheduled.sql)
            RETURNING id
            """,
            logger: self.logger
        )
        for try await _ in rows.decode(Int64.self) { break }
        return try await self.status(id: id, appID: appID)
    }

    /// Takes the oldest due request and hands it to `send`, which puts it in the outbox (its update's id) or
    /// refuses it (why). The request stays locked until its outcome is kept, so no two instances send it; one that
    /// `send` throws for stays scheduled.
    /// - Returns: Whether a request was due.
    package func takeNextDue(_ send: @escaping @Sendable (Entry) async throws -> Result<Int64, Refusal>) async throws -> Bool {
        try await self.client.withGuardedTransaction(logger: self.logger) { connection in
            let rows = try await connection.query(
                """
                SELECT id, app_id, route, target, body, extract(epoch FROM send_at)::bigint FROM scheduled_updates
                WHERE status = \(unescaped: ScheduledStatus.scheduled.sql) AND send_at <= now()
                ORDER BY send_at, id LIMIT 1
                FOR UPDATE SKIP LOCKED
                """,
                logger: self.logger
            )
            var due: Entry?
            for try await (id, appID, route, target, body, sendAt) in rows.decode((Int64, Int64, String, String, String, Int64).self) {
                due = Entry(id: id, appID: appID, route: route, target: target, body: Array(body.utf8), sendAt: sendAt)
            }
            guard let entry = due else { return false }
            switch try await send(entry) {
            case .success(let updateID):
                try await connection.query(
                    "UPDATE scheduled_updates SET status = \(unescaped: ScheduledStatus.accepted.sql), update_id = \(updateID), done_at = now() WHERE id = \(entry.id)",
                    logger: self.logger
                )
            case .failure(let refusal):
                try await connection.query(
                    "UPDATE scheduled_updates SET status = \(unescaped: ScheduledStatus.refused.sql), refusal = \(refusal.reason), done_at = now() WHERE id = \(entry.id)",
                    logger: self.logger
                )
            }
            return true
        }
    }

    /// Why a scheduled request was refused when its time came: the API error it got then.
    package struct Refusal: Error, Sendable, Hashable {
        package var reason: String

        package init(_ reason: String) {
            self.reason = reason
        }
    }
}

extension ScheduledUpdates {
    /// Whether the app has the feed (for routes starting with `feed`) or the activity a request is for.
    package func targetExists(appID: Int64, route: String, target: String) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            SELECT CASE WHEN \(route) LIKE 'feed%'
                        THEN EXISTS (SELECT 1 FROM feeds WHERE app_id = \(appID) AND feed_key = \(target))
                        ELSE EXISTS (SELECT 1 FROM activities WHERE app_id = \(appID) AND activity_key = \(target)) END
            """,
            logger: self.logger
        )
        for try await exists in rows.decode(Bool.self) { return exists }
        return false
    }
}
