import Foundation
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Bulk imports against a real PostgreSQL: every row ends as registering the rows one by one, in order, would leave it.
@Suite struct RegistrationImportTests {
    private func token(_ fixture: StoreFixture, _ device: String, _ token: String, user: String? = nil) -> PushToStartTokens.Registration {
        .init(appID: fixture.appID, deviceID: device, attributesType: "GameAttributes", token: token, userID: user)
    }

    @Test func tokenRowsCreateRefreshRotateAndAreRefusedOneByOne() async throws {
        try await StoreFixture.with("import_tokens") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.token(fixture, "kept", "a0"))
            _ = try await tokens.register(self.token(fixture, "rotating", "b0"))
            _ = try await tokens.register(self.token(fixture, "holder", "c0"))
            let outcomes = try await tokens.importRegistrations([
                self.token(fixture, "new", "A1", user: "u1"),
                self.token(fixture, "kept", "a0", user: "u2"),
                self.token(fixture, "rotating", "b1"),
                self.token(fixture, "thief", "c0"),
                self.token(fixture, "bad", "xyz"),
                self.token(fixture, "twice", "d1"),
                self.token(fixture, "twice", "d2"),
            ])
            #expect(
                outcomes == [
                    .registered(.created), .registered(.unchanged), .registered(.rotated),
                    .refused(StoreError(.conflict, "another device or attributes type holds this token", field: "token")),
                    .refused(StoreError(.invalid, "the token must be hex: an even number of 2 to 200 digits", field: "token")),
                    .registered(.created), .registered(.rotated),
                ]
            )
            #expect(try await fixture.rows(device: "new").map(\.token) == ["a1"])
            #expect(
                try await fixture.rows(device: "rotating").map { "\($0.token) \($0.live) \($0.reason ?? "-")" } == ["b0 false rotated", "b1 true -"]
            )
            #expect(try await fixture.rows(device: "twice").map { "\($0.token) \($0.live)" } == ["d1 false", "d2 true"])
            #expect(try await fixture.rows(device: "thief").isEmpty)
            #expect(try await fixture.rows(device: "bad").isEmpty)
            let users = try await fixture.client.query("SELECT user_id FROM push_to_start_tokens WHERE device_id = 'kept'")
            for try await user in users.decode(String?.self) { #expect(user == "u2", "an unchanged row's details are refreshed") }
        }
    }

    @Test func aTokenMovesBetweenDevicesOnlyInTheRowsOrder() async throws {
        try await StoreFixture.with("import_token_order") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(self.token(fixture, "old-phone", "e0"))
            // The old phone gives up e0 first, so the new phone may take it.
            let inOrder = try await tokens.importRegistrations([self.token(fixture, "old-phone", "e1"), self.token(fixture, "new-phone", "e0")])
            #expect(inOrder == [.registered(.rotated), .registered(.created)])
            #expect(try await fixture.rows(device: "new-phone").map { "\($0.token) \($0.live)" } == ["e0 true"])
            // The other way round, the token is still the other device's when the first row comes.
            let reversed = try await tokens.importRegistrations([self.token(fixture, "third-phone", "e1"), self.token(fixture, "old-phone", "e2")])
            #expect(reversed.first == .refused(StoreError(.conflict, "another device or attributes type holds this token", field: "token")))
            #expect(reversed.last == .registered(.rotated))
            #expect(try await fixture.rows(device: "third-phone").isEmpty)
        }
    }

    @Test func manyRowsAreWrittenInChunks() async throws {
        try await StoreFixture.with("import_chunks") { fixture in
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            let count = RegistrationImport.chunkSize * 2 + 7
            let rows = (0..<count).map { self.token(fixture, "device-\($0)", String(format: "%08x", $0)) }
            let outcomes = try await tokens.importRegistrations(rows)
            #expect(outcomes.allSatisfy { $0 == .registered(.created) })
            let again = try await tokens.importRegistrations(rows)
            #expect(again.allSatisfy { $0 == .registered(.unchanged) })
            let live = try await fixture.client.query("SELECT count(*)::int FROM push_to_start_tokens WHERE invalidated_at IS NULL")
            for try await live in live.decode(Int.self) { #expect(live == count) }
        }
    }

    @Test func activityRowsAreRegisteredAsOneByOne() async throws {
        try await StoreFixture.with("import_activities") { fixture in
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            func activity(
                _ key: String,
                token: String? = nil,
                type: String = "GameAttributes",
                feed: String? = nil,
                channel: String? = nil,
                device: String? = nil
            )
                -> Activities.Registration
            {
                .init(
                    appID: fixture.appID,
                    activityKey: key,
                    attributesType: type,
                    feedKey: feed,
                    pushToken: token,
                    channelID: channel,
                    deviceID: device
                )
            }
            _ = try await activities.register(activity("known", token: "f0", device: "d0"))
            _ = try await activities.register(activity("ended"))
            _ = try await activities.endedByDevice(appID: fixture.appID, activityKey: "ended")
            let outcomes = try await activities.importRegistrations([
                activity("new", token: "F1", device: "d1"),
                activity("waiting"),
                activity("known", device: "d9"),
                activity("known-again", token: "f0"),
                activity("ended", token: "f2"),
                activity("no-feed", feed: "nope"),
                activity("both", token: "f3", channel: "c"),
                activity("twice", token: "f4"),
                activity("twice", token: "f5"),
                activity("new-type", type: "Other", device: "d1"),
            ])
            #expect(
                outcomes == [
                    .registered(.created), .registered(.created), .registered(.unchanged),
                    .refused(StoreError(.conflict, "another activity holds this token", field: "pushToken")),
                    .refused(StoreError(.conflict, "the activity has ended", field: "activityId")),
                    .refused(StoreError(.notFound, "no feed nope", field: "feed")),
                    .refused(StoreError(.invalid, "an activity is token-based or channel-based, not both", field: "channelId")),
                    .registered(.created), .registered(.tokenRotated), .registered(.created),
                ]
            )
            let rows = try await fixture.client.query(
                """
                SELECT a.activity_key, a.state, coalesce(a.device_id, '-'), coalesce(string_agg(t.token || ':' || t.generation || ':' || (t.invalidated_at IS NULL), ',' ORDER BY t.generation), '-')
                FROM activities a LEFT JOIN activity_tokens t ON t.activity_id = a.id GROUP BY a.id ORDER BY a.activity_key
                """
            )
            var found: [String] = []
            for try await (key, state, device, tokens) in rows.decode((String, String, String, String).self) {
                found.append("\(key) \(state) \(device) \(tokens)")
            }
            #expect(
                found == [
                    "ended ended - -", "known active d9 f0:1:true", "new active d1 f1:1:true", "new-type starting d1 -",
                    "twice active - f4:1:false,f5:2:true", "waiting starting - -",
                ]
            )
        }
    }
}
