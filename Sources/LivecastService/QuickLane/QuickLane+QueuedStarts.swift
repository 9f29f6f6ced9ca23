import APNs
import Foundation
import LivecastCore
import LivecastStore
import PostgresNIO

extension QuickLane {
    /// Sends one app's claimed queued starts (deferred starts and renewals), one per device: each is judged
    /// (``QueuedStartVerdict``), rebuilt from its feed (``QueuedStartPush``), and sent only if its device's budget has
    /// room now (``Outbox/spendStartBudget(_:appID:budget:on:)``); the rest wait until it does, or are given up.
    /// APNs' answers are recorded as a page's are (failures, token verdicts, proofs, the invalidation guard), and every
    /// claim is settled in one statement.
    func sendQueuedStarts(_ claims: [QueuedStartClaim], appID: Int64, app: AppClient) async throws {
        let (judged, pushes) = Self.prepare(claims, now: Int(Date().timeIntervalSince1970))
        let outcomes = try await self.tools.database.withGuardedConnection { connection in
            let waits = try await self.tools.outbox.spendStartBudget(
                pushes.map { ($0.claim.deviceID, $0.claim.timestamp) },
                appID: appID,
                budget: self.startBudget,
                on: connection
            )
            var outcomes = judged
            for push in pushes {
                guard let wait = waits[push.claim.deviceID] else { continue }
                // No room: due when the oldest start leaves the window. Room, but a newer start reached the device
                // since the claim: rebuilt at once with a newer timestamp.
                let fate: QueuedStartOutcome.Fate =
                    wait > .zero ? .awaitingRoom(wait) : .later(Self.rebuildPause, reason: Self.newerStartSent)
                outcomes.append(QueuedStartOutcome(push.claim, fate))
            }
            outcomes += try await self.send(pushes.filter { waits[$0.claim.deviceID] == nil }, appID: appID, app: app, on: connection)
            try await self.tools.outbox.settle(outcomes, on: connection)
            return outcomes
        }
        DispatchMetrics.queuedStarts(outcomes)
    }

    /// Judges each claim: the outcomes of those that do not go out now, and the pushes of those that may.
    private static func prepare(_ claims: [QueuedStartClaim], now: Int) -> (outcomes: [QueuedStartOutcome], pushes: [QueuedStartPush]) {
        var outcomes: [QueuedStartOutcome] = []
        var pushes: [QueuedStartPush] = []
        for claim in claims {
            switch QueuedStartVerdict.judge(claim, now: now) {
            case .drop(let reason):
                outcomes.append(QueuedStartOutcome(claim, .dropped(reason: reason)))
            case .later(let delay, let reason):
                outcomes.append(QueuedStartOutcome(claim, .later(delay, reason: reason)))
            case .send:
                guard let token = claim.token else { continue }
                do {
                    pushes.append(try QueuedStartPush(claim, token: token, now: now))
                } catch {
                    outcomes.append(QueuedStartOutcome(claim, .dropped(reason: "InvalidPayload: \(error.message)")))
                }
            }
        }
        return (outcomes, pushes)
    }

    /// Why a queued start is rebuilt: a newer start reached its device first.
    static let newerStartSent = "NewerStartSent"
    /// The least wait before a queued start is claimed again.
    static let rebuildPause = Duration.milliseconds(200)

    /// Sends the pushes once and sorts APNs' answers into outcomes: delivered ones are sent; ones APNs asks to retry
    /// wait the retry backoff; refused ones are given up, their tokens' verdicts applied.
    private func send(
        _ pushes: [QueuedStartPush],
        appID: Int64,
        app: AppClient,
        on connection: PostgresConnection
    ) async throws -> [QueuedStartOutcome] {
        guard !pushes.isEmpty else { return [] }
        let delivery = await self.tools.sender.deliver(pushes.map(\.target), tokens: .pushToStartTokens, app: app, priority: .immediately)
        let byClaim = Dictionary(uniqueKeysWithValues: pushes.map { ($0.claim.id, $0) })
        // Recorded as a page's are, in one call; what APNs asks to retry waits as a queued start, not as an owed push.
        var record = PageRecord()
        record.failures = delivery.failures.compactMap { failure in
            byClaim[failure.ownerID].flatMap { push in (push.claim.updateID ?? push.claim.feed.latestUpdateID).map(failure.failedPush(of:)) }
        }
        record.invalidations = delivery.invalidations
        record.proven = delivery.proven
        record.holdReason = delivery.guardReason
        record.credentialsDoubt = delivery.credentialsDoubt
        let recorded = try await self.tools.outbox.record(record, of: nil, appID: appID, tokens: .pushToStartTokens, on: connection)
        self.tools.recorder.report(record, recorded, appID: appID, tokens: .pushToStartTokens)
        var outcomes: [QueuedStartOutcome] = []
        for claimID in delivery.delivered {
            guard let push = byClaim[claimID] else { continue }
            outcomes.append(QueuedStartOutcome(push.claim, .sent(timestamp: push.claim.timestamp, tokenID: push.token.rowID)))
        }
        for owed in delivery.owed {
            guard let push = byClaim[owed.id] else { continue }
            // A token only a client key vouches for, refused before the app's credentials are proven: tried again
            // much later, by when a push has proven them (or its deadline gives it up).
            let delay =
                owed.awaitsProof
                ? RetryPolicy.unusableKeyPause : Duration.seconds(self.tools.recorder.retryPolicy.backoff(afterAttempts: push.claim.attempts))
            outcomes.append(QueuedStartOutcome(push.claim, .later(delay, reason: owed.reason)))
        }
        for failure in delivery.failures {
            guard let push = byClaim[failure.ownerID] else { continue }
            outcomes.append(QueuedStartOutcome(push.claim, .dropped(reason: failure.reason)))
        }
        return outcomes
    }

    /// Puts back an app's claimed queued starts for a minute: its signing key cannot be opened.
    func holdBack(_ claims: [QueuedStartClaim], reason: String) async throws {
        guard !claims.isEmpty else { return }
        try await self.tools.database.withGuardedConnection { connection in
            try await self.tools.outbox.settle(
                claims.map { QueuedStartOutcome($0, .later(RetryPolicy.unusableKeyPause, reason: reason)) },
                on: connection
            )
        }
    }
}
