import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// A big fan-out split into slices of its followers (`sql/0036`): any dispatcher claims a slice, another takes it
/// over from its checkpoint, and two updates of one feed cross on different slices, never on one follower. The
/// fixture judges every push at the wire.
@Suite struct FanOutSliceTests {
    /// 200 followers a slice, walked 50 at a time.
    private static let settings = Dispatcher.Settings(batchSize: 5, pageSize: 50, lease: .seconds(2), sliceSize: 200)

    @Test(.timeLimit(.minutes(5))) func aBigFanOutIsSplitAndEveryDispatcherWalksSlices() async throws {
        try await DispatchFixture.with("slices_claims", latency: EmulatorLatency(base: .milliseconds(30))) { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(1_000, feed: "game-1")
            let pushesBefore = fixture.emulator.emulator.wireRecords.count
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)

            // The dispatcher that claims the update splits it and walks nothing itself.
            #expect(try await fixture.dispatcher(Self.settings).dispatchOnce() == 1)
            let slices = try await Self.slices(of: update.updateID, fixture)
            #expect(slices.map(\.followers) == [200, 200, 200, 200, 200], "each follower in exactly one slice")
            #expect(slices.allSatisfy { $0.status == "pending" })
            #expect(try await fixture.status(update.updateID) == "dispatching")
            #expect(fixture.emulator.emulator.wireRecords.count == pushesBefore, "no follower was sent anything yet")

            // One dispatcher holds at most two slices of an app at once: the app's other work gets the rest.
            let greedy = Self.outbox(fixture, lease: .seconds(30))
            let first = try #require(try await greedy.claimSlice(perApp: 2))
            let second = try #require(try await greedy.claimSlice(perApp: 2))
            #expect(try await greedy.claimSlice(perApp: 2) == nil)
            #expect(first.slice != second.slice)
            try await fixture.store.client.withConnection { connection in
                for claim in [first, second] { try await greedy.release(claim, status: .pending, on: connection) }
            }

            // Three dispatchers (three instances) walk the slices side by side.
            let walked = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    let dispatcher = fixture.dispatcher(Self.settings)
                    group.addTask { try await Self.drain(dispatcher, until: update.updateID, in: fixture) }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(walked.filter { $0 > 0 }.count >= 2, "slices walked by \(walked)")
            #expect(walked.reduce(0, +) == 5)
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(try await fixture.counts(update.updateID) == (1_000, 0))
            #expect(try await Self.slices(of: update.updateID, fixture).allSatisfy { $0.status == "sent" })
            for follower in followers {
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(1)]))
            }
            #expect(fixture.emulator.emulator.wireRecords.count == pushesBefore + 1_000, "each follower once")
        }
    }

    @Test(.timeLimit(.minutes(5))) func aSliceWhoseDispatcherDiedIsTakenOverFromItsCheckpoint() async throws {
        try await DispatchFixture.with("slices_takeover") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(400, feed: "game-1")
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await fixture.dispatcher(Self.settings).dispatchOnce() == 1)

            // A dispatcher claims the first slice, checkpoints half of it, and dies.
            let dead = Self.outbox(fixture, lease: .seconds(1))
            var claim = try #require(try await dead.claimSlice(perApp: 2))
            let slice = try #require(try await Self.slices(of: update.updateID, fixture).first)
            #expect(claim.slice?.id == slice.id)
            let half = try await Self.followerIDs(after: slice.lower, count: 100, fixture).last!
            try await fixture.store.client.withConnection { connection in
                try await dead.checkpoint(&claim, cursor: half, sent: 100, failed: 0, on: connection)
            }

            // Once its lease has run out (moved to now, not waited for), another dispatcher takes the slice over
            // from that checkpoint.
            try await fixture.store.client.query("UPDATE fan_out_slices SET not_before = now() WHERE id = \(slice.id)")
            let survivor = fixture.dispatcher(Self.settings)
            #expect(try await Self.drain(survivor, until: update.updateID, in: fixture) == 2)
            #expect(try await fixture.status(update.updateID) == "sent")
            #expect(try await fixture.counts(update.updateID) == (400, 0))

            // The dead dispatcher's late checkpoint is refused.
            await #expect(throws: LostClaim.self) {
                try await fixture.store.client.withConnection { connection in
                    try await dead.checkpoint(&claim, cursor: slice.upper, sent: 100, failed: 0, on: connection)
                }
            }
            #expect(try await fixture.counts(update.updateID) == (400, 0))
            // The followers up to the checkpoint were the dead dispatcher's (it sent them nothing here); the rest got
            // the update once.
            let skipped = Set(try await Self.devices(upTo: half, fixture))
            #expect(skipped.count == 100)
            for follower in followers {
                let home = fixture.shown(follower.deviceID).first?.contentState
                #expect(home == .object(["home": .int(skipped.contains(follower.deviceID) ? 0 : 1)]))
            }
        }
    }

    @Test(.timeLimit(.minutes(5))) func twoUpdatesCrossOnSlicesNeverOnAFollower() async throws {
        try await DispatchFixture.with("slices_crossing") { fixture in
            try await fixture.feed("game-1")
            let followers = try await fixture.tokenFollowers(600, feed: "game-1")
            let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            let dispatcher = fixture.dispatcher(Self.settings)
            #expect(try await dispatcher.dispatchOnce() == 1)

            // A slow dispatcher holds the first update's first slice.
            let slow = Self.outbox(fixture, lease: .seconds(60))
            let held = try #require(try await slow.claimSlice(perApp: 2))
            let heldSlice = try #require(try await Self.slices(of: first.updateID, fixture).first)
            #expect(held.slice?.id == heldSlice.id)

            // The second update is claimed and split while the first is still out, and goes as far as it may: the
            // slices the first has finished, not the one still held.
            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            let deadline = Date().addingTimeInterval(120)
            var secondSlices: [Slice] = []
            while Date() < deadline {
                _ = try await dispatcher.dispatchOnce()
                secondSlices = try await Self.slices(of: second.updateID, fixture)
                if secondSlices.count == 3, secondSlices.dropFirst().allSatisfy({ $0.status == "sent" }) { break }
            }
            #expect(secondSlices.map(\.status) == ["pending", "sent", "sent"])
            #expect(try await fixture.status(first.updateID) == "dispatching")
            #expect(try await fixture.status(second.updateID) == "dispatching")
            let heldDevices = Set(try await Self.devices(upTo: heldSlice.upper, fixture))
            #expect(heldDevices.count == 200)
            for follower in followers {
                let expected = heldDevices.contains(follower.deviceID) ? 0 : 2
                #expect(fixture.shown(follower.deviceID).first?.contentState == .object(["home": .int(expected)]))
            }

            // The update's status counts what its slices have yet to walk.
            let firstStatus = try #require(
                try await UpdateStatus.read(
                    updateID: first.updateID,
                    appID: fixture.store.appID,
                    client: fixture.store.client,
                    logger: fixture.store.logger
                )
            )
            #expect(firstStatus.pending == 200)
            #expect(firstStatus.sent == 400)

            // The slow dispatcher lets go; the held followers get the first update, then the second.
            try await fixture.store.client.withConnection { try await slow.release(held, status: .pending, on: $0) }
            #expect(try await Self.drain(dispatcher, until: second.updateID, in: fixture) == 2)
            #expect(try await fixture.status(first.updateID) == "sent")
            #expect(try await fixture.status(second.updateID) == "sent")
            #expect(try await fixture.counts(first.updateID) == (600, 0))
            #expect(try await fixture.counts(second.updateID) == (600, 0))
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                #expect(activity.contentState == .object(["home": .int(2)]))
            }
            // At the wire, each held follower got the first update before the second.
            let heldTokens = Set(followers.filter { heldDevices.contains($0.deviceID) }.map { "device:\($0.token.lowercased())" })
            var timestamps: [String: [Int]] = [:]
            for record in fixture.emulator.emulator.wireRecords where heldTokens.contains(record.target) && record.event == "update" {
                if let timestamp = record.timestamp { timestamps[record.target, default: []].append(timestamp) }
            }
            #expect(timestamps.count == 200)
            #expect(timestamps.values.allSatisfy { $0 == [first.timestamp, second.timestamp] })
        }
    }

    /// A slice's row and how many followers it holds.
    struct Slice {
        var id: Int64
        var lower: Int64
        var upper: Int64
        var status: String
        var followers: Int
    }

    private static func slices(of updateID: Int64, _ fixture: DispatchFixture) async throws -> [Slice] {
        let rows = try await fixture.store.client.query(
            """
            SELECT s.id, s.lower_id, s.upper_id, s.status,
                (SELECT count(*)::int FROM activities a WHERE a.feed_id = s.feed_id AND a.id > s.lower_id AND a.id <= s.upper_id)
            FROM fan_out_slices s WHERE s.update_id = \(updateID) ORDER BY s.lower_id
            """
        )
        var slices: [Slice] = []
        for try await row in rows.decode((Int64, Int64, Int64, String, Int).self) {
            slices.append(Slice(id: row.0, lower: row.1, upper: row.2, status: row.3, followers: row.4))
        }
        return slices
    }

    private static func followerIDs(after lower: Int64, count: Int, _ fixture: DispatchFixture) async throws -> [Int64] {
        let rows = try await fixture.store.client.query("SELECT id FROM activities WHERE id > \(lower) ORDER BY id LIMIT \(count)")
        return try await rows.decode(Int64.self).reduce(into: []) { $0.append($1) }
    }

    /// The devices of the followers up to an activity id.
    private static func devices(upTo id: Int64, _ fixture: DispatchFixture) async throws -> [String] {
        let rows = try await fixture.store.client.query("SELECT device_id FROM activities WHERE id <= \(id)")
        return try await rows.decode(String.self).reduce(into: []) { $0.append($1) }
    }

    /// An outbox under a claimer of its own: a dispatcher that claims and then stalls or dies.
    private static func outbox(_ fixture: DispatchFixture, lease: Duration) -> Outbox {
        Outbox(
            database: fixture.store.client,
            claimer: UUID(),
            lease: lease,
            retryDeadline: RetryDeadline(period: .seconds(3600)),
            logger: fixture.store.logger
        )
    }

    /// Dispatches until the update is sent. - Returns: how many claims the dispatcher ran.
    private static func drain(_ dispatcher: Dispatcher, until updateID: Int64, in fixture: DispatchFixture) async throws -> Int {
        let deadline = Date().addingTimeInterval(120)
        var claims = 0
        while try await fixture.status(updateID) != "sent", Date() < deadline {
            let handled = try await dispatcher.dispatchOnce()
            claims += handled
            if handled == 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        return claims
    }
}
