import PostgresNIO

/// Whether APNs has accepted a push of the app under its current credentials (`apps.apns_proven_at`, migration
/// `0033`): until then a batch of refusals may mean a wrong environment or key, whoever registered the tokens. The
/// pushes whose unproven tokens APNs refused meanwhile wait for the proof (`owed_pushes.awaits_proof`, `0042`).
extension Apps {
    /// Whether APNs accepted a push of the app since its credentials were last set.
    package func credentialsProven(id: Int64) async throws -> Bool {
        let rows = try await self.client.guardedQuery("SELECT apns_proven_at IS NOT NULL FROM apps WHERE id = \(id)", logger: self.logger)
        for try await proven in rows.decode(Bool.self) { return proven }
        return false
    }

    /// Records that APNs accepted a push of the app (the first time only), clears any doubt on its credentials, and
    /// makes the pushes that awaited the proof due at once, in one statement.
    package func recordCredentialsProven(id: Int64) async throws {
        try await self.client.guardedQuery(
            """
            WITH proven AS (
                UPDATE apps SET apns_proven_at = coalesce(apns_proven_at, now()), credentials_doubt = NULL, credentials_doubt_at = NULL
                WHERE id = \(id) AND (apns_proven_at IS NULL OR credentials_doubt IS NOT NULL)
            )
            UPDATE owed_pushes SET awaits_proof = false, not_before = now() WHERE app_id = \(id) AND awaits_proof
            """,
            logger: self.logger
        )
    }

    /// Forgets the proof: the app's signing key changed, and the new one has yet to be accepted. What awaited the
    /// old key's proof goes again under the new key.
    package func forgetCredentialsProof(id: Int64) async throws {
        try await self.client.guardedQuery(
            """
            WITH forgotten AS (UPDATE apps SET apns_proven_at = NULL WHERE id = \(id))
            UPDATE owed_pushes SET awaits_proof = false, not_before = now() WHERE app_id = \(id) AND awaits_proof
            """,
            logger: self.logger
        )
    }

    /// Records why the app's credentials are in doubt (APNs refused a batch of unproven tokens and has accepted no
    /// push under them), unless they were proven meanwhile or are in doubt already.
    /// - Returns: Whether this made the doubt (so that it is said once, not for every batch).
    package func doubtCredentials(id: Int64, reason: String) async throws -> Bool {
        let rows = try await self.client.guardedQuery(
            """
            UPDATE apps SET credentials_doubt = \(reason), credentials_doubt_at = now()
            WHERE id = \(id) AND apns_proven_at IS NULL AND credentials_doubt IS NULL
            RETURNING id
            """,
            logger: self.logger
        )
        return !rows.isEmpty
    }
}
