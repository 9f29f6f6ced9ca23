import LivecastStore
import Logging
import Metrics
import PostgresNIO

/// What both lanes record of APNs' answers, beyond the outbox's own statements: pushes carried forward with the
/// retry backoff (and the wake of the quick worker when they are due), APNs' verdicts on tokens, an app's sending
/// held by the invalidation guard, and dead letters, with their metrics and log lines.
struct PushRecorder: Sendable {
    let outbox: Outbox
    let database: PostgresClient
    let retryPolicy: RetryPolicy
    let owedDue: OwedDue
    let logger: Logger

    /// Carries pushes forward: owed to their targets, due after a first backoff (a deferred one at once; one awaiting
    /// proof once the app's credentials are proven), given up at their deadline
    /// (``Outbox/owe(_:delays:updateID:appID:on:)``).
    func owe(_ targets: [OwedTarget], updateID: Int64, appID: Int64, on connection: PostgresConnection) async throws {
        guard !targets.isEmpty else { return }
        let delays = targets.map { $0.isDeferred ? 0 : self.retryPolicy.backoff(afterAttempts: 1) }
        try await self.outbox.owe(targets, delays: delays, updateID: updateID, appID: appID, on: connection)
        self.owedDue.note(delays: zip(targets, delays).filter { !$0.0.awaitsProof }.map(\.1))
    }

    /// Owed pushes sent again that APNs still asks to retry later: due again after a longer backoff.
    /// One awaiting proof is due once the app's credentials are proven.
    func retry(_ retries: [(claim: OwedClaim, status: Int?, reason: String, awaitsProof: Bool)], on connection: PostgresConnection) async throws {
        guard !retries.isEmpty else { return }
        let delayed = retries.map {
            OwedRetry(
                claim: $0.claim,
                status: $0.status,
                reason: $0.reason,
                delay: self.retryPolicy.backoff(afterAttempts: $0.claim.attempts + 1),
                awaitsProof: $0.awaitsProof
            )
        }
        try await self.outbox.retry(delayed, on: connection)
        self.owedDue.note(delays: delayed.filter { !$0.awaitsProof }.map(\.delay))
    }

    /// Writes a page's failures (one statement), carries its owed pushes forward, and applies APNs' verdicts on the
    /// tokens it refused.
    func record(_ delivery: PageDelivery, updateID: Int64, appID: Int64, tokens: TokenTable, on connection: PostgresConnection) async throws {
        if let reason = delivery.guardReason { try await self.holdSending(appID: appID, reason: reason) }
        if let doubt = delivery.credentialsDoubt { try await self.doubtCredentials(appID: appID, reason: doubt) }
        try await self.owe(delivery.owed, updateID: updateID, appID: appID, on: connection)
        try await self.outbox.recordFailures(delivery.failures.map { $0.failedPush(of: updateID) }, on: connection)
        try await self.applyInvalidations(delivery.invalidations, appID: appID, tokens: tokens)
        try await self.prove(delivery.proven, tokens: tokens, on: connection)
    }

    /// Marks the unproven tokens APNs accepted a push to as proven: the invalidation guard judges them from now on.
    func prove(_ tokenIDs: [Int64], tokens: TokenTable, on connection: PostgresConnection) async throws {
        switch tokens {
        case .activityTokens: try await self.outbox.proveActivityTokens(tokenIDs, on: connection)
        case .pushToStartTokens: try await self.outbox.provePushToStartTokens(tokenIDs, on: connection)
        }
    }

    /// Applies APNs' verdicts on the tokens it refused (410 `Unregistered`, 400 `BadDeviceToken`).
    func applyInvalidations(_ invalidations: [PageDelivery.Invalidation], appID: Int64, tokens: TokenTable) async throws {
        var invalidated = 0
        for invalidation in invalidations {
            switch tokens {
            case .activityTokens:
                invalidated +=
                    try await Activities(client: self.database, logger: self.logger)
                    .invalidateToken(id: invalidation.tokenID, reason: invalidation.reason, invalidSinceMillis: invalidation.invalidSinceMillis)
                    ? 1 : 0
            case .pushToStartTokens:
                invalidated +=
                    try await PushToStartTokens(client: self.database, logger: self.logger).invalidate(
                        appID: appID,
                        token: invalidation.token,
                        reason: PushToStartTokens.InvalidationReason(rawValue: invalidation.reason) ?? .unregistered,
                        invalidSinceMillis: invalidation.invalidSinceMillis
                    ) ? 1 : 0
            }
        }
        DispatchMetrics.tokensInvalidated(invalidated, kind: tokens == .activityTokens ? "update" : "pushToStart")
    }

    /// Holds an app's sending, for `reason`, until an operator resumes it; counts it in
    /// `livecast_invalidation_guard_trips_total`.
    func holdSending(appID: Int64, reason: String) async throws {
        try await Apps(client: self.database, masterKey: nil, logger: self.logger).holdSending(id: appID, reason: reason)
        self.logger.error("held an app's sending: the invalidation guard tripped", metadata: ["app": "\(appID)", "reason": "\(reason)"])
        Counter(label: "livecast_invalidation_guard_trips_total").increment()
    }

    /// Puts an app's credentials in doubt, for `reason`, until a push is accepted or an admin resumes it: said once in
    /// the log (an error) and in `livecast_credentials_doubts_total`, and with the app's overview; nothing is held.
    func doubtCredentials(appID: Int64, reason: String) async throws {
        guard try await Apps(client: self.database, masterKey: nil, logger: self.logger).doubtCredentials(id: appID, reason: reason) else { return }
        self.logger.error(
            "APNs refuses an app's client-registered tokens and has accepted none of its pushes: a wrong environment or key?",
            metadata: ["app": "\(appID)", "reason": "\(reason)"]
        )
        Counter(label: "livecast_credentials_doubts_total").increment()
    }

    /// Keeps what was given up as dead letters (``Outbox/keep(_:appID:on:)``), and counts them in
    /// `livecast_dead_letters_total`.
    func deadLetter(_ letters: [DeadLetter], appID: Int64, on connection: PostgresConnection) async throws {
        guard !letters.isEmpty else { return }
        try await self.outbox.keep(letters, appID: appID, on: connection)
        self.logger.warning(
            "gave up pushes as dead letters",
            metadata: ["count": "\(letters.count)", "reasons": "\(Set(letters.map(\.reason)).sorted())", "app": "\(appID)"]
        )
        Counter(label: "livecast_dead_letters_total").increment(by: letters.count)
    }
}
