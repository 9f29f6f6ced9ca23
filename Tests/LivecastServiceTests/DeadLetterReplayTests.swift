import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Replaying dead letters: the push is owed again and reaches the device, unless a newer update has been accepted
/// for its target since or the target is gone. What the emulator's devices show is the test.
@Suite struct DeadLetterReplayTests {
    private static let refuseEverything = FaultPlan(failureShare: 1, failureAnswers: [.status(503, reason: "ServiceUnavailable")])

    @Test func aReplayedDeadLetterReachesItsDeviceOnceAndOnlyOnce() async throws {
        try await DispatchFixture.with("replay_requeued") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(3, feed: "game-1")
            let update = try await self.giveUp(fixture, home: 1)
            let letters = try await self.deadLetters(fixture)
            #expect(letters.count == followers.count)
            #expect(try await fixture.counts(update) == (0, followers.count))

            fixture.emulator.emulator.setFaults(FaultPlan())
            let replay = DeadLetterReplay(database: fixture.store.client, logger: fixture.store.logger)
            for letter in letters {
                #expect(try await replay.replay(id: letter, appID: fixture.store.appID) == .requeued)
            }
            #expect(try await fixture.dispatcher().drain() == followers.count)
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(1)]))
            }
            #expect(try await fixture.counts(update) == (followers.count, 0))
            await #expect(throws: DeadLetterReplay.Refusal.alreadyReplayed(.requeued)) {
                try await replay.replay(id: letters[0], appID: fixture.store.appID)
            }
            #expect(try await replay.replay(id: letters[0], appID: fixture.store.appID + 1) == nil, "another app's dead letter")
            let listed = try await DeadLetterEntry.list(
                appID: fixture.store.appID,
                after: nil,
                limit: 10,
                client: fixture.store.client,
                logger: fixture.store.logger
            )
            #expect(listed.map(\.replayOutcome) == Array(repeating: .requeued, count: followers.count))
            #expect(Set(listed.compactMap(\.target)) == Set(followers.map(\.deviceID)), "activities are named by their ActivityKit id")
        }
    }

    @Test func aDeadLetterSupersededByANewerUpdateOrWhoseTokenIsGoneIsNotSent() async throws {
        try await DispatchFixture.with("replay_refused") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(2, feed: "game-1")
            _ = try await self.giveUp(fixture, home: 1)
            let letters = try await self.deadLetters(fixture)
            #expect(letters.count == 2)

            fixture.emulator.emulator.setFaults(FaultPlan())
            let newer = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 2)
            #expect(try await fixture.dispatcher().drain() == 1)
            try await fixture.store.client.query(
                """
                UPDATE activity_tokens SET invalidated_at = now(), invalidation_reason = 'Unregistered'
                WHERE activity_id = (SELECT id FROM activities WHERE activity_key = \(followers[1].deviceID))
                """
            )
            let replay = DeadLetterReplay(database: fixture.store.client, logger: fixture.store.logger)
            let outcomes = try await [
                replay.replay(id: letters[0], appID: fixture.store.appID), replay.replay(id: letters[1], appID: fixture.store.appID),
            ]
            let targets = try await self.deadLetterTargets(fixture, letters)
            let expected: [DeadLetterReplay.Outcome] = targets.map { $0 == followers[1].deviceID ? .targetGone : .superseded }
            #expect(outcomes == expected)
            #expect(try await self.owedCount(fixture) == 0)
            #expect(try await fixture.dispatcher().drain() == 0)
            let activity = try #require(fixture.shown(followers[0].deviceID).first)
            #expect(activity.contentState == .object(["home": .int(2)]) && activity.lastTimestamp == newer.timestamp)
            #expect(activity.ignoredPushes.isEmpty, "the older update was sent after the newer one")
        }
    }

    /// An update of the feed every push of which APNs refuses until its 1-second deadline: dead letters.
    private func giveUp(_ fixture: DispatchFixture, home: Int) async throws -> Int64 {
        let dispatcher = fixture.dispatcher(Dispatcher.Settings(batchSize: 50, pageSize: 100, retryDeadline: .seconds(1)))
        fixture.emulator.emulator.setFaults(Self.refuseEverything)
        let update = try await fixture.update(feed: "game-1", home: home, timestamp: fixture.now)
        #expect(try await dispatcher.dispatchOnce() == 1)
        try await fixture.ageOwedPushes(bySeconds: 1.5)
        #expect(try await dispatcher.dispatchOnce() > 0)
        return update.updateID
    }

    private func owedCount(_ fixture: DispatchFixture) async throws -> Int {
        let rows = try await fixture.store.client.query("SELECT count(*)::int FROM owed_pushes")
        for try await count in rows.decode(Int.self) { return count }
        return -1
    }

    private func deadLetters(_ fixture: DispatchFixture) async throws -> [Int64] {
        let rows = try await fixture.store.client.query("SELECT id FROM dead_letters ORDER BY id")
        var ids: [Int64] = []
        for try await id in rows.decode(Int64.self) { ids.append(id) }
        return ids
    }

    private func deadLetterTargets(_ fixture: DispatchFixture, _ letters: [Int64]) async throws -> [String] {
        var keys: [String] = []
        for letter in letters {
            let rows = try await fixture.store.client.query(
                "SELECT a.activity_key FROM dead_letters l JOIN activities a ON a.id = l.target_id WHERE l.id = \(letter)"
            )
            for try await key in rows.decode(String.self) { keys.append(key) }
        }
        return keys
    }
}
