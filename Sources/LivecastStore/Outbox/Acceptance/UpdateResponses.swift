import Logging
import PostgresNIO

/// The answers the API gave for accepted updates (`updates.response`, kept by the accepting transaction:
/// ``AcceptedUpdate/answer``) and scheduled ones, so that a request retried with the same `Idempotency-Key` gets the
/// first answer again, byte for byte, and nothing else happens.
package struct UpdateResponses: DatabaseBacked {
    package let database: Database

    package init(database: Database) { self.database = database }

    /// Keeps the answers of new updates that came with an idempotency key with their rows (``AcceptedUpdate/answer``),
    /// in the transaction that wrote them on `connection`: one statement for them all, and none for no update.
    static func keep(_ accepted: [AcceptedUpdate], on connection: PostgresConnection, logger: Logger) async throws {
        guard !accepted.isEmpty else { return }
        try await connection.query(
            """
            UPDATE updates u SET response = k.response
            FROM unnest(\(accepted.map(\.updateID))::bigint[], \(accepted.map(\.answer))::text[]) AS k(id, response)
            WHERE u.id = k.id
            """,
            logger: logger
        )
    }

    /// The answer kept for the app's update (in the outbox or scheduled) with this idempotency key on the same route
    /// and target, if there is one: the look-up the outbox's transactions make (``OutboxStatements/replays(_:on:logger:)``),
    /// for a request that is to be scheduled or was refused before the outbox.
    /// - Throws: ``StoreError`` `idempotencyKeyReused` when that request had another body.
    package func response(appID: Int64, idempotencyKey: IdempotencyKey) async throws -> String? {
        try await self.client.withGuardedConnection(logger: self.logger) { [logger] connection in
            try await OutboxStatements.replay(appID: appID, idempotencyKey: idempotencyKey, on: connection, logger: logger)?.answer
        }
    }
}
