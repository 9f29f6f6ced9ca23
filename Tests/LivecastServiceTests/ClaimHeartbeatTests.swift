import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Claims are kept by a heartbeat: a slow page never loses its claim, and a dead dispatcher's work is taken over
/// once its lease runs out (10 s by default), not a minute later.
@Suite struct ClaimHeartbeatTests {
    @Test(.timeLimit(.minutes(3))) func aPageSlowerThanTheLeaseKeepsItsClaim() async throws {
        try await DispatchFixture.with("heartbeat_slow_page") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(20, feed: "game-1")
            let settings = Dispatcher.Settings(pageSize: 100, lease: .seconds(5))
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            // The feed's send lock, held exclusively elsewhere, keeps the page waiting more than two leases long.
            let holding = try await SendLockHolder.hold(fixture, feed: "game-1", for: .seconds(12))
            let slow = fixture.dispatcher(settings)
            let sending = Task { try await slow.dispatchOnce() }
            while try await fixture.status(update.updateID) != "dispatching" { try await Task.sleep(for: .milliseconds(20)) }
            let other = fixture.dispatcher(settings)
            let until = ContinuousClock.now + .seconds(11)
            while ContinuousClock.now < until {
                #expect(try await other.dispatchOnce() == 0, "another dispatcher took over a live claim")
                try await Task.sleep(for: .milliseconds(200))
            }
            try await holding.value
            #expect(try await sending.value == 1)
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(try await fixture.counts(update.updateID) == (followers.count, 0))
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                #expect(activity.contentState == .object(["home": .int(1)]))
                #expect(activity.ignoredPushes.isEmpty, "a follower got the page twice")
            }
        }
    }

    @Test(.timeLimit(.minutes(3))) func aDeadDispatchersFanOutIsTakenOverWithinFifteenSeconds() async throws {
        try await DispatchFixture.with("heartbeat_takeover") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(20, feed: "game-1")
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            let holding = try await SendLockHolder.hold(fixture, feed: "game-1", for: .seconds(8))

            // Dispatcher A, with its own connections and default settings, claims the fan-out, then dies.
            let databaseA = DoomedDatabaseClient(fixture, name: "dispatcher-a")
            let apns = fixture.apns
            let dispatcherA = Dispatcher(
                database: databaseA.client,
                appClients: FixedAppClients(apns, bundleID: EmulatorFixture.bundleID),
                logger: fixture.store.logger
            )
            let workA = Task { try await dispatcherA.dispatchOnce() }
            while try await fixture.status(update.updateID) != "dispatching" { try await Task.sleep(for: .milliseconds(20)) }
            // A heartbeat renews the lease (the claim's not_before moves on).
            let claimedUntil = try await Self.leaseEnd(update.updateID, fixture)
            try await eventually(within: .seconds(30), "a heartbeat renewing the lease") {
                try await Self.leaseEnd(update.updateID, fixture) > claimedUntil
            }
            // Its heartbeat stops with its task; its connections (one waiting on the lock) are cut, as a crash cuts them.
            workA.cancel()
            try await databaseA.kill(from: fixture)
            let killed = ContinuousClock.now
            try await holding.value

            // Dispatcher B takes the update over once A's lease has run out: the takeover is when the try that
            // claimed it began (the fan-out it then sends is not counted).
            let dispatcherB = fixture.dispatcher()
            var takeover = Duration.seconds(60)
            while try await fixture.status(update.updateID) != "sent", ContinuousClock.now - killed < .seconds(60) {
                let tried = ContinuousClock.now - killed
                if try await dispatcherB.dispatchOnce() > 0 {
                    takeover = min(takeover, tried)
                } else {
                    try await Task.sleep(for: .milliseconds(200))
                }
            }
            print("takeover after a dispatcher died: \(takeover)")
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(takeover < .seconds(15))
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(1)]))
            }
        }
    }

    /// A claim left behind by a round that failed (written here as the claim statement leaves it) is taken over
    /// once its lease runs out, while another round of the same dispatcher runs on: a round's heartbeat renews only
    /// what that round claimed. It used to renew every claim under the dispatcher's id, for as long as any round ran.
    @Test(.timeLimit(.minutes(3))) func aClaimLeftByAFailedRoundIsTakenOverWhileTheDispatchersOtherRoundsRun() async throws {
        try await DispatchFixture.with("heartbeat_left_claim") { fixture in
            try await fixture.feed("game-1")
            try await fixture.feed("game-2")
            _ = try await fixture.tokenFollowers(5, feed: "game-1")
            let followers = try await fixture.tokenFollowers(5, feed: "game-2")
            let settings = Dispatcher.Settings(pageSize: 100, lease: .seconds(5))
            let busy = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            let left = try await fixture.update(feed: "game-2", home: 1, timestamp: fixture.now)
            let dispatcher = fixture.dispatcher(settings)
            try await fixture.store.client.query(
                """
                UPDATE updates SET status = 'dispatching', claimed_by = \(dispatcher.id), attempts = 1,
                    not_before = now() + interval '5 seconds'
                WHERE id = \(left.updateID)
                """
            )
            // The dispatcher's other round runs on for 16 s: game-1's page waits for the feed's send lock.
            let holding = try await SendLockHolder.hold(fixture, feed: "game-1", for: .seconds(16))
            let running = Task { try await dispatcher.dispatchOnce() }
            while try await fixture.status(busy.updateID) != "dispatching" { try await Task.sleep(for: .milliseconds(20)) }

            let other = fixture.dispatcher(settings)
            let until = ContinuousClock.now + .seconds(13)
            while try await fixture.status(left.updateID) != "sent", ContinuousClock.now < until {
                if try await other.dispatchOnce() == 0 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(try await fixture.status(left.updateID) == "sent", "the claim left behind was renewed by the other round")
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(1)]))
            }
            try await holding.value
            #expect(try await running.value == 1)
            #expect(try await fixture.status(busy.updateID) == "sent")
        }
    }

    /// When the update's claim runs out unless renewed (its `not_before`), in microseconds since the epoch.
    private static func leaseEnd(_ updateID: Int64, _ fixture: DispatchFixture) async throws -> Int64 {
        let rows = try await fixture.store.client.query(
            "SELECT (extract(epoch FROM not_before) * 1000000)::bigint FROM updates WHERE id = \(updateID)"
        )
        for try await end in rows.decode(Int64.self) { return end }
        throw TestFailure("no update \(updateID)")
    }
}
