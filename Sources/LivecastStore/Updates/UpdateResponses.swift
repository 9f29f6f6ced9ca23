import Logging
import PostgresNIO

/// The answers the API gave for accepted updates (`updates.response`), so that a request retried with the same
/// `Idempotency-Key` gets the first answer again, byte for byte, and nothing else happens.
public struct UpdateResponses: Sendable {
    private let client: PostgresClient
    private let logger: Logger

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Keeps the answer given for an update; an answer already kept is not replaced.
    public func record(_ response: String, updateID: Int64) async throws {
        try await self.client.guardedQuery(
            "UPDATE updates SET response = \(response) WHERE id = \(updateID) AND response IS NULL",
            logger: self.logger
        )
    }

    /// The answer kept for the app's update (in the outbox or scheduled) with this idempotency key on the same route
    /// and target, if there is one.
    /// - Throws: ``StoreError`` `idempotencyKeyReused` when that request had another body.
    public func response(appID: Int64, idempotencyKey: IdempotencyKey) async throws -> String? {
        let rows = try await self.client.guardedQuery(
            """
            SELECT response, idempotency_fingerprint FROM updates
            WHERE app_id = \(appID) AND idempotency_scope = \(idempotencyKey.scope) AND idempotency_key = \(idempotencyKey.key)
                AND response IS NOT NULL
            UNION ALL
            SELECT response, idempotency_fingerprint FROM scheduled_updates
            WHERE app_id = \(appID) AND idempotency_scope = \(idempotencyKey.scope) AND idempotency_key = \(idempotencyKey.key)
                AND response IS NOT NULL
            LIMIT 1
            """,
            logger: self.logger
        )
        for try await (response, fingerprint) in rows.decode((String, String?).self) {
            try idempotencyKey.checkSameRequest(as: fingerprint)
            return response
        }
        return nil
    }
}
