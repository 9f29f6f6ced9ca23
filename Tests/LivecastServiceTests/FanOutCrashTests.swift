import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Testing

/// A dispatcher dies in the middle of a fan-out to 10,000 followers; another finishes it from the checkpoint.
@Suite struct FanOutCrashTests {
    private static let followerCount = 10_000

    @Test(.timeLimit(.minutes(10))) func aKilledFanOutIsFinishedFromItsCheckpointWithoutGoingBackwards() async throws {
        try await DispatchFixture.with("fanout_crash") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(Self.followerCount, feed: "game-1")
            // 100 tokens were rotated away before the update (the store knows); 50 more APNs reports unregistered.
            let rotated = Array(followers[0..<100])
            let unregistered = Array(followers[5000..<5050])
            try await fixture.store.client.query(
                "UPDATE activity_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE token = ANY(\(rotated.map(\.token)))"
            )
            var faults = fixture.emulator.emulator.faults
            for follower in unregistered { faults.unregisteredTokens[follower.token] = Int(Date().timeIntervalSince1970 * 1000) + 60_000 }
            fixture.emulator.emulator.setFaults(faults)
            let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)

            // Dispatcher A, with its own connections, dies once it has checkpointed some pages.
            let settings = Dispatcher.Settings(pageSize: 500, lease: .seconds(2))
            let apnsA = try fixture.emulator.makeClient()
            let databaseA = DoomedDatabaseClient(fixture, name: "dispatcher-a")
            let dispatcherA = Dispatcher(
                database: databaseA.client,
                appClients: FixedAppClients(apnsA, bundleID: EmulatorFixture.bundleID),
                settings: settings,
                logger: fixture.store.logger
            )
            let workA = Task { try await dispatcherA.dispatchOnce() }
            let deadline = Date().addingTimeInterval(420)
            var cursorAtKill: Int64 = 0
            while cursorAtKill < 3000, Date() < deadline {
                try await Task.sleep(for: .milliseconds(5))
                cursorAtKill = try await fixture.cursor(first.updateID)
                // On a starved machine A may die by itself first (its connections time out, its heartbeat stops and
                // its lease runs out): the crash this test stages, only earlier.
                if try await self.leaseRanOut(fixture, first.updateID) {
                    print("dispatcher A died by itself at cursor \(cursorAtKill)")
                    break
                }
            }
            workA.cancel()
            try await databaseA.kill(from: fixture)
            await apnsA.shutdown()
            // A is dead: its task may stay parked on its stopped pool for good, so nothing waits for it.
            #expect(try await fixture.status(first.updateID) == "dispatching")
            let checkpoint = try await fixture.cursor(first.updateID)
            #expect(checkpoint < Int64(Self.followerCount), "A stopped in the middle")

            // Dispatcher B takes the update over once A's lease has run out.
            let dispatcherB = fixture.dispatcher(settings)
            while try await fixture.status(first.updateID) != "sent", Date() < deadline {
                if try await dispatcherB.dispatchOnce() == 0 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(try await fixture.status(first.updateID) == "sent")
            let reachable = followers.count - rotated.count - unregistered.count
            #expect(try await fixture.counts(first.updateID) == (reachable, unregistered.count))

            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            while try await fixture.status(second.updateID) != "sent", Date() < deadline {
                if try await dispatcherB.dispatchOnce() == 0 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(try await fixture.counts(second.updateID) == (reachable, 0), "nothing went to the tokens APNs refused")

            let skipped = Set((rotated + unregistered).map(\.deviceID))
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                if skipped.contains(follower.deviceID) {
                    #expect(activity.contentState == .object(["home": .int(0)]), "an invalidated token got a push")
                } else {
                    #expect(activity.contentState == .object(["home": .int(2)]))
                    #expect(activity.lastTimestamp == second.timestamp)
                }
                // Pages A sent but never checkpointed went again: repeats, never an older timestamp.
                #expect(activity.ignoredPushes.allSatisfy { $0.timestamp == $0.shownTimestamp })
            }
        }
    }

    /// Whether an update is still claimed but its claimer's lease has run out: the claimer is dead.
    private func leaseRanOut(_ fixture: DispatchFixture, _ updateID: Int64) async throws -> Bool {
        let rows = try await fixture.store.client.query(
            "SELECT status = 'dispatching' AND not_before < now() - interval '5 seconds' FROM updates WHERE id = \(updateID)"
        )
        for try await ranOut in rows.decode(Bool.self) { return ranOut }
        return false
    }
}
