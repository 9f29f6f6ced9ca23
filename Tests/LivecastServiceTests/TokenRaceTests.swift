import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// A token rotation racing an update: the send lock keeps them apart, so an activity is never without a token and
/// nothing goes to the old token once the rotation has committed.
@Suite struct TokenRaceTests {
    private func feedID(_ fixture: DispatchFixture) async throws -> Int64 {
        let rows = try await fixture.store.client.query("SELECT id FROM feeds WHERE feed_key = 'game-1'")
        for try await id in rows.decode(Int64.self) { return id }
        throw TestFailure("no feed")
    }

    private func liveTokens(_ fixture: DispatchFixture, activity: String) async throws -> [String] {
        let rows = try await fixture.store.client.query(
            "SELECT t.token FROM activity_tokens t JOIN activities a ON a.id = t.activity_id WHERE a.activity_key = \(activity) AND t.invalidated_at IS NULL"
        )
        var tokens: [String] = []
        for try await token in rows.decode(String.self) { tokens.append(token) }
        return tokens
    }

    /// A dispatcher that reaches a follower while a rotation holds the feed's send lock waits for the rotation to
    /// commit, then sends to the new token: the old one (which APNs now refuses) never gets the push.
    @Test func aSendWaitsForARotationInProgressThenUsesTheNewToken() async throws {
        try await DispatchFixture.with("race_send_waits") { fixture in
            try await fixture.feed("game-1")
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            let activityID = try #require(fixture.shown(deviceID).first?.id)
            let newToken = try #require(fixture.emulator.emulator.rotateUpdateToken(deviceID: deviceID, activityID: activityID))
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            let feedID = try await self.feedID(fixture)
            let dispatcher = fixture.dispatcher()

            let locked = AsyncStream<Void>.makeStream()
            let commit = AsyncStream<Void>.makeStream()
            let rotation = Task {
                try await fixture.store.client.withTransaction(logger: fixture.store.logger) { connection in
                    // What a rotation does: the feed's send lock, then the old token out and the new one in.
                    try await connection.query(
                        "SELECT pg_advisory_xact_lock(\(SendLocks.feedNamespace), \(SendLocks.key(feedID)))",
                        logger: fixture.store.logger
                    )
                    try await connection.query(
                        "UPDATE activity_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE invalidated_at IS NULL",
                        logger: fixture.store.logger
                    )
                    try await connection.query(
                        """
                        INSERT INTO activity_tokens (app_id, activity_id, token, generation)
                        SELECT app_id, id, \(newToken), 2 FROM activities WHERE activity_key = 'a1'
                        """,
                        logger: fixture.store.logger
                    )
                    locked.continuation.yield()
                    for await _ in commit.stream { break }
                }
            }
            for await _ in locked.stream { break }
            let sending = Task { try await dispatcher.drain() }
            try await SendLockHolder.waitForWaiters(fixture)
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(0)]), "sent while the rotation held the lock")
            commit.continuation.yield()
            try await rotation.value
            #expect(try await sending.value == 1)
            let counts = try await fixture.counts(update.updateID)
            #expect(counts.sent == 1 && counts.failed == 0, "the push went to the old token: \(counts)")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(1)]))
        }
    }

    /// A rotation that meets a send in flight (which holds the send lock shared) waits until the send is done.
    @Test func aRotationWaitsForASendInFlightAndNeverLeavesAGap() async throws {
        try await DispatchFixture.with("race_rotation_waits") { fixture in
            try await fixture.feed("game-1")
            let (deviceID, oldToken) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            let activityID = try #require(fixture.shown(deviceID).first?.id)
            let newToken = try #require(fixture.emulator.emulator.rotateUpdateToken(deviceID: deviceID, activityID: activityID))
            let feedID = try await self.feedID(fixture)
            try await fixture.store.client.withConnection { sender in
                try await sender.query(
                    "SELECT pg_advisory_lock_shared(\(SendLocks.feedNamespace), \(SendLocks.key(feedID)))",
                    logger: fixture.store.logger
                )
                let rotation = Task {
                    try await Activities(client: fixture.store.client, logger: fixture.store.logger).register(
                        .init(appID: fixture.store.appID, activityKey: "a1", attributesType: "GameAttributes", feedKey: "game-1", pushToken: newToken)
                    )
                }
                try await SendLockHolder.waitForWaiters(fixture)
                #expect(try await self.liveTokens(fixture, activity: "a1") == [oldToken], "the rotation did not wait for the send")
                try await sender.query(
                    "SELECT pg_advisory_unlock_shared(\(SendLocks.feedNamespace), \(SendLocks.key(feedID)))",
                    logger: fixture.store.logger
                )
                #expect(try await rotation.value == .tokenRotated)
            }
            #expect(try await self.liveTokens(fixture, activity: "a1") == [newToken])
        }
    }

    /// Rotations and updates at once, many times: each ends with exactly one live token, the newest; an update
    /// reaches the device or failed on the token APNs had retired — never for want of a token.
    @Test func rotationsRacingUpdatesNeverLeaveAnActivityWithoutItsToken() async throws {
        try await DispatchFixture.with("race_many") { fixture in
            try await fixture.feed("game-1")
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            let activityID = try #require(fixture.shown(deviceID).first?.id)
            let activities = Activities(client: fixture.store.client, logger: fixture.store.logger)
            let dispatcher = fixture.dispatcher()
            let base = fixture.now
            for round in 1...12 {
                let newToken = try #require(fixture.emulator.emulator.rotateUpdateToken(deviceID: deviceID, activityID: activityID))
                async let rotated = activities.register(
                    .init(appID: fixture.store.appID, activityKey: "a1", attributesType: "GameAttributes", feedKey: "game-1", pushToken: newToken)
                )
                let update = try await fixture.update(feed: "game-1", home: round, timestamp: base + round)
                _ = try await dispatcher.drain()
                _ = try await rotated
                #expect(try await self.liveTokens(fixture, activity: "a1") == [newToken])
                let reasons = try await fixture.store.client.query("SELECT target, reason FROM deliveries WHERE update_id = \(update.updateID)")
                for try await (target, reason) in reasons.decode((String, String?).self) {
                    #expect(target != newToken && reason == "Unregistered", "round \(round): \(target) \(reason ?? "")")
                }
            }
            // Once the last rotation committed, the next update goes to the new token.
            let last = try await fixture.update(feed: "game-1", home: 99, timestamp: base + 20)
            _ = try await dispatcher.drain()
            #expect(try await fixture.counts(last.updateID) == (1, 0))
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(99)]))
        }
    }
}
