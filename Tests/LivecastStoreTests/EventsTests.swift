import Foundation
import LivecastCore
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Events written in the transaction of each lifecycle fact (`sql/0035_events.sql`), once per fact, and the event
/// feed's cursor, which never skips an event whose transaction commits late.
@Suite struct EventsTests {
    private let now = 1_800_000_000

    /// The app's events in the feed's order: type, subject id and data.
    private func events(_ fixture: StoreFixture) async throws -> [(type: String, subject: String, data: JSONValue)] {
        let rows = try await fixture.client.query(
            "SELECT type, subject_id, data::text FROM events WHERE app_id = \(fixture.appID) ORDER BY transaction_id, id"
        )
        var events: [(String, String, JSONValue)] = []
        for try await (type, subject, data) in rows.decode((String, String, String).self) {
            events.append((type, subject, try RawJSON(validating: data).value))
        }
        return events
    }

    private func count(_ fixture: StoreFixture, _ type: EventType) async throws -> Int {
        try await self.events(fixture).filter { $0.type == type.rawValue }.count
    }

    private func register(_ fixture: StoreFixture, _ key: String, token: String, feed: String? = nil, device: String = "device-1") async throws {
        _ = try await Activities(client: fixture.client, logger: fixture.logger).register(
            .init(appID: fixture.appID, activityKey: key, attributesType: "GameAttributes", feedKey: feed, pushToken: token, deviceID: device)
        )
    }

    private func end(_ fixture: StoreFixture, _ key: String, by endedBy: EndedBy) async throws {
        var end = ActivityUpdates.Request(appID: fixture.appID, activityKey: key, event: .end, timestamp: self.now)
        end.endedBy = endedBy
        _ = try await ActivityUpdates(client: fixture.client, logger: fixture.logger).accept(end)
    }

    private func endedBy(_ fixture: StoreFixture, _ key: String) async throws -> [String] {
        try await self.events(fixture).filter { $0.type == EventType.activityEnded.rawValue && $0.subject == key }
            .map { $0.data["endedBy"]?.stringValue ?? "?" }
    }

    @Test func activitiesReportRegistrationRotationEndAndDismissalOnceEach() async throws {
        try await StoreFixture.with("events_activities") { fixture in
            try await self.register(fixture, "a-1", token: "aa01")
            try await self.register(fixture, "a-1", token: "aa01")  // the same report again: nothing new
            try await self.register(fixture, "a-1", token: "aa02")
            #expect(try await self.count(fixture, .activityRegistered) == 1)
            let rotated = try await self.events(fixture).filter { $0.type == EventType.activityTokenRotated.rawValue }
            #expect(rotated.count == 1)
            #expect(rotated.first?.data["token"] == .string("aa02"))
            #expect(try await self.count(fixture, .tokenInvalidated) == 0, "a rotation is not an invalidation")

            try await self.end(fixture, "a-1", by: .backend)
            #expect(try await self.endedBy(fixture, "a-1") == ["backend"])
            #expect(try await Activities(client: fixture.client, logger: fixture.logger).dismissedByDevice(appID: fixture.appID, activityKey: "a-1"))
            _ = try await Activities(client: fixture.client, logger: fixture.logger).dismissedByDevice(appID: fixture.appID, activityKey: "a-1")
            let dismissed = try await self.events(fixture).filter { $0.type == EventType.activityDismissed.rawValue }
            #expect(dismissed.map(\.subject) == ["a-1"])
            #expect(dismissed.first?.data["dismissedBy"] == .string("device"))
            #expect(try await self.endedBy(fixture, "a-1") == ["backend"], "a dismissal after the end is no second end")

            // Every way an activity ends says who ended it.
            for key in ["a-2", "a-3", "a-4", "a-5"] { try await self.register(fixture, key, token: "bb0\(key.suffix(1))") }
            try await self.end(fixture, "a-2", by: .reaper)
            _ = try await Activities(client: fixture.client, logger: fixture.logger).endedByDevice(appID: fixture.appID, activityKey: "a-3")
            let a4 = try await self.activityID(fixture, "a-4")
            #expect(try await Reaping(client: fixture.client, logger: fixture.logger).markEnded(activityID: a4, by: .lifetime))
            #expect(try await Activities(client: fixture.client, logger: fixture.logger).dismissedByDevice(appID: fixture.appID, activityKey: "a-5"))
            #expect(try await self.endedBy(fixture, "a-2") == ["reaper"])
            #expect(try await self.endedBy(fixture, "a-3") == ["device"])
            #expect(try await self.endedBy(fixture, "a-4") == ["lifetime"])
            #expect(try await self.endedBy(fixture, "a-5") == ["device"])
            #expect(try await self.count(fixture, .activityEnded) == 5)
        }
    }

    @Test func aFeedsEndReachesItsFollowersWithWhoEndedIt() async throws {
        try await StoreFixture.with("events_feeds") { fixture in
            _ = try await Feeds(client: fixture.client, logger: fixture.logger).put(
                .init(appID: fixture.appID, feedKey: "game-1", attributesType: "GameAttributes", attributes: try RawJSON(validating: "{}"))
            )
            try await self.register(fixture, "f-1", token: "cc01", feed: "game-1")
            try await self.register(fixture, "f-2", token: "cc02", feed: "game-1", device: "device-2")
            var end = FeedUpdates.Request(appID: fixture.appID, feedKey: "game-1", event: .end, timestamp: self.now)
            end.endedBy = .reaper
            _ = try await FeedUpdates(client: fixture.client, logger: fixture.logger).accept(end)
            #expect(try await self.count(fixture, .activityEnded) == 0, "the followers end as the end reaches them")
            // The fan-out's statement that ends a page of followers (Outbox.endActivities).
            try await fixture.client.query("UPDATE activities SET state = 'ended', ended_at = now() WHERE feed_id IS NOT NULL")
            #expect(try await self.endedBy(fixture, "f-1") == ["reaper"])
            #expect(try await self.endedBy(fixture, "f-2") == ["reaper"])
        }
    }

    @Test func tokensUpdatesDeadLettersHoldsAndChannelsReportOnceEach() async throws {
        try await StoreFixture.with("events_others") { fixture in
            // token.invalidated, for an update token and a push-to-start token, with APNs' reason and timestamp.
            try await self.register(fixture, "a-1", token: "dd01")
            let tokenID = try await self.scalar(fixture, "SELECT id FROM activity_tokens WHERE token = 'dd01'")
            let activities = Activities(client: fixture.client, logger: fixture.logger)
            #expect(try await activities.invalidateToken(id: tokenID, reason: "Unregistered", invalidSinceMillis: Int64(self.now * 1000 + 60_000)))
            _ = try await activities.invalidateToken(id: tokenID, reason: "Unregistered", invalidSinceMillis: Int64(self.now * 1000 + 60_000))
            let tokens = PushToStartTokens(client: fixture.client, logger: fixture.logger)
            _ = try await tokens.register(.init(appID: fixture.appID, deviceID: "device-1", attributesType: "GameAttributes", token: "ee01"))
            #expect(try await tokens.invalidate(appID: fixture.appID, token: "ee01", reason: .badDeviceToken))
            let invalidated = try await self.events(fixture).filter { $0.type == EventType.tokenInvalidated.rawValue }
            #expect(invalidated.map(\.subject) == ["dd01", "ee01"])
            #expect(invalidated.first?.data["reason"] == .string("Unregistered"))
            #expect(invalidated.first?.data["apnsInvalidSinceMs"] == .int(self.now * 1000 + 60_000))
            #expect(invalidated.last?.data["kind"] == .string("pushToStart"))

            // update.completed with its counts, once, when the outbox row is done.
            try await self.register(fixture, "a-2", token: "dd02")
            let accepted = try await ActivityUpdates(client: fixture.client, logger: fixture.logger).accept(
                .init(
                    appID: fixture.appID,
                    activityKey: "a-2",
                    event: .update,
                    contentState: try RawJSON(validating: #"{"home":1}"#),
                    timestamp: self.now
                )
            )
            try await fixture.client.query("UPDATE updates SET attempts = 1 WHERE id = \(accepted.updateID)")
            #expect(try await self.count(fixture, .updateCompleted) == 0)
            try await fixture.client.query(
                "UPDATE updates SET status = 'sent', completed_at = now(), sent_count = 1 WHERE id = \(accepted.updateID)"
            )
            try await fixture.client.query("UPDATE updates SET attempts = 2 WHERE id = \(accepted.updateID)")
            let completed = try await self.events(fixture).filter { $0.type == EventType.updateCompleted.rawValue }
            #expect(completed.count == 1)
            #expect(completed.first?.data["counts"]?["sent"] == .int(1))
            #expect(completed.first?.data["counts"]?["owed"] == .int(0))
            #expect(completed.first?.data["activityId"] == .string("a-2"))

            // update.refused: a scheduled request refused when its time came, with why.
            try await fixture.client.query(
                """
                INSERT INTO scheduled_updates (app_id, route, target, body, send_at)
                VALUES (\(fixture.appID), 'activityUpdate', 'a-2', '{}', now() - interval '1 second')
                """
            )
            let scheduled = ScheduledUpdates(client: fixture.client, logger: fixture.logger)
            #expect(try await scheduled.takeNextDue { _ in .failure(.init("409 stale_timestamp")) })
            #expect(try await !scheduled.takeNextDue { _ in .failure(.init("none due")) })
            let refused = try await self.events(fixture).filter { $0.type == EventType.updateRefused.rawValue }
            #expect(refused.count == 1 && refused.first?.data["refusal"] == .string("409 stale_timestamp"))
            #expect(refused.first?.data["target"] == .string("a-2"))

            // push.dead_lettered, sending.held, sending.resumed.
            let activityID = try await self.activityID(fixture, "a-2")
            try await fixture.client.query(
                """
                INSERT INTO dead_letters (app_id, update_id, target_kind, target_id, reason, attempts, last_try_at)
                VALUES (\(fixture.appID), \(accepted.updateID), 'activity', \(activityID), 'InternalServerError', 3, now())
                """
            )
            let apps = Apps(client: fixture.client, masterKey: nil, logger: fixture.logger)
            try await apps.holdSending(id: fixture.appID, reason: "most tokens refused")
            try await apps.holdSending(id: fixture.appID, reason: "again")
            #expect(try await apps.resumeSending(id: fixture.appID))
            #expect(try await self.count(fixture, .pushDeadLettered) == 1)
            #expect(try await self.count(fixture, .sendingHeld) == 1)
            #expect(try await self.count(fixture, .sendingResumed) == 1)

            // channel.created, channel.retired, channel.missing_at_apns.
            let channels = Channels(client: fixture.client, logger: fixture.logger)
            try await channels.recordActive(appID: fixture.appID, channelID: "Y2hhbm5lbC0x", storagePolicy: 0, feedID: nil)
            try await channels.recordActive(appID: fixture.appID, channelID: "Y2hhbm5lbC0y", storagePolicy: 1, feedID: nil)
            try await channels.markRetired(appID: fixture.appID, channelID: "Y2hhbm5lbC0x")
            try await channels.markRetired(appID: fixture.appID, channelID: "Y2hhbm5lbC0x")
            try await fixture.client.query("UPDATE channels SET state = 'missing' WHERE channel_id = 'Y2hhbm5lbC0y'")
            #expect(try await self.count(fixture, .channelCreated) == 2)
            #expect(try await self.count(fixture, .channelRetired) == 1)
            #expect(try await self.count(fixture, .channelMissingAtAPNs) == 1)
        }
    }

    @Test func startsReportSentAndUnregisteredOnce() async throws {
        try await StoreFixture.with("events_starts") { fixture in
            let feedID = try await Feeds(client: fixture.client, logger: fixture.logger).put(
                .init(appID: fixture.appID, feedKey: "game-1", attributesType: "GameAttributes", attributes: try RawJSON(validating: "{}"))
            ).feed.id
            let updateID = try await self.scalar(
                fixture,
                """
                INSERT INTO updates (app_id, feed_id, event, timestamp, payload, status, completed_at, priority)
                VALUES (\(fixture.appID), \(feedID), 'start', \(self.now), '{}', 'sent', now(), 10) RETURNING id
                """
            )
            try await fixture.client.query(
                """
                INSERT INTO feed_starts (feed_id, device_id, update_id, started_at)
                VALUES (\(feedID), 'device-1', \(updateID), now() - interval '1 hour'), (\(feedID), 'device-2', \(updateID), now() - interval '1 hour'),
                       (\(feedID), 'device-3', \(updateID), now())
                """
            )
            #expect(try await self.count(fixture, .startSent) == 3)
            // device-2's app reported the started activity; device-3's start is still within the timeout.
            try await self.register(fixture, "started-2", token: "ff02", feed: "game-1", device: "device-2")
            let reaping = Reaping(client: fixture.client, logger: fixture.logger)
            let cutoff = Date().timeIntervalSince1970 - 300
            #expect(try await reaping.markUnregisteredStarts(fixture.appID, startedBefore: cutoff, .count) == 1)
            #expect(try await reaping.markUnregisteredStarts(fixture.appID, startedBefore: cutoff, .batches(of: 10)) == 1)
            #expect(try await reaping.markUnregisteredStarts(fixture.appID, startedBefore: cutoff, .batches(of: 10)) == 0)
            let unregistered = try await self.events(fixture).filter { $0.type == EventType.startUnregistered.rawValue }
            #expect(unregistered.map { $0.data["deviceId"] } == [.string("device-1")])
        }
    }

    @Test func theFeedNeverSkipsAnEventWhoseTransactionCommitsLate() async throws {
        try await StoreFixture.with("events_feed_cursor") { fixture in
            let events = Events(client: fixture.client, logger: fixture.logger)
            try await self.register(fixture, "early", token: "ab01")
            let first = try await self.settledPage(events, fixture, after: .start, count: 1)
            #expect(first.map(\.type) == ["activity.registered"])
            let cursor = try #require(first.last?.cursor)

            // A transaction takes its id, writes an event and stays open while a later one commits its own.
            let (opened, open) = AsyncStream.makeStream(of: Void.self)
            let (release, released) = AsyncStream.makeStream(of: Void.self)
            let slow = Task {
                try await fixture.client.withTransaction(logger: fixture.logger) { connection in
                    try await connection.query(
                        "INSERT INTO events (app_id, type, subject_kind, subject_id, data) VALUES (\(fixture.appID), 'sending.held', 'app', 'late', '{}')",
                        logger: fixture.logger
                    )
                    open.yield()
                    for await _ in release { break }
                }
            }
            for await _ in opened { break }
            try await self.register(fixture, "later", token: "ab02")
            let whileOpen = try await events.page(appID: fixture.appID, after: cursor, types: [], limit: 10)
            #expect(whileOpen.isEmpty, "a page waits for the older transaction still running")
            released.yield()
            released.finish()
            try await slow.value
            let after = try await self.settledPage(events, fixture, after: cursor, count: 2)
            #expect(after.map(\.type) == ["sending.held", "activity.registered"])
            let filtered = try await events.page(appID: fixture.appID, after: .start, types: [.activityRegistered], limit: 1)
            #expect(filtered.count == 1 && filtered.first?.json.contains("\"early\"") == true)
        }
    }

    @Test func webhookDeliveriesAreMadeInTheEventsTransactionForEndpointsThatWantThem() async throws {
        try await StoreFixture.with("events_deliveries") { fixture in
            let masterKey = MasterKey.random()
            for (name, types) in [("all", "{}"), ("ends", "{activity.ended}"), ("off", "{}")] {
                let id = UUID()
                let sealed = WebhookSecret.random().sealed(for: id, with: masterKey)
                try await fixture.client.query(
                    """
                    INSERT INTO webhook_endpoints (id, app_id, url, event_types, enabled, secret_sealed)
                    VALUES (\(id), \(fixture.appID), \("https://example.com/" + name), \(types)::text[], \(name != "off"), \(sealed))
                    """
                )
            }
            try await self.register(fixture, "a-1", token: "ac01")
            try await self.end(fixture, "a-1", by: .backend)
            let rows = try await fixture.client.query(
                """
                SELECT w.url, e.type FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id JOIN events e ON e.id = d.event_id
                ORDER BY w.url, d.id
                """
            )
            var deliveries: [String] = []
            for try await (url, type) in rows.decode((String, String).self) { deliveries.append("\(url.dropFirst(20)) \(type)") }
            #expect(deliveries == ["all activity.registered", "all activity.ended", "ends activity.ended"])
        }
    }

    /// The feed's page after `cursor` once it holds `count` events: the test server's other databases' transactions
    /// hold back every feed of the server (xids are the server's) while they run.
    private func settledPage(_ events: Events, _ fixture: StoreFixture, after cursor: EventCursor, count: Int) async throws -> [Events.Entry] {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let page = try await events.page(appID: fixture.appID, after: cursor, types: [], limit: 10)
            if page.count >= count || ContinuousClock.now > deadline { return page }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private func activityID(_ fixture: StoreFixture, _ key: String) async throws -> Int64 {
        try await self.scalar(fixture, "SELECT id FROM activities WHERE activity_key = \(key)")
    }

    private func scalar(_ fixture: StoreFixture, _ query: PostgresQuery) async throws -> Int64 {
        let rows = try await fixture.client.query(query)
        for try await value in rows.decode(Int64.self) { return value }
        throw StoreError(.notFound, "no row")
    }
}
