import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Claims under a lease (docs/ARCHITECTURE.md, Locks and leases): whatever a dispatcher claims from the outbox (a
/// feed's fan-out, standalone activity updates, owed pushes) is its own while the lease lives, and any dispatcher's
/// once the lease has run out, so the work of a dispatcher that died is taken over.
@Suite struct OutboxLeaseTests {
    /// A claimed fan-out is `dispatching` under its claimer's name for the lease: no other dispatcher (nor the same
    /// one) claims it again while the lease lives; once it has run out, another dispatcher takes it over, and the
    /// claim counts as the second in a row without progress.
    @Test func aClaimedFanOutIsHeldForItsLeaseAndTakenOverOnceItRunsOut() async throws {
        try await StoreFixture.with("outbox_lease_fan_out") { fixture in
            _ = try await fixture.makeFeed(followers: 2)
            let update = try await fixture.acceptFeedUpdate(home: 1, timestamp: try await fixture.databaseNow())
            let first = fixture.outbox(lease: .seconds(30))
            let second = fixture.outbox(lease: .seconds(30))

            let claim = try #require(try await first.claimFanOut(perApp: 2))
            #expect(claim.updateID == update.updateID && claim.attempts == 1 && claim.cursor == 0)
            let claimed = try await fixture.update(update.updateID)
            #expect(claimed.status == "dispatching" && claimed.claimedBy == first.claimer)
            #expect(claimed.leaseLeft > 25 && claimed.leaseLeft <= 30, "lease left: \(claimed.leaseLeft) s")
            #expect(try await second.claimFanOut(perApp: 2) == nil)
            #expect(try await first.claimFanOut(perApp: 2) == nil)

            try await fixture.expireLeases()
            let takeover = try #require(try await second.claimFanOut(perApp: 2))
            #expect(takeover.updateID == update.updateID && takeover.attempts == 2)
            let taken = try await fixture.update(update.updateID)
            #expect(taken.status == "dispatching" && taken.claimedBy == second.claimer && taken.leaseLeft > 25)
            #expect(try await first.claimFanOut(perApp: 2) == nil)
        }
    }

    /// Standalone activity updates are claimed under the claimer's lease as it is given (here 3 s, on the database's
    /// clock, with no row touched by the test): another dispatcher finds nothing to claim until it has run out, then
    /// takes the update over.
    @Test func claimedActivityUpdatesAreHeldUntilTheirLeaseRunsOut() async throws {
        try await StoreFixture.with("outbox_lease_activity") { fixture in
            try await fixture.makeActivity("order-1")
            let update = try await fixture.acceptActivityUpdate("order-1", eta: 5, timestamp: try await fixture.databaseNow())
            let lease = Duration.seconds(3)
            let first = fixture.outbox(lease: lease)
            let second = fixture.outbox(lease: lease)

            let clock = ContinuousClock()
            let claimedAt = clock.now
            let claims = try await first.claimActivityUpdates(batchSize: 10)
            #expect(claims.map(\.updateID) == [update.updateID] && claims.first?.attempts == 1)
            #expect(try await second.claimActivityUpdates(batchSize: 10).isEmpty)

            // Waits for the lease, asking every 50 ms.
            var takeover: [ActivityClaim] = []
            while takeover.isEmpty, clock.now - claimedAt < .seconds(30) {
                try await Task.sleep(for: .milliseconds(50))
                takeover = try await second.claimActivityUpdates(batchSize: 10)
            }
            let waited = clock.now - claimedAt
            #expect(takeover.map(\.updateID) == [update.updateID] && takeover.first?.attempts == 2)
            #expect(waited >= lease - .milliseconds(100), "taken over after \(waited), within a lease of \(lease)")
            #expect(try await fixture.update(update.updateID).claimedBy == second.claimer)
        }
    }

    /// An owed push is claimed under a lease: while it lives, no dispatcher claims the push again; once it has run
    /// out, another dispatcher takes it over.
    @Test func aClaimedOwedPushIsHeldForItsLeaseAndTakenOverOnceItRunsOut() async throws {
        try await StoreFixture.with("outbox_lease_owed") { fixture in
            let (_, followers) = try await fixture.makeFeed(followers: 1)
            let update = try await fixture.acceptFeedUpdate(home: 1, timestamp: try await fixture.databaseNow())
            let first = fixture.outbox()
            let second = fixture.outbox()
            try await fixture.client.withConnection { connection in
                let target = OwedTarget(kind: .activity, id: followers[0], status: 503, reason: "ServiceUnavailable")
                try await first.owe([target], delays: [0], updateID: update.updateID, appID: fixture.appID, on: connection)
            }

            let claims = try await first.claimOwedPushes(batchSize: 10)
            #expect(claims.map(\.targetID) == [followers[0]] && claims.first?.updateID == update.updateID)
            #expect(try await fixture.owedPushes() == [OwedRow(updateID: update.updateID, targetID: followers[0], claimedBy: first.claimer)])
            #expect(try await second.claimOwedPushes(batchSize: 10).isEmpty)
            #expect(try await first.claimOwedPushes(batchSize: 10).isEmpty)

            try await fixture.expireLeases()
            let takeover = try await second.claimOwedPushes(batchSize: 10)
            #expect(takeover.map(\.id) == claims.map(\.id))
            #expect(try await fixture.owedPushes().map(\.claimedBy) == [second.claimer])
        }
    }
}
