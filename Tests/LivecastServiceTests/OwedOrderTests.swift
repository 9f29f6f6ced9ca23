import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// A target never has two pushes in flight, and never gets an older update after a newer one, whichever path each
/// push takes: the fan-out's page walk, an owed push claimed by a quick round of this or another dispatcher
/// (docs/ARCHITECTURE.md, invariant 1). Judged at the wire by the fixture, and here by what is owed and sent.
@Suite struct OwedOrderTests {
    private static let refuseEverything = FaultPlan(failureShare: 1, failureAnswers: [.status(503, reason: "ServiceUnavailable")])

    @Test func aTargetWhoseOlderPushIsInFlightGetsTheNewerUpdateOnlyOnceThatIsAnswered() async throws {
        try await DispatchFixture.with("owed_in_flight") { fixture in
            let (followers, dispatcher, first) = try await self.owedFirstUpdate(fixture, followers: 10)
            fixture.emulator.emulator.setFaults(FaultPlan())

            // Another dispatcher holds three of the owed pushes: in flight, as far as anyone can tell.
            let busy = try await self.claimOwed(fixture, update: first.updateID, count: 3)
            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            let pushesBefore = fixture.emulator.emulator.wireRecords.count
            #expect(try await dispatcher.dispatchOnce(lane: .any) == 1)
            #expect(fixture.emulator.emulator.wireRecords.count - pushesBefore == followers.count - busy.count)
            #expect(try await fixture.owed(update: first.updateID) == busy.count, "owed pushes not in flight were kept")
            #expect(try await self.deferred(fixture, update: second.updateID) == busy, "the busy targets' newer pushes are not owed")
            #expect(try await dispatcher.dispatchOnce(lane: .quick) == 0, "a newer push was claimed beside the one in flight")

            // The push in flight is answered "retry later": the newer push replaces it.
            try await fixture.store.client.query("UPDATE owed_pushes SET claimed_by = NULL, not_before = now() WHERE update_id = \(first.updateID)")
            // Each busy target's newer push goes; the older one is settled unsent, in the same round or by the newer
            // one's delivery.
            #expect(try await dispatcher.drain() >= busy.count)
            #expect(try await fixture.owed(update: first.updateID) == 0)
            #expect(try await fixture.owed(update: second.updateID) == 0)
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                #expect(activity.contentState == .object(["home": .int(2)]))
                #expect(activity.ignoredPushes.isEmpty)
            }
            #expect(fixture.emulator.emulator.wireRecords.count - pushesBefore == followers.count, "a superseded push was sent")
        }
    }

    @Test func anOwedPushIsDroppedUnsentOnceANewerUpdateOfItsFeedIsAccepted() async throws {
        try await DispatchFixture.with("owed_superseded_early") { fixture in
            let (followers, dispatcher, first) = try await self.owedFirstUpdate(fixture, followers: 5)
            fixture.emulator.emulator.setFaults(FaultPlan())

            // The newer update is accepted but not yet fanned out: the older owed pushes are due, yet never sent.
            _ = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            try await fixture.makeOwedPushesDue()
            let pushesBefore = fixture.emulator.emulator.wireRecords.count
            #expect(try await dispatcher.dispatchOnce(lane: .quick) == followers.count)
            #expect(fixture.emulator.emulator.wireRecords.count == pushesBefore, "an owed push of an older update was sent")
            #expect(try await fixture.owed(update: first.updateID) == 0)

            #expect(try await dispatcher.drain() == 1)
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(2)]))
            }
        }
    }

    @Test func ofTwoPushesOwedToOneTargetOnlyTheNewerIsSent() async throws {
        try await DispatchFixture.with("owed_newest_only") { fixture in
            let (followers, dispatcher, first) = try await self.owedFirstUpdate(fixture, followers: 4)
            let busy = try await self.claimOwed(fixture, update: first.updateID, count: followers.count)
            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await self.deferred(fixture, update: second.updateID) == busy)
            fixture.emulator.emulator.setFaults(FaultPlan())

            // The claims in flight lapse (their dispatcher died): both updates' pushes are owed to every follower.
            try await fixture.makeOwedPushesDue()
            let pushesBefore = fixture.emulator.emulator.wireRecords.count
            #expect(try await dispatcher.drain() == 2 * followers.count)
            let sent = fixture.emulator.emulator.wireRecords.dropFirst(pushesBefore)
            #expect(sent.count == followers.count)
            #expect(sent.allSatisfy { $0.timestamp == second.timestamp }, "an older owed push was sent: \(sent.map(\.timestamp))")
        }
    }

    /// A feed with `followers` token followers, and its first update, which APNs refused to every one of them: owed.
    private func owedFirstUpdate(
        _ fixture: DispatchFixture,
        followers count: Int
    ) async throws -> (followers: [(deviceID: String, token: String)], dispatcher: Dispatcher, first: AcceptedUpdate) {
        try await fixture.feed("game-1")
        let followers = try await fixture.tokenFollowers(count, feed: "game-1")
        let dispatcher = fixture.dispatcher()
        fixture.emulator.emulator.setFaults(Self.refuseEverything)
        let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
        #expect(try await dispatcher.dispatchOnce() == 1)
        #expect(try await fixture.owed(update: first.updateID) == count)
        return (followers, dispatcher, first)
    }

    /// Claims `count` of an update's owed pushes for a dispatcher that is not the test's, under a live lease.
    /// - Returns: Their targets.
    private func claimOwed(_ fixture: DispatchFixture, update: Int64, count: Int) async throws -> Set<Int64> {
        let rows = try await fixture.store.client.query(
            """
            UPDATE owed_pushes SET claimed_by = \(UUID()), not_before = now() + interval '1 minute'
            WHERE id IN (SELECT id FROM owed_pushes WHERE update_id = \(update) ORDER BY id LIMIT \(count))
            RETURNING target_id
            """
        )
        return try await rows.decode(Int64.self).reduce(into: []) { $0.insert($1) }
    }

    /// The targets an update's pushes wait for behind an older push in flight.
    private func deferred(_ fixture: DispatchFixture, update: Int64) async throws -> Set<Int64> {
        let rows = try await fixture.store.client.query(
            "SELECT target_id FROM owed_pushes WHERE update_id = \(update) AND last_reason = 'AwaitingEarlierPush'"
        )
        return try await rows.decode(Int64.self).reduce(into: []) { $0.insert($1) }
    }
}
