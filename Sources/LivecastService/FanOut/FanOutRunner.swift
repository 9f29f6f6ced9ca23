import APNs
import Foundation
import LivecastCore
import LivecastStore
import Logging
import PostgresNIO

/// The service is shutting down: a fan-out stops at its checkpoint and goes back to the outbox.
struct StopAtCheckpoint: Error {}

/// Runs a feed's claimed fan-out: its channel's broadcast and a walk of its token-based followers (an update or an
/// end), or a walk of its push-to-start audience (a start), page by page, each page checkpointed. Followers beyond
/// one slice are split into slices, which any worker of any instance claims and walks the same way.
struct FanOutRunner: Sendable {
    let tools: LaneTools
    /// Followers read and sent per checkpoint.
    let pageSize: Int
    /// Followers per slice of a split fan-out (``Outbox/split(_:size:on:)``).
    let sliceSize: Int
    /// Claims in a row without a checkpoint before a fan-out is given up.
    let attempts: Int
    /// The push-to-start budget each device of a start's audience is kept within.
    let startBudget: StartBudget

    /// Sends a claimed fan-out to its end, then marks it sent; pushes APNs asked to retry stay owed to their
    /// targets. A lost claim stops it quietly (the new holder goes on from the checkpoint); a graceful shutdown
    /// puts it back at its checkpoint; an app whose signing key cannot be opened gets it back after a minute,
    /// until the retry deadline. One claimed too often without progress is given up as a dead letter.
    func run(_ claimed: FanOutClaim) async throws {
        guard claimed.attempts <= self.attempts else {
            try await self.tools.database.withGuardedConnection { try await self.giveUp(claimed, reason: "NoProgress", on: $0) }
            return
        }
        let app: AppClient
        do {
            app = try await self.tools.client(ofApp: claimed.appID)
        } catch let error as StoreError {
            try await self.tools.database.withGuardedConnection { connection in
                if claimed.pastDeadline {
                    try await self.giveUp(claimed, reason: AppClients.unusableKeyReason, on: connection)
                } else {
                    self.tools.logger.error("cannot send an app's fan-out", metadata: ["app": "\(claimed.appID)", "error": "\(error)"])
                    try await self.tools.outbox.release(
                        claimed,
                        status: .pending,
                        retryAfter: RetryPolicy.unusableKeyPause,
                        resetAttempts: true,
                        on: connection
                    )
                }
            }
            return
        }
        do {
            try await self.tools.database.withGuardedConnection { connection in
                var claim = claimed
                switch claim.event {
                case .start:
                    try await self.sendStarts(&claim, app: app, on: connection)
                case .update, .end:
                    if claim.slice == nil {
                        if !claim.channelDone { try await self.broadcast(&claim, app: app, on: connection) }
                        // Split, the followers are the slices' to walk, on any instance.
                        if try await self.tools.outbox.split(claim, size: self.sliceSize, on: connection) { return }
                    }
                    try await self.sendToFollowers(&claim, app: app, on: connection)
                }
                try await self.tools.outbox.release(claim, status: .sent, on: connection)
            }
        } catch let lost as LostClaim {
            self.tools.logger.notice("stopped a fan-out another dispatcher took over", metadata: ["update": "\(lost.updateID)"])
        } catch is StopAtCheckpoint {
            try await self.tools.database.withGuardedConnection { try await self.tools.outbox.release(claimed, status: .pending, on: $0) }
        } catch is SendingHeld {
            // Back to the outbox at its checkpoint, with its tries counted afresh: it waits for the app to resume.
            try await self.tools.database.withGuardedConnection {
                try await self.tools.outbox.release(claimed, status: .pending, resetAttempts: true, on: $0)
            }
        } catch  where StoreError.isConnectionLoss(error) {
            // Its connection went away (PostgreSQL restarted, say): back to the outbox at its checkpoint as soon as
            // the database answers again, instead of when its lease runs out.
            await self.releaseAfterConnectionLoss(claimed)
            throw error
        }
    }

    /// Puts a fan-out whose connection went away back to the outbox at its checkpoint. The pool can hand out the
    /// lost connection again before it has seen it close, and PostgreSQL may still be restarting: a few tries, a
    /// little apart, then the claim is left to its lease.
    private func releaseAfterConnectionLoss(_ claim: FanOutClaim) async {
        for pause in [Duration.milliseconds(50), .milliseconds(250), .seconds(1), .zero] {
            do {
                try await self.tools.database.withGuardedConnection { try await self.tools.outbox.release(claim, status: .pending, on: $0) }
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

    /// Gives a claimed fan-out up: marks it failed and keeps it as a dead letter with the reason.
    private func giveUp(_ claim: FanOutClaim, reason: String, on connection: PostgresConnection) async throws {
        try await self.tools.outbox.release(claim, status: .failed, on: connection)
        try await self.tools.recorder.deadLetter(
            [claim.deadLetter(reason: reason)],
            appID: claim.appID,
            on: connection
        )
    }
}
