import Foundation
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Accepting a feed's starts, updates and end into the outbox: the feed's ordering, its stale policy, its end,
/// payload limits by how followers listen, and the priority-10 budget.
@Suite struct FeedUpdatesTests {
    private let now = 1_800_000_000

    private func feed(_ fixture: StoreFixture, _ key: String = "game-1", staleAfterSeconds: Int? = nil) async throws -> FeedUpdates {
        _ = try await Feeds(client: fixture.client, logger: fixture.logger).put(
            .init(
                appID: fixture.appID,
                feedKey: key,
                attributesType: "GameAttributes",
                attributes: try RawJSON(validating: #"{"team":"Giants"}"#),
                staleAfter: staleAfterSeconds.map { Duration.seconds($0) }
            )
        )
        return FeedUpdates(client: fixture.client, logger: fixture.logger)
    }

    private func update(
        _ fixture: StoreFixture,
        _ event: LiveActivityEvent = .update,
        home: Int? = 1,
        timestamp: Int? = nil
    ) throws -> FeedUpdates.Request {
        .init(
            appID: fixture.appID,
            feedKey: "game-1",
            event: event,
            contentState: try home.map { try RawJSON(validating: #"{"home":\#($0)}"#) },
            timestamp: timestamp
        )
    }

    private func code(_ body: () async throws -> Void) async -> StoreError.Code? {
        do {
            try await body()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    private func rows(_ fixture: StoreFixture) async throws -> [(timestamp: Int, status: String, payload: String?)] {
        let rows = try await fixture.client.query("SELECT timestamp, status, payload FROM updates ORDER BY id")
        var result: [(Int, String, String?)] = []
        for try await row in rows.decode((Int, String, String?).self) { result.append(row) }
        return result
    }

    @Test func updatesFollowTheFeedsOrderAndStalePolicy() async throws {
        try await StoreFixture.with("feed_updates_order") { fixture in
            let updates = try await self.feed(fixture, staleAfterSeconds: 900)
            let first = try await updates.accept(try self.update(fixture, timestamp: self.now))
            #expect(first.timestamp == self.now)
            #expect(try LiveActivityPayload(decoding: Array((try await self.rows(fixture))[0].payload!.utf8)).staleDate == self.now + 900)
            #expect(
                await self.code { _ = try await updates.accept(try self.update(fixture, home: 9, timestamp: self.now - 1)) }
                    == .staleTimestamp
            )
            // Same second: takes the place and the timestamp of the first, which no dispatcher had begun.
            let second = try await updates.accept(try self.update(fixture, home: 2, timestamp: self.now))
            #expect(second.coalesced && second.timestamp == self.now)
            #expect(try await self.rows(fixture).map(\.status) == ["superseded", "pending"])
            // Once a fan-out has begun, the next update of that second goes out at the next one.
            try await fixture.client.query("UPDATE updates SET cursor_id = 1 WHERE status = 'pending'")
            let third = try await updates.accept(try self.update(fixture, home: 3, timestamp: self.now))
            #expect(third.coalesced && third.timestamp == self.now + 1)
            #expect(try await self.rows(fixture).map(\.status) == ["superseded", "pending", "pending"])
            let feed = try await Feeds(client: fixture.client, logger: fixture.logger).get(appID: fixture.appID, feedKey: "game-1")
            #expect(feed?.state == .active && feed?.lastTimestamp == Int64(self.now + 1))
            #expect(feed?.contentState?.text == #"{"home":3}"#)
        }
    }

    @Test func anEndKeepsTheLastContentClampsDismissalAndClosesTheFeed() async throws {
        try await StoreFixture.with("feed_updates_end") { fixture in
            let updates = try await self.feed(fixture)
            _ = try await updates.accept(try self.update(fixture, home: 3, timestamp: self.now))
            var end = try self.update(fixture, .end, home: nil, timestamp: self.now + 10)
            end.content.dismissalDate = self.now + 10 + 5 * 3600
            let accepted = try await updates.accept(end)
            #expect(accepted.dismissalDateClamped)
            let payload = try LiveActivityPayload(decoding: Array((try await self.rows(fixture))[1].payload!.utf8))
            #expect(payload.event == .end && payload.contentState?.text == #"{"home":3}"#)
            #expect(payload.dismissalDate == self.now + 10 + 4 * 3600)
            #expect(await self.code { _ = try await updates.accept(try self.update(fixture, timestamp: self.now + 20)) } == .feedEnded)
            let start = FeedStarts.Request(
                appID: fixture.appID,
                feedKey: "game-1",
                audience: .everyone,
                contentState: try RawJSON(validating: "{}"),
                alert: .init(title: "x")
            )
            #expect(
                await self.code { _ = try await FeedStarts(client: fixture.client, logger: fixture.logger).start(start) } == .feedEnded
            )
            #expect(try await self.rows(fixture).count == 2)
        }
    }

    @Test func thePayloadLimitDependsOnHowFollowersListen() async throws {
        try await StoreFixture.with("feed_updates_size") { fixture in
            let updates = try await self.feed(fixture)
            let big = try RawJSON(validating: #"{"text":"\#(String(repeating: "x", count: 4500))"}"#)
            var request = try self.update(fixture)
            request.content.contentState = big
            // No channel: every follower has a token, so the device limit (4,096 bytes) applies.
            #expect(await self.code { _ = try await updates.accept(request) } == .payloadTooLarge)
            try await fixture.client.query(
                "INSERT INTO channels (app_id, channel_id, storage_policy, feed_id) SELECT \(fixture.appID), 'Y2hhbm5lbA==', 0, id FROM feeds"
            )
            // Only a channel: the broadcast limit (5,120 bytes).
            _ = try await updates.accept(request)
            _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
                .init(appID: fixture.appID, activityKey: "a1", attributesType: "GameAttributes", feedKey: "game-1", pushToken: "ab01")
            )
            request.content.timestamp = self.now + 5
            #expect(await self.code { _ = try await updates.accept(request) } == .payloadTooLarge)
            #expect(try await self.rows(fixture).count == 1)
        }
    }

    @Test func thePriorityTenBudgetDowngradesTheExcess() async throws {
        try await StoreFixture.with("feed_updates_budget") { fixture in
            let updates = try await self.feed(fixture)
            try await fixture.client.query("UPDATE apps SET priority10_hourly_cap = 2 WHERE id = \(fixture.appID)")
            // The budget is the clock hour's: should the hour turn during the three updates (a slow run near the top
            // of the hour), they go again on an unspent budget, with timestamps after the first try's.
            var priorities: [(Int, Bool)] = []
            for attempt in 0..<2 {
                try await fixture.client.query("DELETE FROM priority_budget WHERE app_id = \(fixture.appID)")
                let hour = try await fixture.databaseHour()
                priorities = []
                for index in 0..<3 {
                    var request = try self.update(fixture, home: index, timestamp: self.now + attempt * 30 + index * 10)
                    request.content.priority = 10
                    let accepted = try await updates.accept(request)
                    priorities.append((accepted.priority, accepted.priorityDowngraded))
                }
                if try await fixture.databaseHour() == hour { break }
            }
            #expect(priorities.map(\.0) == [10, 10, 5])
            #expect(priorities.map(\.1) == [false, false, true])
            // Priority 5 does not spend the budget.
            #expect(try await updates.accept(try self.update(fixture, home: 9, timestamp: self.now + 90)).priorityDowngraded == false)
        }
    }

    @Test func startsCarryBothFormsAndCheckTheirAudience() async throws {
        try await StoreFixture.with("feed_starts") { fixture in
            _ = try await self.feed(fixture, staleAfterSeconds: 600)
            let starts = FeedStarts(client: fixture.client, logger: fixture.logger)
            var request = FeedStarts.Request(
                appID: fixture.appID,
                feedKey: "game-1",
                audience: .devices([]),
                contentState: try RawJSON(validating: #"{"home":0}"#),
                alert: .init(title: "Kick-off")
            )
            #expect(await self.code { _ = try await starts.start(request) } == .invalid)
            request.audience = .users(["u1", ""])
            #expect(await self.code { _ = try await starts.start(request) } == .invalid)
            try await fixture.client.query(
                "INSERT INTO channels (app_id, channel_id, storage_policy, feed_id) SELECT \(fixture.appID), 'Y2hhbm5lbA==', 1, id FROM feeds"
            )
            request.audience = .users(["u1"])
            let accepted = try await starts.start(request)
            #expect(accepted.priority == 10)
            let rows = try await fixture.client.query(
                "SELECT payload, channel_payload, audience_kind, audience FROM updates WHERE id = \(accepted.updateID)"
            )
            for try await (payload, channelPayload, kind, audience) in rows.decode((String, String?, String, [String]).self) {
                let tokenForm = try LiveActivityPayload(decoding: Array(payload.utf8))
                #expect(tokenForm.event == .start && tokenForm.inputPushToken && tokenForm.attributesType == "GameAttributes")
                #expect(tokenForm.staleDate == tokenForm.timestamp + 600)
                let channelForm = try LiveActivityPayload(decoding: Array((channelPayload ?? "").utf8))
                #expect(channelForm.inputPushChannel == "Y2hhbm5lbA==" && !channelForm.inputPushToken)
                #expect(kind == "users" && audience == ["u1"])
            }
        }
    }

    @Test func anActivityThatFollowsAFeedTakesTheFeedsUpdatesOnly() async throws {
        try await StoreFixture.with("feed_updates_follower") { fixture in
            _ = try await self.feed(fixture)
            _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
                .init(appID: fixture.appID, activityKey: "a1", attributesType: "GameAttributes", feedKey: "game-1", pushToken: "ab01")
            )
            let request = ActivityUpdates.Request(
                appID: fixture.appID,
                activityKey: "a1",
                event: .update,
                contentState: try RawJSON(validating: "{}")
            )
            #expect(
                await self.code { _ = try await ActivityUpdates(client: fixture.client, logger: fixture.logger).accept(request) }
                    == .conflict
            )
        }
    }
}
