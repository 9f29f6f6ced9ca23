import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Pushes APNs asks to retry later stay owed: carried forward with backoff until delivered, superseded or past
/// their deadline, then kept as dead letters. What the emulator's devices show is the test.
@Suite struct CarryForwardTests {
    private static let refuseEverything = FaultPlan(failureShare: 1, failureAnswers: [.status(503, reason: "ServiceUnavailable")])

    @Test func pushesAPNsAsksToRetryAreOwedAndSentOnceItAnswers() async throws {
        try await DispatchFixture.with("carry_owed") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(20, feed: "game-1")
            let dispatcher = fixture.dispatcher(Dispatcher.Settings(batchSize: 50, pageSize: 100, firstRetryBackoff: .seconds(60)))
            fixture.emulator.emulator.setFaults(Self.refuseEverything)
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)
            // The fan-out is done; its followers are owed, not failed, and the update's status says so.
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(try await fixture.counts(update.updateID) == (0, 0))
            #expect(try await fixture.owed(update: update.updateID) == followers.count)
            let status = try #require(
                try await UpdateStatus.read(
                    updateID: update.updateID,
                    appID: fixture.store.appID,
                    client: fixture.store.client,
                    logger: fixture.store.logger
                )
            )
            #expect(status.pending == followers.count)

            fixture.emulator.emulator.setFaults(FaultPlan())
            #expect(try await dispatcher.dispatchOnce() == 0, "an owed push went before its backoff")
            try await fixture.makeOwedPushesDue()
            #expect(try await dispatcher.drain() == followers.count)
            #expect(try await fixture.owed(update: update.updateID) == 0)
            #expect(try await fixture.counts(update.updateID) == (followers.count, 0))
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(1)]))
            }
        }
    }

    @Test func aNewerUpdateReplacesWhatAnOlderOneStillOwes() async throws {
        try await DispatchFixture.with("carry_superseded") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(10, feed: "game-1")
            let dispatcher = fixture.dispatcher()
            fixture.emulator.emulator.setFaults(Self.refuseEverything)
            let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.owed(update: first.updateID) == followers.count)

            fixture.emulator.emulator.setFaults(FaultPlan())
            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.owed(update: first.updateID) == 0, "the older update is still owed")
            try await fixture.makeOwedPushesDue()
            #expect(try await dispatcher.drain() == 0)
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                #expect(activity.contentState == .object(["home": .int(2)]))
                #expect(activity.lastTimestamp == second.timestamp)
                #expect(activity.ignoredPushes.isEmpty, "the superseded update was sent after the newer one")
            }
        }
    }

    @Test func anUpdatePastItsDeadlineIsADeadLetterButAnEndIsKeptWhileTheActivityCanShow() async throws {
        try await DispatchFixture.with("carry_deadline") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(5, feed: "game-1")
            let dispatcher = fixture.dispatcher(Dispatcher.Settings(batchSize: 50, pageSize: 100, retryDeadline: .seconds(1)))
            fixture.emulator.emulator.setFaults(Self.refuseEverything)
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)
            try await fixture.ageOwedPushes(bySeconds: 1.5)
            #expect(try await dispatcher.dispatchOnce() == followers.count)
            #expect(try await fixture.owed(update: update.updateID) == 0)
            #expect(try await self.deadLetters(fixture, update: update.updateID) == ["ServiceUnavailable": followers.count])
            #expect(try await fixture.counts(update.updateID) == (0, followers.count))

            let end = try await FeedUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(
                .init(
                    appID: fixture.store.appID,
                    feedKey: "game-1",
                    event: .end,
                    contentState: try RawJSON(validating: #"{"home":9}"#),
                    timestamp: fixture.now + 1  // a second on: not held back as coalesced with the update
                )
            )
            #expect(try await dispatcher.dispatchOnce() == 1)
            try await fixture.ageOwedPushes(bySeconds: 1.5)
            #expect(try await dispatcher.dispatchOnce() == followers.count)
            #expect(try await self.deadLetters(fixture, update: end.updateID).isEmpty, "an end was given up while its activity can show")
            #expect(try await fixture.owed(update: end.updateID) == followers.count)

            fixture.emulator.emulator.setFaults(FaultPlan())
            try await fixture.makeOwedPushesDue()
            #expect(try await dispatcher.drain() == followers.count)
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.state == .ended)
            }
        }
    }

    @Test func aBroadcastAPNsAsksToRetryIsOwedAndTheFollowersDoNotWait() async throws {
        try await DispatchFixture.with("carry_broadcast") { fixture in
            let channelID = try #require(try await fixture.feed("game-1", channelPolicy: 0))
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            let dispatcher = fixture.dispatcher()
            fixture.emulator.emulator.setFaults(FaultPlan(script: [.status(503, reason: "ServiceUnavailable")]))
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(1)]), "the follower waited behind the broadcast")
            #expect(try await fixture.owed(update: update.updateID) == 1)

            try await fixture.makeOwedPushesDue()
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.owed(update: update.updateID) == 0)
            let broadcasts = try await fixture.store.client.query(
                """
                SELECT status FROM deliveries WHERE update_id = \(update.updateID) AND target_kind = 'channel' AND target = \(channelID)
                ORDER BY id
                """
            )
            var statuses: [Int] = []
            for try await status in broadcasts.decode(Int.self) { statuses.append(status) }
            #expect(statuses == [503, 200])
            #expect(try await fixture.counts(update.updateID) == (2, 0))
        }
    }

    @Test func aStandaloneActivitysRetriedUpdateIsSupersededByANewerOneAndGivenUpAtItsDeadline() async throws {
        try await DispatchFixture.with("carry_activity") { fixture in
            let (deviceID, _) = try await fixture.startedActivity(key: "a1")
            let dispatcher = fixture.dispatcher()
            let updates = ActivityUpdates(client: fixture.store.client, logger: fixture.store.logger)
            func update(_ home: Int, at timestamp: Int) async throws -> AcceptedUpdate {
                try await updates.accept(
                    .init(
                        appID: fixture.store.appID,
                        activityKey: "a1",
                        event: .update,
                        contentState: try RawJSON(validating: #"{"home":\#(home)}"#),
                        timestamp: timestamp
                    )
                )
            }
            fixture.emulator.emulator.setFaults(Self.refuseEverything)
            let first = try await update(1, at: fixture.now)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(first.updateID) == "pending")
            // A newer update replaces the one APNs asked to retry: it is not sent after the newer one.
            fixture.emulator.emulator.setFaults(FaultPlan())
            let second = try await update(2, at: fixture.now + 1)
            #expect(try await fixture.status(first.updateID) == "superseded")
            #expect(try await dispatcher.drain() == 1)
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(2)]))

            // Past the one-second deadline, an update APNs keeps refusing is a dead letter.
            fixture.emulator.emulator.setFaults(Self.refuseEverything)
            let third = try await update(3, at: fixture.now + 2)
            try await fixture.ageUpdate(third.updateID, bySeconds: 1.2)
            let hasty = fixture.dispatcher(Dispatcher.Settings(batchSize: 5, pageSize: 100, retryDeadline: .seconds(1)))
            #expect(try await hasty.dispatchOnce() == 1)
            #expect(try await fixture.status(third.updateID) == "failed")
            #expect(try await self.deadLetters(fixture, update: third.updateID) == ["ServiceUnavailable": 1])
            #expect(try await fixture.status(second.updateID) == "sent")
        }
    }

    /// An update's dead letters, counted by reason.
    private func deadLetters(_ fixture: DispatchFixture, update: Int64) async throws -> [String: Int] {
        let rows = try await fixture.store.client.query(
            "SELECT reason, count(*)::int FROM dead_letters WHERE update_id = \(update) GROUP BY reason"
        )
        var letters: [String: Int] = [:]
        for try await (reason, count) in rows.decode((String, Int).self) { letters[reason] = count }
        return letters
    }
}
