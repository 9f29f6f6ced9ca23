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

    /// Pushes to carry forward, each due after a first backoff (a deferred one at once; one awaiting proof once the
    /// app's credentials are proven, ``Outbox/owe(_:delays:updateID:appID:on:)``).
    func owed(_ targets: [OwedTarget]) -> [OwedPush] {
        targets.map { OwedPush($0, delay: $0.isDeferred ? 0 : self.retryPolicy.backoff(afterAttempts: 1)) }
    }

    /// Notes when owed pushes the store recorded come due, so the quick worker wakes for them.
    func noteDue(_ owed: [OwedPush]) {
        self.owedDue.note(delays: owed.filter { !$0.target.awaitsProof }.map(\.delay))
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

    /// Reports what the store recorded of a page (``FanOutSession/record(_:next:)``): its owed pushes' due times, the
    /// app's sending held, its credentials doubted, and the tokens invalidated.
    func report(_ record: PageRecord, _ recorded: PageRecorded, appID: Int64, tokens: TokenTable) {
        self.noteDue(record.owed)
        if let reason = record.holdReason { self.reportHeld(appID: appID, reason: reason) }
        if let doubt = record.credentialsDoubt, recorded.doubtIsNew { self.reportDoubt(appID: appID, reason: doubt) }
        DispatchMetrics.tokensInvalidated(recorded.invalidated, kind: tokens == .activityTokens ? "update" : "pushToStart")
    }

    /// Marks the unproven tokens APNs accepted a push to as proven: the invalidation guard judges them from now on.
    func prove(_ tokenIDs: [Int64], tokens: TokenTable, on connection: PostgresConnection) async throws {
        switch tokens {
        case .activityTokens: try await self.outbox.proveActivityTokens(tokenIDs, on: connection)
        case .pushToStartTokens: try await self.outbox.provePushToStartTokens(tokenIDs, on: connection)
        }
    }

    /// Applies APNs' verdicts on the tokens it refused (410 `Unregistered`, 400 `BadDeviceToken`).
    func applyInvalidations(_ invalidations: [TokenInvalidation], appID: Int64, tokens: TokenTable) async throws {
        let invalidated = try await self.outbox.applyInvalidations(invalidations, appID: appID, tokens: tokens)
        DispatchMetrics.tokensInvalidated(invalidated, kind: tokens == .activityTokens ? "update" : "pushToStart")
    }

    /// Holds an app's sending, for `reason`, until an operator resumes it; counts it in
    /// `livecast_invalidation_guard_trips_total`.
    func holdSending(appID: Int64, reason: String) async throws {
        try await self.outbox.holdSending(appID: appID, reason: reason)
        self.reportHeld(appID: appID, reason: reason)
    }

    /// Puts an app's credentials in doubt, for `reason`, until a push is accepted or an admin resumes it: said once in
    /// the log (an error) and in `livecast_credentials_doubts_total`, and with the app's overview; nothing is held.
    func doubtCredentials(appID: Int64, reason: String) async throws {
        guard try await self.outbox.doubtCredentials(appID: appID, reason: reason) else { return }
        self.reportDoubt(appID: appID, reason: reason)
    }

    /// Keeps what was given up as dead letters (``Outbox/keep(_:appID:on:)``), and counts them in
    /// `livecast_dead_letters_total`.
    func deadLetter(_ letters: [DeadLetter], appID: Int64, on connection: PostgresConnection) async throws {
        guard !letters.isEmpty else { return }
        try await self.outbox.keep(letters, appID: appID, on: connection)
        self.reportDeadLetters(letters, appID: appID)
    }

    /// Says that an app's sending was held: an error in the log, and `livecast_invalidation_guard_trips_total`.
    func reportHeld(appID: Int64, reason: String) {
        self.logger.error("held an app's sending: the invalidation guard tripped", metadata: ["app": "\(appID)", "reason": "\(reason)"])
        Counter(label: "livecast_invalidation_guard_trips_total").increment()
    }

    /// Says that an app's credentials were put in doubt: an error in the log, and `livecast_credentials_doubts_total`.
    func reportDoubt(appID: Int64, reason: String) {
        self.logger.error(
            "APNs refuses an app's client-registered tokens and has accepted none of its pushes: a wrong environment or key?",
            metadata: ["app": "\(appID)", "reason": "\(reason)"]
        )
        Counter(label: "livecast_credentials_doubts_total").increment()
    }

    /// Says that pushes were given up as dead letters: a warning in the log, and `livecast_dead_letters_total`.
    func reportDeadLetters(_ letters: [DeadLetter], appID: Int64) {
        self.logger.warning(
            "gave up pushes as dead letters",
            metadata: ["count": "\(letters.count)", "reasons": "\(Set(letters.map(\.reason)).sorted())", "app": "\(appID)"]
        )
        Counter(label: "livecast_dead_letters_total").increment(by: letters.count)
    }
}
