import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Coalescing (``UpdateAcceptance``, rule 5; docs/ARCHITECTURE.md, invariant 1), seen from the claims: an update in
/// the same second as its target's last takes that one's place and timestamp if no dispatcher has begun it, so the
/// replaced one is never claimed; one that a dispatcher has begun stays, and the newer goes out a second later. A
/// standalone activity's newer update also supersedes an older one put back to retry.
@Suite struct OutboxCoalescingTests {
    /// A feed update in the same second as one still waiting replaces it, with its timestamp: the waiting one is
    /// superseded, and the only claim made is the newer update's.
    @Test func aSameSecondFeedUpdateReplacesAWaitingOneWhichIsNeverClaimed() async throws {
        try await StoreFixture.with("outbox_coalesce_feed") { fixture in
            _ = try await fixture.makeFeed(followers: 1)
            let second = try await fixture.databaseNow() - 100
            let replaced = try await fixture.acceptFeedUpdate(home: 1, timestamp: second)
            let replacing = try await fixture.acceptFeedUpdate(home: 2, timestamp: second)
            #expect(replacing.coalesced && replacing.timestamp == second)
            #expect(try await fixture.update(replaced.updateID).status == "superseded")

            let outbox = fixture.outbox()
            let claim = try #require(try await outbox.claimFanOut(perApp: 2))
            #expect(claim.updateID == replacing.updateID && claim.timestamp == second)
            #expect(String(decoding: claim.payload, as: UTF8.self).contains(#""home":2"#))
            try await fixture.client.withConnection { connection in
                try await outbox.release(claim, status: .sent, on: connection)
            }
            #expect(try await outbox.claimFanOut(perApp: 2) == nil)
            #expect(try await fixture.update(replaced.updateID).status == "superseded")
        }
    }

    /// A feed update a dispatcher has begun (checkpointed, then put back; or claimed) is not replaced by one in the
    /// same second: the newer goes out at the next second, held until it begins, after the begun one. A third in
    /// that second replaces the second, which no dispatcher had begun.
    @Test func aBegunFeedUpdateIsNotReplacedAndASameSecondOneGoesOutAtTheNext() async throws {
        try await StoreFixture.with("outbox_coalesce_begun") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 2)
            let now = try await fixture.databaseNow()
            let second = now - 100
            let first = fixture.outbox()
            let other = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let begun = try await fixture.acceptFeedUpdate(home: 1, timestamp: second)
                var claim = try #require(try await first.claimFanOut(perApp: 2))
                try await first.checkpoint(&claim, cursor: followers[0], sent: 1, failed: 0, channelDone: true, on: connection)
                try await first.release(claim, status: .pending, on: connection)

                let next = try await fixture.acceptFeedUpdate(home: 2, timestamp: second)
                #expect(next.coalesced && next.timestamp == second + 1)
                #expect(try await fixture.update(begun.updateID).status == "pending")
                let resumed = try #require(try await other.claimFanOut(perApp: 2))
                #expect(resumed.updateID == begun.updateID && resumed.cursor == followers[0])

                // While the begun one is claimed, a third update in the next second replaces the second one only.
                let third = try await fixture.acceptFeedUpdate(home: 3, timestamp: second + 1)
                #expect(third.coalesced && third.timestamp == second + 1)
                #expect(try await fixture.update(next.updateID).status == "superseded")
                #expect(try await fixture.update(begun.updateID).status == "dispatching")
                #expect(try await first.claimFanOut(perApp: 2) == nil)
                try await other.release(resumed, status: .sent, on: connection)
                let last = try #require(try await first.claimFanOut(perApp: 2))
                #expect(last.updateID == third.updateID && last.timestamp == second + 1)

                // A same-second update of a second still to come is held until the next second begins.
                try await first.release(last, status: .sent, on: connection)
                let ahead = try await fixture.acceptFeedUpdate(home: 4, timestamp: now + 60)
                #expect(try await first.claimFanOut(perApp: 2)?.updateID == ahead.updateID)
                let later = try await fixture.acceptFeedUpdate(home: 5, timestamp: now + 60)
                #expect(later.coalesced && later.timestamp == now + 61)
                #expect(try await fixture.update(later.updateID).notBefore == Double(now + 61), "held until its own second")
            }
        }
    }

    /// A standalone activity's update in the same second as one claimed goes out at the next second, after it; a
    /// newer update supersedes an older one put back to retry (`supersede_retried_updates`), so the retried one is
    /// never claimed again and the updates after it go out in order.
    @Test func aNewerActivityUpdateSupersedesAnOlderOneWaitingToRetry() async throws {
        try await StoreFixture.with("outbox_coalesce_activity") { fixture in
            try await fixture.makeActivity("order-1")
            let second = try await fixture.databaseNow() - 100
            let first = fixture.outbox()
            let other = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let retried = try await fixture.acceptActivityUpdate("order-1", eta: 1, timestamp: second)
                #expect(try await first.claimActivityUpdates(batchSize: 10).map(\.updateID) == [retried.updateID])
                let next = try await fixture.acceptActivityUpdate("order-1", eta: 2, timestamp: second)
                #expect(next.coalesced && next.timestamp == second + 1)
                #expect(try await other.claimActivityUpdates(batchSize: 10).isEmpty)

                try await first.settle([ActivitySettlement(updateID: retried.updateID, status: nil, retryAfter: 0)], on: connection)
                #expect(try await fixture.update(retried.updateID).status == "pending")
                let newest = try await fixture.acceptActivityUpdate("order-1", eta: 3, timestamp: second + 5)
                #expect(newest.coalesced == false)
                #expect(try await fixture.update(retried.updateID).status == "superseded")

                let claims = try await other.claimActivityUpdates(batchSize: 10)
                #expect(claims.map(\.updateID) == [next.updateID])
                try await other.settle(claims.map { ActivitySettlement(updateID: $0.updateID, status: .sent) }, on: connection)
                #expect(try await first.claimActivityUpdates(batchSize: 10).map(\.updateID) == [newest.updateID])
            }
        }
    }
}
