import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// The invalidation guard: a batch that comes back mostly Unregistered or BadDeviceToken (a wrong environment or key)
/// invalidates nothing and holds the app's sending until it is resumed; ordinary churn invalidates as before, and
/// credential answers never invalidate.
@Suite struct InvalidationGuardTests {
    @Test func aMassUnregisteredBatchInvalidatesNothingAndHoldsTheAppUntilResumed() async throws {
        // The 410s here are a wrong key's, not the tokens' (the guard's whole point): the tokens are sent to again once
        // the app resumes, so only the order is judged at the wire.
        try await DispatchFixture.with("guard_trip", judgesWire: false) { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(30, feed: "game-1")
            var faults = FaultPlan()
            for follower in followers.prefix(25) { faults.unregisteredTokens[follower.token] = Int(Date().timeIntervalSince1970 * 1000) + 60_000 }
            fixture.emulator.emulator.setFaults(faults)
            let dispatcher = fixture.dispatcher()
            _ = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)

            #expect(try await self.number(fixture, "SELECT count(*)::int FROM activity_tokens WHERE invalidated_at IS NOT NULL") == 0)
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM owed_pushes") == 25)
            let app = try #require(
                try await Apps(client: fixture.store.client, masterKey: nil, logger: fixture.store.logger).app(id: fixture.store.appID)
            )
            let hold = try #require(app.sendingHeld)
            #expect(hold.reason.hasPrefix("25 of 30 pushes in one batch were answered Unregistered"), "\(hold.reason)")
            // Held: neither its next update nor what it owes is sent.
            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            try await fixture.makeOwedPushesDue()
            #expect(try await dispatcher.dispatchOnce() == 0)
            #expect(try await fixture.status(second.updateID) == "pending")

            // The environment is fixed (APNs knows the tokens again) and an operator resumes the app.
            fixture.emulator.emulator.setFaults(FaultPlan())
            #expect(try await Apps(client: fixture.store.client, masterKey: nil, logger: fixture.store.logger).resumeSending(id: fixture.store.appID))
            #expect(try await dispatcher.drain() >= 1)
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                #expect(activity.contentState == .object(["home": .int(2)]))
                #expect(activity.ignoredPushes.isEmpty)
            }
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM activity_tokens WHERE invalidated_at IS NOT NULL") == 0)
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM owed_pushes") == 0, "the older update's owed pushes were superseded")
            let verdict = WireJudge.judge(fixture.emulator.emulator.wireRecords)
            #expect(verdict.orderingViolations.isEmpty && verdict.sentAfterEnd.isEmpty, "at the wire: \(verdict)")
        }
    }

    @Test func ordinaryChurnIsInvalidatedAndCredentialAnswersNeverInvalidate() async throws {
        try await DispatchFixture.with("guard_churn") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(30, feed: "game-1")
            var faults = FaultPlan()
            for follower in followers.prefix(3) { faults.unregisteredTokens[follower.token] = Int(Date().timeIntervalSince1970 * 1000) + 60_000 }
            fixture.emulator.emulator.setFaults(faults)
            let dispatcher = fixture.dispatcher()
            _ = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM activity_tokens WHERE invalidation_reason = 'Unregistered'") == 3)
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM apps WHERE sending_held_at IS NOT NULL") == 0)

            fixture.emulator.emulator.setFaults(FaultPlan(failureShare: 1, failureAnswers: [.status(403, reason: "BadEnvironmentKeyInToken")]))
            _ = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            #expect(try await dispatcher.drain() == 1)
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM activity_tokens WHERE invalidated_at IS NOT NULL") == 3)
            #expect(try await self.number(fixture, "SELECT count(*)::int FROM deliveries WHERE reason = 'BadEnvironmentKeyInToken'") == 27)
        }
    }

    private func number(_ fixture: DispatchFixture, _ query: PostgresQuery) async throws -> Int {
        let rows = try await fixture.store.client.query(query)
        for try await count in rows.decode(Int.self) { return count }
        return -1
    }
}
