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
    /// `device` or `channel`: what `target` is.
    var targetKind: String = "device"
    /// The push's `apns-id` (a device push's ``PushID``), kept with a failure.
    var apnsID: String?
    var failure: (status: Int?, reason: String)?
    /// Given up: kept as a dead letter too.
    var deadLetter: DeadLetter?
    /// APNs' verdict on the token, applied after the send locks are released.
    var invalidation: PageDelivery.Invalidation?
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
        targetKind: String,
        retryingAnyway: Bool = false,
        pause: Duration? = nil
    ) -> ActivityVerdict {
        var verdict = ActivityVerdict(updateID: claim.updateID, target: target, targetKind: targetKind)
        if targetKind == "device" {
            verdict.apnsID = PushID(updateID: claim.updateID, targetKind: .activity, targetID: claim.activityID)?.uuidString
        }
        switch retryingAnyway ? .retryLater : outcome.classification {
        case .delivered:
            verdict.status = .sent
        case .retryLater:
            let delay = pause?.inSeconds ?? self.tools.recorder.retryPolicy.backoff(afterAttempts: claim.attempts)
            if Date().timeIntervalSince1970 + delay < claim.deadline {
                verdict.retryAfter = delay
            } else {
                verdict.status = .failed
                verdict.failure = (outcome.status, outcome.failureReason)
                verdict.deadLetter = claim.deadLetter(reason: outcome.failureReason)
            }
        default:
            verdict.status = .failed
            verdict.failure = (outcome.status, outcome.failureReason)
        }
        return verdict
    }

    /// Puts back the claimed updates of an app whose signing key cannot be opened, for a minute; past their
    /// deadline they are given up as dead letters.
    func holdBack(_ claims: [ActivityClaim], reason: String) async throws {
        let now = Date().timeIntervalSince1970
        try await self.recordActivityVerdicts(
            claims.map { claim in
                guard now + RetryPolicy.unusableKeyPause.inSeconds >= claim.deadline else {
                    return ActivityVerdict(updateID: claim.updateID, retryAfter: RetryPolicy.unusableKeyPause.inSeconds)
                }
                return ActivityVerdict(
                    updateID: claim.updateID,
                    status: .failed,
                    failure: (nil, reason),
                    deadLetter: claim.deadLetter(reason: reason)
                )
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
