import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Activities against a real PostgreSQL: registration, token rotation without a gap, lifecycle.
@Suite struct ActivitiesTests {
    private func registration(
        _ fixture: StoreFixture,
        key: String = "activity-1",
        token: String? = nil,
        feed: String? = nil,
        channel: String? = nil
    ) -> Activities.Registration {
        .init(
            appID: fixture.appID,
            activityKey: key,
            attributesType: "GameAttributes",
            feedKey: feed,
            pushToken: token,
            channelID: channel,
            deviceID: "device-1"
        )
    }

    private func tokens(_ fixture: StoreFixture, key: String = "activity-1") async throws -> [(token: String, generation: Int, live: Bool)] {
        let rows = try await fixture.client.query(
            "SELECT t.token, t.generation, t.invalidated_at IS NULL FROM activity_tokens t JOIN activities a ON a.id = t.activity_id WHERE a.activity_key = \(key) ORDER BY t.generation"
        )
        var result: [(String, Int, Bool)] = []
        for try await row in rows.decode((String, Int, Bool).self) { result.append(row) }
        return result
    }

    /// An activity's state, as the dispatcher's queries filter on it (`starting` and `active` are sent to).
    private func state(_ fixture: StoreFixture, key: String = "activity-1") async throws -> String? {
        let rows = try await fixture.client.query("SELECT state FROM activities WHERE app_id = \(fixture.appID) AND activity_key = \(key)")
        for try await state in rows.decode(String.self) { return state }
        return nil
    }

    @Test func tokenBasedActivityRotatesWithoutAGap() async throws {
        try await StoreFixture.with("activities_rotate") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            #expect(try await activities.register(self.registration(fixture)) == .created)
            #expect(try await self.tokens(fixture).isEmpty)
            #expect(try await activities.register(self.registration(fixture, token: "AB01")) == .tokenAdded)
            #expect(try await activities.register(self.registration(fixture, token: "ab01")) == .unchanged)
            #expect(try await activities.register(self.registration(fixture, token: "ab02")) == .tokenRotated)
            let history = try await self.tokens(fixture)
            #expect(history.map(\.token) == ["ab01", "ab02"])
            #expect(history.map(\.generation) == [1, 2])
            #expect(history.map(\.live) == [false, true])
            #expect(history.filter(\.live).map(\.token) == ["ab02"], "the rotated token replaced the old one")
        }
    }

    @Test func racingRotationsLeaveExactlyOneLiveToken() async throws {
        try await StoreFixture.with("activities_race") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            _ = try await activities.register(self.registration(fixture, token: "cd00"))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 1...20 {
                    group.addTask { _ = try? await activities.register(self.registration(fixture, token: String(format: "cd%02x", index))) }
                }
                try await group.waitForAll()
            }
            let history = try await self.tokens(fixture)
            #expect(history.filter(\.live).count == 1)
            #expect(Set(history.map(\.generation)).count == history.count)
        }
    }

    @Test func feedsChannelsAndTokensMustFit() async throws {
        try await StoreFixture.with("activities_refusals") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            try await fixture.client.query(
                "INSERT INTO feeds (app_id, feed_key, attributes_type, attributes) VALUES (\(fixture.appID), 'game-4711', 'DeliveryAttributes', '{}')"
            )
            try await fixture.client.query(
                "INSERT INTO channels (app_id, channel_id, storage_policy, state) VALUES (\(fixture.appID), 'cmV0aXJlZA==', 0, 'retired')"
            )
            let refusals: [(Activities.Registration, StoreError.Code, String)] = [
                (self.registration(fixture, feed: "no-such-feed"), .notFound, "feed"),
                (self.registration(fixture, feed: "game-4711"), .conflict, "attributesType"),
                (self.registration(fixture, channel: "dW5rbm93bg=="), .notFound, "channelId"),
                (self.registration(fixture, channel: "cmV0aXJlZA=="), .conflict, "channelId"),
                (self.registration(fixture, token: "zz"), .invalid, "pushToken"),
                (self.registration(fixture, token: "aa", channel: "cmV0aXJlZA=="), .invalid, "channelId"),
            ]
            for (registration, code, field) in refusals {
                do {
                    _ = try await activities.register(registration)
                    Issue.record("accepted \(registration)")
                } catch let error as StoreError {
                    #expect(error.code == code)
                    #expect(error.field == field)
                }
            }
            _ = try await activities.register(self.registration(fixture, key: "other", token: "ef01"))
            await #expect(throws: StoreError.self) { try await activities.register(self.registration(fixture, token: "ef01")) }
            let count = try await fixture.client.query("SELECT count(*)::int FROM activities")
            for try await rows in count.decode(Int.self) { #expect(rows == 1) }
        }
    }

    @Test func anActivityEndedByTheDeviceTakesNoMoreTokens() async throws {
        try await StoreFixture.with("activities_end") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            _ = try await activities.register(self.registration(fixture, token: "aa11"))
            #expect(try await activities.endedByDevice(appID: fixture.appID, activityKey: "activity-1"))
            #expect(try await !activities.endedByDevice(appID: fixture.appID, activityKey: "activity-1"))
            #expect(try await self.state(fixture) == "ended")
            await #expect(throws: StoreError.self) { try await activities.register(self.registration(fixture, token: "aa12")) }
            #expect(try await self.tokens(fixture).map(\.token) == ["aa11"])
        }
    }

    @Test func unregisteredOnlyInvalidatesAnUpdateTokenRegisteredBeforeAPNsSaidSo() async throws {
        try await StoreFixture.with("activities_invalidate") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            _ = try await activities.register(self.registration(fixture, token: "ba01"))
            let rows = try await fixture.client.query("SELECT id FROM activity_tokens WHERE token = 'ba01'")
            var tokenID: Int64 = 0
            for try await id in rows.decode(Int64.self) { tokenID = id }
            let before = Int64(Date().timeIntervalSince1970 * 1000) - 60_000
            #expect(try await !activities.invalidateToken(id: tokenID, reason: "Unregistered", invalidSinceMillis: before))
            #expect(try await self.tokens(fixture).filter(\.live).map(\.token) == ["ba01"])
            #expect(try await activities.invalidateToken(id: tokenID, reason: "BadDeviceToken", invalidSinceMillis: nil))
            #expect(try await self.tokens(fixture).filter(\.live).isEmpty, "an invalidated token is not live")
        }
    }
}
