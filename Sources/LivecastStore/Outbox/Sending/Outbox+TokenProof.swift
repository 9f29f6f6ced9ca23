package import PostgresNIO

extension Outbox {
    /// Marks update tokens proven: APNs accepted a push to them (migration `0033`).
    package func proveActivityTokens(_ tokenIDs: [Int64], on connection: PostgresConnection) async throws {
        guard !tokenIDs.isEmpty else { return }
        try await connection.query(
            "UPDATE activity_tokens SET unproven = false WHERE id = ANY(\(tokenIDs)) AND unproven",
            logger: self.logger
        )
    }

    /// Marks push-to-start tokens proven: APNs accepted a push to them (migration `0033`).
    package func provePushToStartTokens(_ tokenIDs: [Int64], on connection: PostgresConnection) async throws {
        guard !tokenIDs.isEmpty else { return }
        try await connection.query(
            "UPDATE push_to_start_tokens SET unproven = false WHERE id = ANY(\(tokenIDs)) AND unproven",
            logger: self.logger
        )
    }
}
