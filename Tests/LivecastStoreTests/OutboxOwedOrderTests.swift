import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Order per target (docs/ARCHITECTURE.md, invariant 1; `Outbox+OwedOrder.swift`, ``ClaimOwedPushesStatement``): a
/// target never has two pushes in flight, and never gets an older update after a newer one, across a feed's updates,
/// the owed pushes APNs asked to retry, and a newer update's walk.
@Suite struct OutboxOwedOrderTests {
    /// A feed's updates are claimed one at a time, oldest first: a later update is not claimable while an earlier
    /// one of the same feed is unfinished (claimed, or put back to retry), whoever asks.
    @Test func aFeedsUpdatesAreClaimedOneAtATimeInOrder() async throws {
        try await StoreFixture.with("outbox_order_feed") { fixture in
            _ = try await fixture.makeFeed(followers: 1)
            let now = try await fixture.databaseNow()
            let older = try await fixture.acceptFeedUpdate(home: 1, timestamp: now)
            let newer = try await fixture.acceptFeedUpdate(home: 2, timestamp: now + 10)
            let first = fixture.outbox()
            let second = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let claim = try #require(try await first.claimFanOut(perApp: 2))
                #expect(claim.updateID == older.updateID)
                #expect(try await second.claimFanOut(perApp: 2) == nil)
                try await first.release(claim, status: .pending, on: connection)
                let retried = try #require(try await second.claimFanOut(perApp: 2))
                #expect(retried.updateID == older.updateID)
                try await second.release(retried, status: .sent, on: connection)
                #expect(try await first.claimFanOut(perApp: 2)?.updateID == newer.updateID)
            }
        }
    }

    /// An owed push is not claimed while an older push to the same target is in flight (claimed under a live
    /// lease): a newer update's push, deferred behind it, goes only once the older one is settled, while the same
    /// update's push to another target goes at once. The older push, which a newer update of its feed replaces, is
    /// claimed only to be settled unsent.
    @Test func anOwedPushWaitsWhileAnOlderPushToItsTargetIsInFlight() async throws {
        try await StoreFixture.with("outbox_order_in_flight") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 2)
            let (busy, free) = (followers[0], followers[1])
            let now = try await fixture.databaseNow()
            let older = try await fixture.acceptFeedUpdate(home: 1, timestamp: now)
            let newer = try await fixture.acceptFeedUpdate(home: 2, timestamp: now + 10)
            let first = fixture.outbox()
            let second = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let retry = OwedTarget(kind: .activity, id: busy, status: 503, reason: "ServiceUnavailable")
                try await first.owe([retry], delays: [0], updateID: older.updateID, appID: fixture.appID, on: connection)
                let inFlight = try await first.claimOwedPushes(batchSize: 10)
                #expect(inFlight.map(\.updateID) == [older.updateID] && inFlight.map(\.targetID) == [busy])
                #expect(inFlight.first?.isSuperseded == true)

                let others = [OwedTarget.deferred(.activity, busy), OwedTarget(kind: .activity, id: free, status: 503, reason: "ServiceUnavailable")]
                try await second.owe(others, delays: [0, 0], updateID: newer.updateID, appID: fixture.appID, on: connection)
                let unblocked = try await second.claimOwedPushes(batchSize: 10)
                #expect(unblocked.map(\.targetID) == [free] && unblocked.first?.isSuperseded == false)
                #expect(try await second.claimOwedPushes(batchSize: 10).isEmpty)
                #expect(try await first.claimOwedPushes(batchSize: 10).isEmpty)

                try await first.settle(inFlight, delivered: [], failed: [], on: connection)
                let next = try await second.claimOwedPushes(batchSize: 10)
                #expect(next.map(\.targetID) == [busy] && next.map(\.updateID) == [newer.updateID])
                #expect(next.first?.isSuperseded == false)
            }
        }
    }

    /// A push of a newer update settled at a target (delivered or refused) removes what older updates still owe that
    /// target, even one not due yet: it would arrive after the newer one.
    @Test func aSettledNewerPushClearsWhatOlderUpdatesStillOweItsTarget() async throws {
        try await StoreFixture.with("outbox_order_settle") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 2)
            let now = try await fixture.databaseNow()
            let older = try await fixture.acceptFeedUpdate(home: 1, timestamp: now)
            let newer = try await fixture.acceptFeedUpdate(home: 2, timestamp: now + 10)
            let outbox = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let targets = followers.map { OwedTarget(kind: .activity, id: $0, status: 503, reason: "ServiceUnavailable") }
                try await outbox.owe(targets, delays: [60, 60], updateID: older.updateID, appID: fixture.appID, on: connection)
                try await outbox.owe([targets[0]], delays: [0], updateID: newer.updateID, appID: fixture.appID, on: connection)
                let claims = try await outbox.claimOwedPushes(batchSize: 10)
                #expect(claims.map(\.updateID) == [newer.updateID] && claims.map(\.targetID) == [followers[0]])
                try await outbox.settle(claims, delivered: claims, failed: [], on: connection)
            }
            // The other follower's older push is still owed.
            #expect(try await fixture.owedPushes() == [OwedRow(updateID: older.updateID, targetID: followers[1], claimedBy: nil)])
        }
    }

    /// Before a newer update's walk (``Outbox/clearOlderOwed(_:ofFeed:after:through:upTo:on:)``), what the feed's
    /// updates up to it still owe the targets it has yet to walk (after its checkpoint, up to its last target) is
    /// dropped, unless in flight: those targets are named, with the update of the push in flight, and keep it until
    /// its lease runs out. Targets outside the walk, and a later update's owed push, are left alone.
    @Test func aNewerWalkClearsOlderOwedPushesAndNamesThoseInFlight() async throws {
        try await StoreFixture.with("outbox_order_clear_older") { fixture in
            let (feedID, followers) = try await fixture.makeFeed(followers: 5)
            let (walked, busy, ahead, later, beyond) = (followers[0], followers[1], followers[2], followers[3], followers[4])
            let now = try await fixture.databaseNow()
            let oldest = try await fixture.acceptFeedUpdate(home: 1, timestamp: now)
            let walking = try await fixture.acceptFeedUpdate(home: 2, timestamp: now + 10)
            let latest = try await fixture.acceptFeedUpdate(home: 3, timestamp: now + 20)
            let outbox = fixture.outbox()
            try await fixture.client.withConnection { connection in
                func owe(_ update: AcceptedUpdate, _ targets: [Int64], dueNow: Bool = false) async throws {
                    let owed = targets.map { OwedTarget(kind: .activity, id: $0, status: 503, reason: "ServiceUnavailable") }
                    let delays = Array(repeating: dueNow ? 0.0 : 60.0, count: targets.count)
                    try await outbox.owe(owed, delays: delays, updateID: update.updateID, appID: fixture.appID, on: connection)
                }
                try await owe(oldest, [walked, ahead, beyond])
                try await owe(oldest, [busy], dueNow: true)
                try await owe(walking, [ahead])
                try await owe(latest, [later])
                #expect(try await outbox.claimOwedPushes(batchSize: 10).map(\.targetID) == [busy])

                let inFlight = try await outbox.clearOlderOwed(
                    .activity,
                    ofFeed: feedID,
                    after: walked,
                    through: later,
                    upTo: walking.updateID,
                    on: connection
                )
                #expect(inFlight == [busy: oldest.updateID])
                #expect(
                    try await fixture.owedPushes() == [
                        OwedRow(updateID: oldest.updateID, targetID: walked, claimedBy: nil),
                        OwedRow(updateID: oldest.updateID, targetID: busy, claimedBy: outbox.claimer),
                        OwedRow(updateID: oldest.updateID, targetID: beyond, claimedBy: nil),
                        OwedRow(updateID: latest.updateID, targetID: later, claimedBy: nil),
                    ]
                )

                // Once its lease has run out, the push is no longer in flight: the walk drops it too.
                try await fixture.expireLeases()
                let again = try await outbox.clearOlderOwed(
                    .activity,
                    ofFeed: feedID,
                    after: walked,
                    through: later,
                    upTo: walking.updateID,
                    on: connection
                )
                #expect(again.isEmpty)
                #expect(try await fixture.owedPushes().map(\.targetID) == [walked, beyond, later])
            }
        }
    }
}
