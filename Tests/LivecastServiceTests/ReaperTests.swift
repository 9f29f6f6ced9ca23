import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// Each reaper rule against PostgreSQL and the emulator: what the simulated devices show after the dispatcher ran.
@Suite struct ReaperTests {
    @Test func aStaleActivityIsEndedWithItsDismissalDateAndASecondPassDoesNothing() async throws {
        try await DispatchFixture.with("reap_stale") { fixture in
            let (deviceID, _) = try await fixture.startedActivity(key: "a1")
            let (freshID, _) = try await fixture.startedActivity(key: "a2")
            try await fixture.sql("UPDATE activities SET stale_date = \(fixture.now - 1000) WHERE activity_key = 'a1'")
            try await fixture.sql("UPDATE activities SET stale_date = \(fixture.now - 100) WHERE activity_key = 'a2'")
            let before = fixture.now
            let reports = try await fixture.reaper(ReaperPolicy(staleGrace: .seconds(300), staleDismissalDelay: .seconds(600))).pass()
            #expect(reports.map(\.endedActivities) == [1])
            #expect(
                reports.first?.summary(dryRun: false)
                    == "com.example.game (sandbox): ended 1 activities, 0 feeds; dismissed 0 activities; retired 0 channels; expired 0 tokens; pruned 0 rows"
            )
            // The app keeps the pass's summary for the console's overview.
            let kept = try await fixture.lastReap()
            #expect(kept.summary == reports.first?.summary(dryRun: false) && kept.isDated)
            #expect(try await fixture.dispatcher().drain() == 1)
            let shown = try #require(fixture.shown(deviceID).first)
            #expect(shown.state == .ended)
            #expect((before + 600...fixture.now + 600).contains(shown.dismissalDate ?? 0))
            #expect(fixture.shown(freshID).first?.state == .active)
            #expect(try await fixture.state(ofActivity: "a1") == "ended")

            let again = try await fixture.reaper(ReaperPolicy(staleGrace: .seconds(300), staleDismissalDelay: .seconds(600))).pass()
            #expect(again.allSatisfy { $0.isEmpty })
            #expect(try await fixture.lastReap().summary?.contains("ended 0 activities") == true, "the latest pass replaces it")
            #expect(try await fixture.number("SELECT count(*)::int FROM updates WHERE event = 'end'") == 1)
        }
    }

    @Test func aStaleFeedIsEndedAndItsEndReachesEveryFollower() async throws {
        try await DispatchFixture.with("reap_stale_feed") { fixture in
            try await fixture.feed("game-1", staleAfterSeconds: 1)
            try await fixture.feed("game-2", staleAfterSeconds: 3600)
            let followers = [
                try await fixture.startedActivity(key: "f1", feed: "game-1").deviceID,
                try await fixture.startedActivity(key: "f2", feed: "game-1").deviceID,
            ]
            let other = try await fixture.startedActivity(key: "g1", feed: "game-2").deviceID
            _ = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now - 30)
            _ = try await fixture.update(feed: "game-2", home: 1, timestamp: fixture.now - 30)
            #expect(try await fixture.dispatcher().drain() == 2)
            // A feed's own grace wins over the global one.
            try await fixture.sql("UPDATE feeds SET stale_grace_seconds = 10 WHERE feed_key = 'game-1'")
            let reports = try await fixture.reaper(ReaperPolicy(staleGrace: .seconds(3600), staleDismissalDelay: .seconds(600))).pass()
            #expect(reports.map(\.endedFeeds) == [1])
            #expect(reports.map(\.endedActivities) == [0])
            #expect(try await fixture.dispatcher().drain() == 1)
            for deviceID in followers {
                let shown = try #require(fixture.shown(deviceID).first)
                #expect(shown.state == .ended)
                #expect(shown.contentState == .object(["home": .int(1)]))
                #expect(shown.dismissalDate != nil)
            }
            #expect(fixture.shown(other).first?.state == .active)
            #expect(
                try await fixture.reaper(ReaperPolicy(staleGrace: .seconds(3600), staleDismissalDelay: .seconds(600))).pass().allSatisfy {
                    $0.isEmpty
                }
            )
        }
    }

    @Test func activitiesNearTheEightHourLimitEndWithTheBackendsLastState() async throws {
        try await DispatchFixture.with("reap_aging") { fixture in
            try await fixture.feed("game-1")
            let standalone = try await fixture.startedActivity(key: "a1").deviceID
            let follower = try await fixture.startedActivity(key: "f1", feed: "game-1").deviceID
            let young = try await fixture.startedActivity(key: "f2", feed: "game-1").deviceID
            let update = try await fixture.update(feed: "game-1", home: 3, timestamp: fixture.now - 10)
            #expect(try await fixture.dispatcher().drain() == 1)
            try await fixture.sql("UPDATE activities SET started_at = now() - interval '7 hours 50 minutes' WHERE activity_key IN ('a1', 'f1')")
            let before = fixture.now
            let reports = try await fixture.reaper().pass()
            #expect(reports.map(\.endedActivities) == [2])
            #expect(try await fixture.dispatcher().drain() == 2)
            for deviceID in [standalone, follower] {
                let shown = try #require(fixture.shown(deviceID).first)
                #expect(shown.state == .ended)
                // Kept on the Lock Screen as long as ActivityKit allows.
                #expect((before + 4 * 3600...fixture.now + 4 * 3600).contains(shown.dismissalDate ?? 0))
            }
            let ended = try #require(fixture.shown(follower).first)
            #expect(ended.contentState == .object(["home": .int(3)]))
            #expect(ended.lastTimestamp > update.timestamp)
            // The feed goes on for the others.
            _ = try await fixture.update(feed: "game-1", home: 4, timestamp: fixture.now + 1)
            #expect(try await fixture.dispatcher().drain() == 1)
            #expect(fixture.shown(young).first?.contentState == .object(["home": .int(4)]))
            #expect(fixture.shown(follower).first?.contentState == .object(["home": .int(3)]))
            #expect(try await fixture.reaper().pass().allSatisfy { $0.isEmpty })
        }
    }

    @Test func endedActivitiesAreDismissedAndTheirTokensForgotten() async throws {
        try await DispatchFixture.with("reap_dismiss") { fixture in
            _ = try await fixture.startedActivity(key: "a1")
            _ = try await fixture.startedActivity(key: "a2")
            _ = try await fixture.startedActivity(key: "a3")
            let activities = Activities(client: fixture.store.client, logger: fixture.store.logger)
            for key in ["a1", "a2", "a3"] { #expect(try await activities.endedByDevice(appID: fixture.store.appID, activityKey: key)) }
            // a1: its dismissal date passed; a2: no date, ended over 4 hours ago; a3: no date, ended just now.
            try await fixture.sql("UPDATE activities SET dismissal_date = \(fixture.now - 5) WHERE activity_key = 'a1'")
            try await fixture.sql("UPDATE activities SET ended_at = now() - interval '4 hours 1 minute' WHERE activity_key = 'a2'")
            let reports = try await fixture.reaper().pass()
            #expect(reports.map(\.dismissedActivities) == [2])
            #expect(try await fixture.state(ofActivity: "a1") == "dismissed")
            #expect(try await fixture.state(ofActivity: "a2") == "dismissed")
            #expect(try await fixture.state(ofActivity: "a3") == "ended")
            let reasons = try await fixture.store.client.query(
                "SELECT a.activity_key, t.invalidation_reason FROM activity_tokens t JOIN activities a ON a.id = t.activity_id ORDER BY a.activity_key"
            )
            var byKey: [String: String?] = [:]
            for try await (key, reason) in reasons.decode((String, String?).self) { byKey[key] = reason }
            #expect(byKey == ["a1": "dismissed", "a2": "dismissed", "a3": nil])
            #expect(try await fixture.reaper().pass().allSatisfy { $0.isEmpty })
        }
    }

    @Test func theChannelOfAnEndedFeedIsDeletedAtAPNsAndKeptAsRetired() async throws {
        try await DispatchFixture.with("reap_channel") { fixture in
            let channelID = try #require(try await fixture.feed("game-1", channelPolicy: 0))
            let keptID = try #require(try await fixture.feed("game-2", channelPolicy: 0))
            for key in ["game-1", "game-2"] {
                var end = FeedUpdates.Request(
                    appID: fixture.store.appID,
                    feedKey: key,
                    event: .end,
                    contentState: try RawJSON(validating: #"{"home":1}"#)
                )
                end.content.dismissalDate = fixture.now + 60
                _ = try await FeedUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(end)
            }
            // Not before its end has gone out.
            #expect(try await fixture.reaper(ReaperPolicy(channelRetirementDelay: .zero)).pass().map(\.retiredChannels) == [0])
            #expect(try await fixture.dispatcher().drain() == 2)
            try await fixture.sql("UPDATE feeds SET ended_at = now() - interval '61 minutes' WHERE feed_key = 'game-1'")
            let reports = try await fixture.reaper().pass()
            #expect(reports.map(\.retiredChannels) == [1])
            #expect(reports.allSatisfy { $0.failures.isEmpty })
            let (atAPNs, _) = await fixture.apns.listChannels(bundleID: EmulatorFixture.bundleID)
            #expect(atAPNs == [keptID])
            let registry = ChannelRegistry(
                channels: Channels(client: fixture.store.client, logger: fixture.store.logger),
                apns: fixture.apns,
                logger: fixture.store.logger
            )
            #expect(try await registry.get(appID: fixture.store.appID, channelID: channelID)?.state == .retired)
            #expect(try await fixture.reaper().pass().allSatisfy { $0.isEmpty })
        }
    }

    @Test func pushToStartTokensNotSeenForLongExpire() async throws {
        try await DispatchFixture.with("reap_tokens") { fixture in
            let tokens = PushToStartTokens(client: fixture.store.client, logger: fixture.store.logger)
            for (device, token) in [("d1", "aa01"), ("d2", "aa02")] {
                _ = try await tokens.register(.init(appID: fixture.store.appID, deviceID: device, attributesType: "GameAttributes", token: token))
            }
            try await fixture.sql("UPDATE push_to_start_tokens SET last_seen_at = now() - interval '31 days' WHERE device_id = 'd1'")
            #expect(try await fixture.reaper().pass().map(\.expiredTokens) == [1])
            #expect(try await fixture.store.rows(device: "d1").map { $0.reason } == ["expired"])
            #expect(try await fixture.store.rows(device: "d2").map { $0.live } == [true])
            #expect(try await fixture.reaper(ReaperPolicy(tokenExpiry: .days(60))).pass().allSatisfy { $0.isEmpty })
        }
    }

    @Test func oldRowsArePrunedInBatchesByTheAppsRetention() async throws {
        try await DispatchFixture.with("reap_prune") { fixture in
            _ = try await fixture.startedActivity(key: "a1")
            for home in 1...5 {
                _ = try await ActivityUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(
                    .init(
                        appID: fixture.store.appID,
                        activityKey: "a1",
                        event: .update,
                        contentState: try RawJSON(validating: #"{"home":\#(home)}"#),
                        timestamp: fixture.now + home
                    )
                )
                #expect(try await fixture.dispatcher().drain() == 1)
            }
            try await fixture.sql(
                "INSERT INTO deliveries (update_id, target_kind, target, status, reason, attempted_at) SELECT id, 'device', 'aa', 410, 'Unregistered', now() - interval '8 days' FROM updates"
            )
            try await fixture.sql("UPDATE updates SET completed_at = now() - interval '8 days'")
            // The app keeps its updates 10 days: only deliveries go (5 rows, in batches of 2).
            try await fixture.sql("UPDATE apps SET retain_updates_days = 10")
            #expect(try await fixture.reaper(ReaperPolicy(batchSize: 2)).pass().map(\.prunedRows) == [5])
            try await fixture.sql("UPDATE apps SET retain_updates_days = NULL")
            #expect(try await fixture.reaper(ReaperPolicy(batchSize: 2)).pass().map(\.prunedRows) == [5])
            #expect(try await fixture.number("SELECT count(*)::int FROM updates") == 0)
            // A dismissed activity goes after 30 days, with its token.
            try await fixture.sql(
                "UPDATE activities SET state = 'dismissed', ended_at = now() - interval '32 days', dismissed_at = now() - interval '31 days'"
            )
            #expect(try await fixture.reaper().pass().map(\.prunedRows) == [1])
            #expect(try await fixture.number("SELECT count(*)::int FROM activity_tokens") == 0)
            #expect(try await fixture.reaper().pass().allSatisfy { $0.isEmpty })
        }
    }

    @Test func aDryRunCountsAndWritesNothing() async throws {
        try await DispatchFixture.with("reap_dry") { fixture in
            _ = try await fixture.startedActivity(key: "a1")
            try await fixture.sql("UPDATE activities SET stale_date = \(fixture.now - 3600)")
            _ = try await PushToStartTokens(client: fixture.store.client, logger: fixture.store.logger).register(
                .init(appID: fixture.store.appID, deviceID: "d1", attributesType: "GameAttributes", token: "aa01")
            )
            try await fixture.sql("UPDATE push_to_start_tokens SET last_seen_at = now() - interval '40 days'")
            let snapshot: PostgresQuery = """
                SELECT (SELECT count(*) FROM updates)::int * 1000 + (SELECT count(*) FROM activities WHERE state = 'active')::int * 100
                     + (SELECT count(*) FROM push_to_start_tokens WHERE invalidated_at IS NULL)::int
                """
            let before = try await fixture.number(snapshot)
            let dry = try await fixture.reaper().pass(dryRun: true)
            #expect(
                dry.first?.summary(dryRun: true)
                    == "com.example.game (sandbox): would end 1 activities, 0 feeds; would dismiss 0 activities; would retire 0 channels; would expire 1 tokens; would prune 0 rows"
            )
            #expect(try await fixture.number(snapshot) == before)
            let real = try await fixture.reaper().pass()
            #expect(real.map(\.endedActivities) == dry.map(\.endedActivities))
            #expect(real.map(\.expiredTokens) == dry.map(\.expiredTokens))
        }
    }

    @Test func twoReapersAtOnceNeverSendAnEndTwice() async throws {
        try await DispatchFixture.with("reap_race") { fixture in
            try await fixture.feed("game-1", staleAfterSeconds: 1)
            var devices: [String] = []
            for index in 0..<8 { devices.append(try await fixture.startedActivity(key: "a\(index)").deviceID) }
            for index in 0..<4 { devices.append(try await fixture.startedActivity(key: "f\(index)", feed: "game-1").deviceID) }
            _ = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now - 30)
            #expect(try await fixture.dispatcher().drain() == 1)
            try await fixture.sql("UPDATE activities SET stale_date = \(fixture.now - 3600) WHERE feed_id IS NULL")
            let policy = ReaperPolicy(staleGrace: .seconds(5), staleDismissalDelay: .seconds(600))
            let reports = try await withThrowingTaskGroup(of: [ReaperReport].self) { group in
                for reaper in [fixture.reaper(policy), fixture.reaper(policy)] { group.addTask { try await reaper.pass() } }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            #expect(reports.map(\.endedActivities).reduce(0, +) == 8)
            #expect(reports.map(\.endedFeeds).reduce(0, +) == 1)
            #expect(try await fixture.number("SELECT count(*)::int FROM updates WHERE event = 'end'") == 9)
            #expect(try await fixture.dispatcher().drain() == 9)
            for deviceID in devices {
                let shown = try #require(fixture.shown(deviceID).first)
                #expect(shown.state == .ended)
                #expect(shown.ignoredPushes.isEmpty)
            }
        }
    }
}
