import APNs
import LivecastStore
import Testing

@testable import LivecastService

/// A claim's fate from what happened to it: pure values, no PostgreSQL.
@Suite struct ClaimOutcomeTests {
    @Test func aClaimWithinItsAttemptsIsHeldAndOnePastThemIsGivenUp() {
        #expect(ClaimOutcome(.claimed(attempts: 1, limit: 8)) == .hold)
        #expect(ClaimOutcome(.claimed(attempts: 8, limit: 8)) == .hold)
        #expect(ClaimOutcome(.claimed(attempts: 9, limit: 8)) == .giveUp(reason: "NoProgress"))
    }

    @Test func anUnusableKeyPutsTheClaimBackAMinuteUntilItsDeadline() {
        #expect(ClaimOutcome(.appUnusable(pastDeadline: false)) == .putBack(after: .seconds(60), resettingAttempts: true))
        #expect(ClaimOutcome(.appUnusable(pastDeadline: true)) == .giveUp(reason: AppClients.unusableKeyReason))
    }

    @Test func aWalkEndsSentAndASplitOrALostClaimIsLeftAlone() {
        #expect(ClaimOutcome(.walked) == .release(.sent))
        #expect(ClaimOutcome(.split) == .hold)
        #expect(ClaimOutcome(.lost) == .hold)
    }

    @Test func aShutdownOrALostConnectionPutsItBackAtOnceAndAHeldAppResetsItsAttempts() {
        #expect(ClaimOutcome(.stoppedForShutdown) == .putBack(after: .zero, resettingAttempts: false))
        #expect(ClaimOutcome(.connectionLost) == .putBack(after: .zero, resettingAttempts: false))
        #expect(ClaimOutcome(.sendingHeld) == .putBack(after: .zero, resettingAttempts: true))
    }

    @Test func apnsAnswersAreReleasedRetriedBeforeTheDeadlineOrGivenUp() {
        func answered(_ classification: APNsOutcome.Classification, retryIn: Duration = .seconds(1), deadline: Double = 1_010) -> ClaimOutcome {
            ClaimOutcome(.answered(classification, reason: "Why", retryIn: retryIn, now: 1_000, deadline: deadline))
        }
        #expect(answered(.delivered) == .release(.sent))
        #expect(answered(.tokenInvalid) == .release(.failed))
        #expect(answered(.requestMustBeFixed) == .release(.failed))
        #expect(answered(.credentialsProblem) == .release(.failed))
        #expect(answered(.retryLater) == .putBack(after: .seconds(1), resettingAttempts: false))
        // A retry that would come at or after the deadline is given up instead, with APNs' reason.
        #expect(answered(.retryLater, retryIn: .seconds(10)) == .giveUp(reason: "Why"))
        #expect(answered(.retryLater, deadline: 999) == .giveUp(reason: "Why"))
    }
}
