package import PostgresNIO

extension Outbox {
    /// Writes failed pushes as `deliveries` rows, in one statement.
    package func recordFailures(_ failures: [FailedPush], on connection: PostgresConnection) async throws {
        guard !failures.isEmpty else { return }
        try await connection.query(
            """
            INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
            SELECT update_id, kind, target, nullif(status, 0), reason, nullif(apns_id, '')
            FROM unnest(\(failures.map(\.updateID))::bigint[], \(failures.map(\.targetKind.rawValue))::text[], \(failures.map(\.target))::text[],
                        \(failures.map { $0.status ?? 0 })::int[], \(failures.map(\.reason))::text[], \(failures.map { $0.apnsID ?? "" })::text[])
                AS failure(update_id, kind, target, status, reason, apns_id)
            """,
            logger: self.logger
        )
    }

    /// Records a broadcast as a delivery (each is kept, successes too, under its request id); one that says APNs
    /// no longer has the channel (`channelGone`) marks it missing in the registry.
    /// - Parameters:
    ///   - failureReason: APNs' reason, `nil` for a broadcast it accepted.
    package func recordBroadcast(
        updateID: Int64,
        channelID: String,
        status: Int?,
        failureReason: String?,
        requestID: String?,
        channelGone: Bool,
        on connection: PostgresConnection
    ) async throws {
        try await connection.query(
            """
            INSERT INTO deliveries (update_id, target_kind, target, status, reason, apns_id)
            VALUES (\(updateID), \(unescaped: DeliveryTargetKind.channel.sql), \(channelID), \(status), \(failureReason), \(requestID))
            """,
            logger: self.logger
        )
        if channelGone {
            try await connection.query(
                "UPDATE channels SET state = \(unescaped: ChannelState.missing.sql) WHERE channel_id = \(channelID) AND state = \(unescaped: ChannelState.active.sql)",
                logger: self.logger
            )
        }
    }

    /// Records a broadcast as a delivery (``recordBroadcast(updateID:channelID:status:failureReason:requestID:channelGone:on:)``).
    package func recordBroadcast(_ delivery: BroadcastDelivery, on connection: PostgresConnection) async throws {
        try await self.recordBroadcast(
            updateID: delivery.updateID,
            channelID: delivery.channelID,
            status: delivery.status,
            failureReason: delivery.failureReason,
            requestID: delivery.requestID,
            channelGone: delivery.channelGone,
            on: connection
        )
    }

    /// Runs `body` holding the send locks of these targets shared on `connection` (see ``SendLocks``), and
    /// releases them whatever happens, so the pooled connection never goes back holding one.
    package func withSendLocks<Result>(
        _ namespace: Int32,
        _ ids: [Int64],
        on connection: PostgresConnection,
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await self.lockShared(namespace, ids, on: connection)
        do {
            let result = try await body()
            try await self.unlockShared(namespace, ids, on: connection)
            return result
        } catch {
            try? await self.unlockShared(namespace, ids, on: connection)
            throw error
        }
    }

    /// Takes the send locks of these targets shared on `connection`; ``unlockShared(_:_:on:)`` releases them.
    func lockShared(_ namespace: Int32, _ ids: [Int64], on connection: PostgresConnection) async throws {
        let keys = ids.map(SendLocks.key)
        try await connection.query("SELECT pg_advisory_lock_shared(\(namespace), key) FROM unnest(\(keys)::int[]) AS k(key)", logger: self.logger)
    }

    /// Releases the send locks ``lockShared(_:_:on:)`` took.
    func unlockShared(_ namespace: Int32, _ ids: [Int64], on connection: PostgresConnection) async throws {
        let keys = ids.map(SendLocks.key)
        try await connection.query("SELECT pg_advisory_unlock_shared(\(namespace), key) FROM unnest(\(keys)::int[]) AS k(key)", logger: self.logger)
    }
}
