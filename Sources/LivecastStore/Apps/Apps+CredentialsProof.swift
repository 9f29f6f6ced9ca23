import PostgresNIO

/// Whether APNs has accepted a push of the app under its current credentials (`apps.apns_proven_at`, migration
/// `0033`): until then a batch of refusals may mean a wrong environment or key, whoever registered the tokens.
extension Apps {
    /// Whether APNs accepted a push of the app since its credentials were last set.
    package func credentialsProven(id: Int64) async throws -> Bool {
        let rows = try await self.client.guardedQuery("SELECT apns_proven_at IS NOT NULL FROM apps WHERE id = \(id)", logger: self.logger)
        for try await proven in rows.decode(Bool.self) { return proven }
        return false
    }

    /// Records that APNs accepted a push of the app (the first time only).
    package func recordCredentialsProven(id: Int64) async throws {
        try await self.client.guardedQuery(
            "UPDATE apps SET apns_proven_at = now() WHERE id = \(id) AND apns_proven_at IS NULL",
            logger: self.logger
        )
    }

    /// Forgets the proof: the app's signing key changed, and the new one has yet to be accepted.
    package func forgetCredentialsProof(id: Int64) async throws {
        try await self.client.guardedQuery("UPDATE apps SET apns_proven_at = NULL WHERE id = \(id)", logger: self.logger)
    }
}
