import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Fenced claims (docs/ARCHITECTURE.md, Checkpoints): every statement that renews, checkpoints, settles or releases
/// a claim carries `claimed_by = <me>`, so a dispatcher whose claim was taken over after its lease ran out can no
/// longer move the row, and the new claimer's progress stands.
@Suite struct OutboxFencingTests {
    /// A fan-out taken over resumes from the first claimer's last checkpoint. The first claimer's later checkpoint is
    /// refused with ``LostClaim``, its renewal and its releases (sent or put back) change nothing; the new claimer's
    /// checkpoint and release are what the row keeps, with the counts of both claimers' checkpointed pages.
    @Test func aTakenOverFanOutIsFencedAndTheNewClaimersProgressStands() async throws {
        try await StoreFixture.with("outbox_fenced_fan_out") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 3)
            let update = try await fixture.acceptFeedUpdate(home: 1, timestamp: try await fixture.databaseNow())
            let first = fixture.outbox()
            let second = fixture.outbox()
            try await fixture.client.withConnection { connection in
                var stale = try #require(try await first.claimFanOut(perApp: 2))
                try await first.checkpoint(&stale, cursor: followers[0], sent: 1, failed: 0, channelDone: true, on: connection)
                #expect(stale.cursor == followers[0])

                try await fixture.expireLeases()
                var current = try #require(try await second.claimFanOut(perApp: 2))
                #expect(current.cursor == followers[0] && current.channelDone)
                try await second.checkpoint(&current, cursor: followers[1], sent: 1, failed: 0, on: connection)

                await #expect(throws: LostClaim.self) {
                    try await first.checkpoint(&stale, cursor: followers[2], sent: 5, failed: 0, on: connection)
                }
                #expect(stale.cursor == followers[0])
                try await first.release(stale, status: .sent, on: connection)
                try await first.release(stale, status: .pending, on: connection)
                var row = try await fixture.update(update.updateID)
                #expect(row.status == "dispatching" && row.claimedBy == second.claimer)
                #expect(row.cursor == followers[1] && row.sentCount == 2 && row.attempts == 1)

                // A renewal by the first claimer leaves the lease to run out; the second claimer's renews it.
                try await fixture.expireLeases()
                try await first.renew(updates: [update.updateID], slices: [], owedPushes: [])
                #expect(try await fixture.update(update.updateID).leaseLeft < 0)
                try await second.renew(updates: [update.updateID], slices: [], owedPushes: [])
                #expect(try await fixture.update(update.updateID).leaseLeft > 25)

                try await second.release(current, status: .sent, on: connection)
                row = try await fixture.update(update.updateID)
                #expect(row.status == "sent" && row.claimedBy == nil && row.cursor == followers[1] && row.sentCount == 2)
            }
        }
    }

    /// A standalone activity update taken over cannot be settled by its first claimer: its `sent` and its put-back
    /// leave the row to the new claimer, whose settlement counts once.
    @Test func aTakenOverActivityUpdateIsSettledByItsNewClaimerOnly() async throws {
        try await StoreFixture.with("outbox_fenced_activity") { fixture in
            try await fixture.makeActivity("order-1")
            let update = try await fixture.acceptActivityUpdate("order-1", eta: 5, timestamp: try await fixture.databaseNow())
            let first = fixture.outbox()
            let second = fixture.outbox()
            #expect(try await first.claimActivityUpdates(batchSize: 10).map(\.updateID) == [update.updateID])
            try await fixture.expireLeases()
            #expect(try await second.claimActivityUpdates(batchSize: 10).map(\.updateID) == [update.updateID])

            try await fixture.client.withConnection { connection in
                try await first.settle([ActivitySettlement(updateID: update.updateID, status: .sent)], on: connection)
                try await first.settle([ActivitySettlement(updateID: update.updateID, status: nil, retryAfter: 60)], on: connection)
                let row = try await fixture.update(update.updateID)
                #expect(row.status == "dispatching" && row.claimedBy == second.claimer && row.sentCount == 0 && row.leaseLeft > 25)

                try await second.settle([ActivitySettlement(updateID: update.updateID, status: .sent)], on: connection)
                let settled = try await fixture.update(update.updateID)
                #expect(settled.status == "sent" && settled.claimedBy == nil && settled.sentCount == 1)
            }
        }
    }

    /// An owed push taken over cannot be settled, retried or put back by its first claimer: it stays owed, claimed by
    /// the new claimer, until that one settles it, and the new claimer's delivery counts once (the first claimer's
    /// refused settlement adds nothing to the update's count).
    @Test func aTakenOverOwedPushIsSettledByItsNewClaimerOnly() async throws {
        try await StoreFixture.with("outbox_fenced_owed") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 1)
            let update = try await fixture.acceptFeedUpdate(home: 1, timestamp: try await fixture.databaseNow())
            let first = fixture.outbox()
            let second = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let target = OwedTarget(kind: .activity, id: followers[0], status: 503, reason: "ServiceUnavailable")
                try await first.owe([target], delays: [0], updateID: update.updateID, appID: fixture.appID, on: connection)
                let stale = try await first.claimOwedPushes(batchSize: 10)
                #expect(stale.count == 1)
                try await fixture.expireLeases()
                let current = try await second.claimOwedPushes(batchSize: 10)
                #expect(current.map(\.id) == stale.map(\.id))

                try await first.settle(stale, delivered: stale, failed: [], on: connection)
                try await first.retry(stale.map { OwedRetry(claim: $0, status: 503, reason: "ServiceUnavailable", delay: 0) }, on: connection)
                try await first.putBack(stale, for: .zero, on: connection)
                #expect(try await fixture.owedPushes() == [OwedRow(updateID: update.updateID, targetID: followers[0], claimedBy: second.claimer)])
                #expect(try await first.claimOwedPushes(batchSize: 10).isEmpty)
                let countedBefore = try await fixture.update(update.updateID).sentCount
                #expect(countedBefore == 0, "a claim taken over counts nothing")

                try await second.settle(current, delivered: current, failed: [], on: connection)
                #expect(try await fixture.owedPushes().isEmpty)
                #expect(try await fixture.update(update.updateID).sentCount == 1)
            }
        }
    }

    /// A slice of a split fan-out is a fenced claim of its own: taken over after its lease, it resumes from its
    /// checkpoint; the first claimer's checkpoint is refused with ``LostClaim`` and its release leaves the slice
    /// unfinished; the new claimer's release of the last slice completes the update.
    @Test func aTakenOverSliceIsFencedAndItsNewClaimerCompletesTheUpdate() async throws {
        try await StoreFixture.with("outbox_fenced_slice") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 4)
            let update = try await fixture.acceptFeedUpdate(home: 1, timestamp: try await fixture.databaseNow())
            let first = fixture.outbox()
            let second = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let whole = try #require(try await first.claimFanOut(perApp: 2))
                // Slices of two followers: (0, followers[1]] and (followers[1], the end].
                #expect(try await first.split(whole, size: 2, on: connection))
                var slices: [FanOutClaim] = []
                while let slice = try await first.claimSlice(perApp: 10) { slices.append(slice) }
                #expect(slices.map(\.upperBound) == [followers[1], .max])
                #expect(try await second.claimSlice(perApp: 10) == nil)
                try await first.checkpoint(&slices[1], cursor: followers[2], sent: 1, failed: 0, on: connection)
                try await first.release(slices[0], status: .sent, on: connection)

                try await fixture.expireLeases()
                var current = try #require(try await second.claimSlice(perApp: 10))
                #expect(current.slice == slices[1].slice && current.cursor == followers[2])
                await #expect(throws: LostClaim.self) {
                    try await first.checkpoint(&slices[1], cursor: followers[3], sent: 1, failed: 0, on: connection)
                }
                try await first.release(slices[1], status: .sent, on: connection)
                #expect(try await fixture.update(update.updateID).status == "dispatching")

                try await second.checkpoint(&current, cursor: followers[3], sent: 1, failed: 0, on: connection)
                try await second.release(current, status: .sent, on: connection)
                let row = try await fixture.update(update.updateID)
                #expect(row.status == "sent" && row.sentCount == 2)
            }
        }
    }
}
