import APNs
import Foundation
import LivecastCore
import LivecastStore

/// What to write for one claimed standalone activity update.
struct ActivityVerdict: Sendable {
    var updateID: Int64
    /// `sent` or `failed`; `nil` to try again after `retryAfter` seconds.
    var status: OutboxStatus?
    var retryAfter: Double = 0
    var target: String = ""
    /// What `target` is.
    var targetKind: DeliveryTargetKind = .device
    /// The push's `apns-id` (a device push's ``PushID``), kept with a failure.
    var apnsID: String?
    var failure: (status: Int?, reason: String)?
    /// Given up: kept as a dead letter too.
    var deadLetter: DeadLetter?
    /// APNs' verdict on the token, applied after the send locks are released.
    var invalidation: TokenInvalidation?
    /// The unproven update token APNs accepted the push to: proven from now on.
    var provenTokenID: Int64?

    /// How the update's claim ends.
    var settlement: ActivitySettlement {
        ActivitySettlement(updateID: self.updateID, status: self.status, retryAfter: self.retryAfter, isDeadLetter: self.deadLetter != nil)
    }

    /// The `deliveries` row of its failed push, if it failed.
    var failedPush: FailedPush? {
        self.failure.map {
            FailedPush(
                updateID: self.updateID,
                targetKind: self.targetKind,
                target: self.target,
                status: $0.status,
                reason: $0.reason,
                apnsID: self.apnsID
            )
        }
    }
}

extension ActivityVerdict {
    /// Writes a claim's fate into its verdict: sent; failed, with the push's failure; due again after a wait; or
    /// given up as a dead letter, with the failure.
    /// - Parameter status: APNs' status, if it answered; with the reason, the failure's.
    mutating func apply(_ outcome: ClaimOutcome, to claim: ActivityClaim, status: Int?, reason: String) {
        switch outcome {
        case .release(let released):
            self.status = released
            if released == .failed { self.failure = (status, reason) }
        case .putBack(let delay, _):
            self.retryAfter = delay.inSeconds
        case .giveUp(let reason):
            self.status = .failed
            self.failure = (status, reason)
            self.deadLetter = claim.deadLetter(reason: reason)
        case .hold:
            break
        }
    }
}

extension QuickLane {
    /// What APNs' outcome means for a claimed update: sent, failed, or put back with backoff while before its
    /// deadline (after it, given up as a dead letter).
    /// - Parameters:
    ///   - retryingAnyway: Retry it as APNs had asked, whatever the answer (the invalidation guard tripped, or the
    ///     token awaits the app's proof).
    ///   - pause: How long it waits before its next try, instead of the backoff.
    func verdict(
        _ claim: ActivityClaim,
        _ outcome: APNsOutcome,
        target: String,
        targetKind: DeliveryTargetKind,
        retryingAnyway: Bool = false,
        pause: Duration? = nil
    ) -> ActivityVerdict {
        var verdict = ActivityVerdict(updateID: claim.updateID, target: target, targetKind: targetKind)
        if targetKind == .device {
            verdict.apnsID = PushID(updateID: claim.updateID, targetKind: .activity, targetID: claim.activityID)?.uuidString
        }
        let happening = ClaimOutcome.Happening.answered(
            retryingAnyway ? .retryLater : outcome.classification,
            reason: outcome.failureReason,
            retryIn: pause ?? .seconds(self.tools.recorder.retryPolicy.backoff(afterAttempts: claim.attempts)),
            now: Date().timeIntervalSince1970,
            deadline: claim.deadline
        )
        verdict.apply(ClaimOutcome(happening), to: claim, status: outcome.status, reason: outcome.failureReason)
        return verdict
    }

    /// Puts back the claimed updates of an app whose signing key cannot be opened, for a minute; past their
    /// deadline they are given up as dead letters.
    func holdBack(_ claims: [ActivityClaim], reason: String) async throws {
        let now = Date().timeIntervalSince1970
        try await self.recordActivityVerdicts(
            claims.map { claim in
                var verdict = ActivityVerdict(updateID: claim.updateID)
                let pastDeadline = now + RetryPolicy.unusableKeyPause.inSeconds >= claim.deadline
                verdict.apply(ClaimOutcome(.appUnusable(pastDeadline: pastDeadline)), to: claim, status: nil, reason: reason)
                return verdict
            },
            appID: claims.first?.appID ?? 0
        )
    }

    /// Writes a batch's verdicts: APNs' verdicts on tokens, then finished updates, retries, failures, dead letters
    /// and proven tokens, one statement each.
    func recordActivityVerdicts(_ verdicts: [ActivityVerdict], appID: Int64) async throws {
        try await self.tools.recorder.applyInvalidations(verdicts.compactMap(\.invalidation), appID: appID, tokens: .activityTokens)
        try await self.tools.database.withGuardedConnection { connection in
            try await self.tools.outbox.settle(verdicts.map(\.settlement), on: connection)
            try await self.tools.outbox.recordFailures(verdicts.compactMap(\.failedPush), on: connection)
            try await self.tools.recorder.deadLetter(verdicts.compactMap(\.deadLetter), appID: appID, on: connection)
            try await self.tools.recorder.prove(verdicts.compactMap(\.provenTokenID), tokens: .activityTokens, on: connection)
        }
    }
}
