import APNs
import Foundation
import LivecastCore
import LivecastStore
import Logging

/// The service is shutting down: a fan-out stops at its checkpoint and goes back to the outbox.
struct StopAtCheckpoint: Error {}

/// Runs a feed's claimed fan-out: its channel's broadcast and a walk of its token-based followers (an update or an
/// end), or a walk of its push-to-start audience (a start), page by page, each page checkpointed. Followers beyond
/// one slice are split into slices, which any worker of any instance claims and walks the same way.
///
/// The store's ``FanOutSession`` holds the connection, the send lock and every statement; the runner sends, and keeps
/// the policy: the sort of a page's targets (``makeWay(for:kind:busy:updateID:)``), the invalidation guard
/// (``PageSender``), the retry delays (``PushRecorder``) and the claim's fate (``ClaimOutcome``).
struct FanOutRunner: Sendable {
    let tools: LaneTools
    /// Where claims and their sessions come from: the outbox (a counting wrapper in a test).
    let driver: any FanOutDriver
    /// Pages, slices and the start budget.
    let limits: FanOutLimits
    /// Claims in a row without a checkpoint before a fan-out is given up.
    let attempts: Int

    /// Sends a claimed fan-out to its end, then marks it sent; pushes APNs asked to retry stay owed to their
    /// targets. A lost claim stops it quietly (the new holder goes on from the checkpoint); a graceful shutdown
    /// puts it back at its checkpoint; an app whose signing key cannot be opened gets it back after a minute,
    /// until the retry deadline. One claimed too often without progress is given up as a dead letter.
    func run(_ claimed: FanOutClaim) async throws {
        let outcome = ClaimOutcome(.claimed(attempts: claimed.attempts, limit: self.attempts))
        guard outcome == .hold else {
            try await self.driver.withFanOutSession(claimed, limits: self.limits) { try await self.perform(outcome, on: $0) }
            return
        }
        let app: AppClient
        do {
            app = try await self.tools.appClients.client(forApp: claimed.appID)
        } catch let error as StoreError {
            if !claimed.pastDeadline {
                self.tools.logger.error("cannot send an app's fan-out", metadata: ["app": "\(claimed.appID)", "error": "\(error)"])
            }
            let outcome = ClaimOutcome(.appUnusable(pastDeadline: claimed.pastDeadline))
            try await self.driver.withFanOutSession(claimed, limits: self.limits) { try await self.perform(outcome, on: $0) }
            return
        }
        do {
            try await self.driver.withFanOutSession(claimed, limits: self.limits) { session in
                do {
                    try await self.perform(ClaimOutcome(try await self.walk(session, app: app)), on: session)
                } catch is StopAtCheckpoint {
                    try await self.perform(ClaimOutcome(.stoppedForShutdown), on: session)
                } catch is SendingHeld {
                    // Back to the outbox at its checkpoint, with its tries counted afresh: it waits for the app to resume.
                    try await self.perform(ClaimOutcome(.sendingHeld), on: session)
                }
            }
        } catch let lost as LostClaim {
            self.tools.logger.notice("stopped a fan-out another dispatcher took over", metadata: ["update": "\(lost.updateID)"])
        } catch  where StoreError.isConnectionLoss(error) {
            // Its connection went away (PostgreSQL restarted, say): back to the outbox at its checkpoint as soon as
            // the database answers again, instead of when its lease runs out.
            await self.releaseAfterConnectionLoss(claimed)
            throw error
        }
    }

    /// Walks a claim in its session: the channel's broadcast first (an update or end not yet split), then page after
    /// page, until the walk ends or the followers go to slices.
    /// - Returns: What happened: ``ClaimOutcome/Happening/walked`` or ``ClaimOutcome/Happening/split``.
    private func walk(_ session: any FanOutSession, app: AppClient) async throws -> ClaimOutcome.Happening {
        var step = try await session.begin()
        while true {
            switch step {
            case .broadcast(let channel, let inFlight):
                let record = await self.broadcast(session.claim, to: channel, inFlight: inFlight, app: app)
                step = try await session.recordChannel(record)
                self.tools.recorder.noteDue(record.owed)
            case .page(let page):
                guard !page.rowIDs.isEmpty else { return .walked }
                step = try await self.send(page, in: session, app: app)
            case .split:
                return .split
            case .walked:
                return .walked
            }
        }
    }

    /// Performs a claim's fate through its session; a held claim is left as it is.
    private func perform(_ outcome: ClaimOutcome, on session: any FanOutSession) async throws {
        switch outcome {
        case .release(let status):
            try await session.finish(.done(status))
        case .putBack(let delay, let resettingAttempts):
            try await session.finish(.putBack(after: delay, resettingAttempts: resettingAttempts))
        case .giveUp(let reason):
            let letter = session.claim.deadLetter(reason: reason)
            try await session.finish(.givenUp(letter))
            self.tools.recorder.reportDeadLetters([letter], appID: session.claim.appID)
        case .hold:
            break
        }
    }

    /// Puts a fan-out whose connection went away back to the outbox at its checkpoint. The pool can hand out the
    /// lost connection again before it has seen it close, and PostgreSQL may still be restarting: a few tries, a
    /// little apart, then the claim is left to its lease.
    private func releaseAfterConnectionLoss(_ claim: FanOutClaim) async {
        for pause in [Duration.milliseconds(50), .milliseconds(250), .seconds(1), .zero] {
            do {
                try await self.driver.withFanOutSession(claim, limits: self.limits) {
                    try await self.perform(ClaimOutcome(.connectionLost), on: $0)
                }
                return
            } catch  where StoreError.isConnectionLoss(error) && pause > .zero {
                try? await Task.sleep(for: pause)
            } catch {
                self.tools.logger.warning(
                    "a fan-out cut off by a lost connection waits for its lease",
                    metadata: ["update": "\(claim.updateID)", "error": "\(error)"]
                )
                return
            }
        }
    }
}
