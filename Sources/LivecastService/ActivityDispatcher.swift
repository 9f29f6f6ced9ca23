import APNs
import Foundation
import LivecastStore
import Logging
import PostgresNIO

/// Sends the outbox's pending updates for standalone activities: claims a batch with `FOR UPDATE SKIP LOCKED`
/// under a lease, sends it over the app's APNs client, and records each outcome.
///
/// Several dispatchers may run at once (in one process or many): a row is claimed by one of them; a claim whose
/// dispatcher died is taken again when its lease ends. Sending twice is harmless, since devices ignore a
/// timestamp that is not newer.
public struct ActivityDispatcher: Sendable {
    /// The APNs client and bundle id for an app.
    public typealias ClientForApp = @Sendable (Int64) async throws -> (client: APNsClient, bundleID: String)

    private let database: PostgresClient
    private let clientForApp: ClientForApp
    private let batchSize: Int
    private let lease: Int
    private let logger: Logger

    /// - Parameters:
    ///   - database: The database.
    ///   - clientForApp: The APNs client of an app's team and environment, and its bundle id.
    ///   - batchSize: Updates claimed at once. Defaults to 500.
    ///   - leaseSeconds: How long a claim holds before another dispatcher may take the row. Defaults to 60.
    ///   - logger: Logs what fails.
    public init(database: PostgresClient, clientForApp: @escaping ClientForApp, batchSize: Int = 500, leaseSeconds: Int = 60, logger: Logger) {
        self.database = database
        self.clientForApp = clientForApp
        self.batchSize = batchSize
        self.lease = leaseSeconds
        self.logger = logger
    }

    /// One claimed update.
    private struct Claim {
        var updateID: Int64
        var appID: Int64
        var tokenID: Int64?
        var token: String?
        var payload: String
        var priority: Int
        var attempts: Int
    }

    /// Claims, sends and records one batch. - Returns: how many updates it handled (0 when none were due).
    public func dispatchOnce() async throws -> Int {
        let claims = try await self.claim()
        guard !claims.isEmpty else { return 0 }
        for (appID, group) in Dictionary(grouping: claims, by: \.appID) {
            let (client, bundleID) = try await self.clientForApp(appID)
            let sendable = group.filter { $0.token != nil }
            let outcomes = await client.send(
                sendable.map { DevicePush(deviceToken: $0.token!, bundleID: bundleID, payload: Array($0.payload.utf8), priority: $0.priority) }
            )
            for (claim, outcome) in zip(sendable, outcomes) {
                try await self.record(outcome, for: claim)
            }
            for claim in group where claim.token == nil {
                try await self.finish(claim.updateID, status: "failed", sent: 0, failed: 1)
                try await self.deliveryFailure(claim.updateID, target: "", status: nil, reason: "NoLiveToken")
            }
        }
        return claims.count
    }

    private func claim() async throws -> [Claim] {
        try await self.database.withTransaction(logger: self.logger) { connection in
            let rows = try await connection.query(
                """
                SELECT u.id, u.app_id, t.id, t.token, u.payload, u.priority::int, u.attempts
                FROM updates u
                JOIN activities a ON a.id = u.activity_id
                LEFT JOIN activity_tokens t ON t.activity_id = a.id AND t.invalidated_at IS NULL
                WHERE u.status IN ('pending', 'dispatching') AND u.not_before <= now() AND u.activity_id IS NOT NULL
                  AND u.payload IS NOT NULL
                ORDER BY u.not_before, u.id
                LIMIT \(self.batchSize)
                FOR UPDATE OF u SKIP LOCKED
                """,
                logger: self.logger
            )
            var claims: [Claim] = []
            for try await (id, appID, tokenID, token, payload, priority, attempts) in rows.decode((Int64, Int64, Int64?, String?, String, Int, Int).self) {
                claims.append(Claim(updateID: id, appID: appID, tokenID: tokenID, token: token, payload: payload, priority: priority, attempts: attempts))
            }
            guard !claims.isEmpty else { return [] }
            try await connection.query(
                """
                UPDATE updates SET status = 'dispatching', attempts = attempts + 1, not_before = now() + make_interval(secs => \(Double(self.lease)))
                WHERE id = ANY(\(claims.map(\.updateID)))
                """,
                logger: self.logger
            )
            return claims
        }
    }

    private func record(_ outcome: APNsOutcome, for claim: Claim) async throws {
        switch outcome.classification {
        case .delivered:
            try await self.finish(claim.updateID, status: "sent", sent: 1, failed: 0)
        case .retryLater where claim.attempts + 1 < 8:
            // Exponential backoff with jitter: 2, 4, 8 … seconds, at most 5 minutes.
            let delay = min(pow(2.0, Double(claim.attempts + 1)), 300) * Double.random(in: 0.8...1.2)
            try await self.database.query(
                "UPDATE updates SET status = 'pending', not_before = now() + make_interval(secs => \(delay)) WHERE id = \(claim.updateID)",
                logger: self.logger
            )
        case .tokenInvalid:
            if let tokenID = claim.tokenID {
                _ = try await Activities(client: self.database, logger: self.logger).invalidateToken(
                    id: tokenID,
                    reason: outcome.reason?.rawValue ?? "invalid",
                    invalidSinceMillis: outcome.invalidSince.map(Int64.init)
                )
            }
            try await self.failed(claim, outcome)
        default:
            try await self.failed(claim, outcome)
        }
    }

    private func failed(_ claim: Claim, _ outcome: APNsOutcome) async throws {
        try await self.finish(claim.updateID, status: "failed", sent: 0, failed: 1)
        try await self.deliveryFailure(claim.updateID, target: claim.token ?? "", status: outcome.status, reason: outcome.reason?.rawValue ?? outcome.transportError?.code.rawValue)
    }

    private func finish(_ updateID: Int64, status: String, sent: Int, failed: Int) async throws {
        try await self.database.query(
            """
            UPDATE updates SET status = \(status), sent_count = sent_count + \(sent), failed_count = failed_count + \(failed), completed_at = now()
            WHERE id = \(updateID)
            """,
            logger: self.logger
        )
    }

    private func deliveryFailure(_ updateID: Int64, target: String, status: Int?, reason: String?) async throws {
        try await self.database.query(
            "INSERT INTO deliveries (update_id, target_kind, target, status, reason) VALUES (\(updateID), 'device', \(target), \(status), \(reason))",
            logger: self.logger
        )
    }
}
