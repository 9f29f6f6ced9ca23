import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import PostgresNIO
import Testing

/// A feed's start, updates and end through the dispatcher to the emulator's devices: what the phones show.
@Suite struct FeedFanOutTests {
    /// Devices with push-to-start tokens for `GameAttributes`, registered in the store.
    private func devices(_ fixture: DispatchFixture, count: Int, osVersion: String, user: String? = nil) async throws -> [DeviceSnapshot] {
        let tokens = PushToStartTokens(client: fixture.store.client, logger: fixture.store.logger)
        var devices: [DeviceSnapshot] = []
        for _ in 0..<count {
            let device = try fixture.emulator.emulator.addDevice(
                bundleID: EmulatorFixture.bundleID,
                osVersion: osVersion,
                pushToStartTokens: ["GameAttributes": ""]
            )
            _ = try await tokens.register(
                .init(
                    appID: fixture.store.appID,
                    deviceID: device.id,
                    attributesType: "GameAttributes",
                    token: device.pushToStartTokens["GameAttributes"]!,
                    userID: user,
                    osVersion: osVersion
                )
            )
            devices.append(device)
        }
        return devices
    }

    /// Registers each started activity as the app would: token-based with its update token, or on its channel.
    private func registerStarted(_ fixture: DispatchFixture, _ devices: [DeviceSnapshot], feed: String) async throws {
        let activities = Activities(client: fixture.store.client, logger: fixture.store.logger)
        for device in devices {
            for activity in fixture.shown(device.id) {
                _ = try await activities.register(
                    .init(
                        appID: fixture.store.appID,
                        activityKey: activity.id,
                        attributesType: "GameAttributes",
                        feedKey: feed,
                        pushToken: activity.updateToken,
                        channelID: activity.channelId,
                        deviceID: device.id,
                        osVersion: device.osVersion
                    )
                )
            }
        }
    }

    /// A start half a minute ago, so the game's updates at the current second come after it.
    private func start(
        _ fixture: DispatchFixture,
        feed: String,
        audience: FeedStarts.Audience,
        secondsAgo: Int = 30
    ) async throws -> AcceptedUpdate {
        var request = FeedStarts.Request(
            appID: fixture.store.appID,
            feedKey: feed,
            audience: audience,
            contentState: try RawJSON(validating: #"{"home":0}"#),
            alert: .init(title: "Kick-off")
        )
        request.timestamp = fixture.now - secondsAgo
        return try await FeedStarts(client: fixture.store.client, logger: fixture.store.logger).start(request)
    }

    @Test func startsOfTwoFeedsOwedToOneDeviceAreBothSent() async throws {
        try await DispatchFixture.with("fanout_two_starts_owed") { fixture in
            _ = try await fixture.feed("game-1")
            _ = try await fixture.feed("game-2")
            let device = try #require(try await self.devices(fixture, count: 1, osVersion: "17.5").first)
            let dispatcher = fixture.dispatcher()
            fixture.emulator.emulator.setFaults(FaultPlan(failureShare: 1, failureAnswers: [.status(503, reason: "ServiceUnavailable")]))
            _ = try await self.start(fixture, feed: "game-1", audience: .everyone, secondsAgo: 30)
            _ = try await self.start(fixture, feed: "game-2", audience: .everyone, secondsAgo: 20)
            #expect(try await dispatcher.dispatchOnce(lane: .any) == 1)
            #expect(try await dispatcher.dispatchOnce(lane: .any) == 1)
            fixture.emulator.emulator.setFaults(FaultPlan())
            // Each start is a different activity's: the newer one does not supersede the older.
            try await fixture.makeOwedPushesDue()
            #expect(try await dispatcher.drain() == 2)
            #expect(fixture.shown(device.id).count == 2, "\(fixture.shown(device.id))")
        }
    }

    @Test func aStartSentAgainCarriesItsCollapseIDAndStartsNoSecondActivity() async throws {
        try await DispatchFixture.with("fanout_start_collapse") { fixture in
            _ = try await fixture.feed("game-1")
            let devices = try await self.devices(fixture, count: 2, osVersion: "17.5")
            let started = try await self.start(fixture, feed: "game-1", audience: .everyone)
            let dispatcher = fixture.dispatcher()
            #expect(try await dispatcher.drain() == 1)
            // As if APNs' answers had been lost: the starts are owed, and sent again.
            try await fixture.store.client.query(
                """
                INSERT INTO owed_pushes (app_id, update_id, target_kind, target_id, attempts, last_reason, not_before, deadline)
                SELECT app_id, \(started.updateID), 'push_to_start', id, 1, 'ConnectionLost', now(), now() + interval '1 hour'
                FROM push_to_start_tokens
                """
            )
            #expect(try await dispatcher.drain() == devices.count)
            for device in devices {
                #expect(fixture.shown(device.id).count == 1, "a second activity started")
                let ignored = fixture.emulator.emulator.device(id: device.id)?.ignoredPushes ?? []
                #expect(ignored.map(\.reason) == [.duplicateStart])
                #expect(ignored.first?.detail?.hasPrefix("livecast-start-") == true)
            }
        }
    }

    @Test func aGameReachesChannelAndTokenFollowersInOrderAndEnds() async throws {
        try await DispatchFixture.with("fanout_game") { fixture in
            let channelID = try #require(try await fixture.feed("game-1", channelPolicy: 0))
            let modern = try await self.devices(fixture, count: 3, osVersion: "18.2")
            let older = try await self.devices(fixture, count: 3, osVersion: "17.5")
            let dispatcher = fixture.dispatcher()
            let started = try await self.start(fixture, feed: "game-1", audience: .everyone)
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.counts(started.updateID) == (6, 0))
            for device in modern {
                #expect(fixture.shown(device.id).map(\.channelId) == [channelID])
            }
            for device in older {
                let activities = fixture.shown(device.id)
                #expect(activities.count == 1 && activities[0].updateToken != nil && activities[0].channelId == nil)
            }
            try await self.registerStarted(fixture, modern + older, feed: "game-1")

            // A second start reaches nobody: each device starts at most once per feed.
            let again = try await self.start(fixture, feed: "game-1", audience: .everyone)
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.counts(again.updateID) == (0, 0))

            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)
            #expect(try await dispatcher.drain() == 1)
            // One broadcast for the channel, one push per token follower.
            #expect(try await fixture.counts(update.updateID) == (1 + older.count, 0))
            for device in modern + older {
                let activities = fixture.shown(device.id)
                #expect(activities.count == 1)
                #expect(activities.first?.contentState == .object(["home": .int(1)]))
                #expect(activities.first?.lastTimestamp == update.timestamp)
            }

            // A second later: an end in the same second would wait for the next one (coalescing).
            var end = FeedUpdates.Request(
                appID: fixture.store.appID,
                feedKey: "game-1",
                event: .end,
                contentState: try RawJSON(validating: #"{"home":2}"#),
                timestamp: update.timestamp + 1
            )
            end.content.dismissalDate = fixture.now + 600
            let ended = try await FeedUpdates(client: fixture.store.client, logger: fixture.store.logger).accept(end)
            #expect(try await dispatcher.drain() == 1)
            for device in modern + older {
                let activity = try #require(fixture.shown(device.id).first)
                #expect(activity.state == .ended)
                #expect(activity.contentState == .object(["home": .int(2)]))
                #expect(activity.dismissalDate == end.content.dismissalDate)
            }
            let running = try await fixture.store.client.query("SELECT count(*)::int FROM activities WHERE state IN ('starting', 'active')")
            for try await count in running.decode(Int.self) { #expect(count == 0) }
            #expect(try await fixture.status(ended.updateID) == "sent")
        }
    }

    @Test func aStartReachesOnlyItsAudience() async throws {
        try await DispatchFixture.with("fanout_audience") { fixture in
            try await fixture.feed("game-1")
            let listed = try await self.devices(fixture, count: 2, osVersion: "18.1")
            let fans = try await self.devices(fixture, count: 2, osVersion: "17.2", user: "fan-7")
            let others = try await self.devices(fixture, count: 2, osVersion: "17.2", user: "someone")
            _ = try await self.start(fixture, feed: "game-1", audience: .devices(listed.map(\.id)))
            _ = try await self.start(fixture, feed: "game-1", audience: .users(["fan-7"]))
            #expect(try await fixture.dispatcher().drain() == 2)
            for device in listed + fans {
                // Without a channel, even an iOS 18 device starts with input-push-token.
                #expect(fixture.shown(device.id).map { $0.updateToken != nil } == [true])
            }
            for device in others { #expect(fixture.shown(device.id).isEmpty) }
        }
    }

    /// A start to everyone walks the live push-to-start tokens page by page in keyset order: every live token once,
    /// none that was deleted or invalidated.
    @Test func aStartWalksTheLivePushToStartTokensPageByPage() async throws {
        try await DispatchFixture.with("fanout_start_pages") { fixture in
            try await fixture.feed("game-1")
            let devices = try await self.devices(fixture, count: 25, osVersion: "17.5")
            let tokens = PushToStartTokens(client: fixture.store.client, logger: fixture.store.logger)
            #expect(try await tokens.delete(appID: fixture.store.appID, deviceID: devices[3].id, attributesType: "GameAttributes"))
            let invalid = devices[17].pushToStartTokens["GameAttributes"]!
            #expect(try await tokens.invalidate(appID: fixture.store.appID, token: invalid, reason: .badDeviceToken))
            let started = try await self.start(fixture, feed: "game-1", audience: .everyone)
            #expect(try await fixture.dispatcher(Dispatcher.Settings(batchSize: 5, pageSize: 10)).drain() == 1)
            #expect(try await fixture.counts(started.updateID) == (23, 0))
            for (index, device) in devices.enumerated() {
                #expect(fixture.shown(device.id).count == ([3, 17].contains(index) ? 0 : 1), "device \(index)")
            }
        }
    }

    @Test func twoDispatchersNeverSendATargetTheSameTimestampTwice() async throws {
        try await DispatchFixture.with("fanout_two") { fixture in
            try await fixture.feed("game-1")
            var devices: [String] = []
            for index in 0..<120 {
                devices.append(try await fixture.startedActivity(key: "a\(index)", feed: "game-1").deviceID)
            }
            var last: AcceptedUpdate?
            for home in 1...4 {
                last = try await fixture.update(feed: "game-1", home: home, timestamp: fixture.now + home)
            }
            let settings = Dispatcher.Settings(pageSize: 25)
            let handled = try await withThrowingTaskGroup(of: Int.self) { group in
                for dispatcher in [fixture.dispatcher(settings), fixture.dispatcher(settings)] {
                    group.addTask { try await dispatcher.drain() }
                }
                return try await group.reduce(0, +)
            }
            #expect(handled == 4)
            for device in devices {
                let activity = try #require(fixture.shown(device).first)
                #expect(activity.contentState == .object(["home": .int(4)]))
                #expect(activity.lastTimestamp == last?.timestamp)
                // Each update once: a repeated timestamp would show up as an ignored push.
                #expect(activity.appliedPushes == 4)
                #expect(activity.ignoredPushes.isEmpty)
            }
        }
    }

    @Test func aFanOutThatMakesNoProgressIsADeadLetterAndTheFeedGoesOn() async throws {
        try await DispatchFixture.with("fanout_give_up") { fixture in
            _ = try #require(try await fixture.feed("game-1", channelPolicy: 0))
            let (deviceID, _) = try await fixture.startedActivity(key: "a1", feed: "game-1")
            let dispatcher = fixture.dispatcher(Dispatcher.Settings(batchSize: 5, pageSize: 100, fanOutAttempts: 2))
            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.status(second.updateID) == "sent")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(2)]))

            // Dispatchers died on this one twice: each claim's lease ran out before a checkpoint.
            let third = try await fixture.update(feed: "game-1", home: 3, timestamp: fixture.now + 2)
            try await fixture.store.client.query(
                "UPDATE updates SET status = 'dispatching', claimed_by = gen_random_uuid(), attempts = 2, not_before = now() WHERE id = \(third.updateID)"
            )
            #expect(try await dispatcher.dispatchOnce() == 1)
            #expect(try await fixture.status(third.updateID) == "failed")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(2)]))
            let letters = try await fixture.store.client.query(
                "SELECT target_kind, reason, attempts FROM dead_letters WHERE update_id = \(third.updateID)"
            )
            var found: [String] = []
            for try await (kind, reason, attempts) in letters.decode((String, String, Int).self) { found.append("\(kind) \(reason) \(attempts)") }
            #expect(found == ["feed NoProgress 3"])
            // The feed's next update is not held behind the one given up.
            let fourth = try await fixture.update(feed: "game-1", home: 4, timestamp: fixture.now + 3)
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.status(fourth.updateID) == "sent")
            #expect(fixture.shown(deviceID).first?.contentState == .object(["home": .int(4)]))
        }
    }

    /// PostgreSQL closes a fan-out's connection at its first followers' checkpoint (a trigger terminates the
    /// connection that writes it): the fan-out goes back to the outbox at its last checkpoint at once, not when its
    /// lease runs out, and the next round finishes it.
    @Test func aFanOutWhoseConnectionIsLostGoesBackToTheOutboxAtOnce() async throws {
        try await DispatchFixture.with("fanout_connection_lost") { fixture in
            _ = try await fixture.feed("game-1")
            var devices: [String] = []
            for index in 0..<3 { devices.append(try await fixture.startedActivity(key: "a\(index)", feed: "game-1").deviceID) }
            let update = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now + 1)
            try await fixture.store.client.cutOffConnections(
                named: "cut_off_fan_out",
                "BEFORE UPDATE ON updates",
                when: "OLD.cursor_id = 0 AND NEW.cursor_id > 0"
            )
            let dispatcher = fixture.dispatcher(Dispatcher.Settings(batchSize: 5, pageSize: 1))
            await #expect(throws: (any Error).self) { try await dispatcher.dispatchOnce() }
            let rows = try await fixture.store.client.query("SELECT status, claimed_by IS NULL, cursor_id FROM updates WHERE id = \(update.updateID)")
            var found: [String] = []
            for try await (status, unclaimed, cursor) in rows.decode((String, Bool, Int64).self) { found.append("\(status) \(unclaimed) \(cursor)") }
            #expect(found == ["pending true 0"], "back in the outbox, unclaimed, at its last checkpoint")

            try await fixture.store.client.query("DROP TRIGGER cut_off_fan_out ON updates")
            #expect(try await dispatcher.drain() == 1)
            #expect(try await fixture.status(update.updateID) == "sent")
            for device in devices { #expect(fixture.shown(device).first?.contentState == .object(["home": .int(1)]), "\(device)") }
        }
    }
}
