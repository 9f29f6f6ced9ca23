import APNs
import APNsEmulator
import Foundation
import LivecastCore
import LivecastService
import LivecastStore
import LivecastTesting
import Logging
import PostgresNIO
import Testing

/// A dispatcher dies in the middle of a fan-out to 10,000 followers; another finishes it from the checkpoint.
@Suite struct FanOutCrashTests {
    private static let followerCount = 10_000

    /// Started activities on emulator devices, stored as the feed's token-based followers in bulk.
    private func followers(_ fixture: DispatchFixture, feed: String) async throws -> [(deviceID: String, token: String)] {
        var devices: [DeviceSnapshot] = []
        for _ in 0..<Self.followerCount {
            devices.append(try fixture.emulator.emulator.addDevice(bundleID: EmulatorFixture.bundleID, osVersion: "17.5", pushToStartTokens: ["GameAttributes": ""]))
        }
        var start = LiveActivityPayload.start(
            timestamp: fixture.now - 60,
            attributesType: "GameAttributes",
            attributes: try RawJSON(validating: #"{"team":"Giants"}"#),
            contentState: try RawJSON(validating: #"{"home":0}"#),
            alert: LiveActivityAlert(title: "Kick-off")
        )
        start.inputPushToken = true
        let bytes = try start.validated(for: .device)
        // In batches, so that no push waits behind thousands of others past its deadline on a busy machine.
        for batch in stride(from: 0, to: devices.count, by: 500) {
            let pushes = devices[batch..<min(batch + 500, devices.count)].map {
                DevicePush(deviceToken: $0.pushToStartTokens["GameAttributes"]!, bundleID: EmulatorFixture.bundleID, payload: bytes)
            }
            let outcomes = await fixture.apns.send(pushes)
            #expect(outcomes.allSatisfy { $0.isSuccess })
        }
        let started = try devices.map { device in
            (deviceID: device.id, token: try #require(fixture.shown(device.id).first?.updateToken))
        }
        try await fixture.store.client.query(
            """
            WITH followers AS (
                INSERT INTO activities (app_id, activity_key, attributes_type, feed_id, device_id, os_version, state)
                SELECT \(fixture.store.appID), device_id, 'GameAttributes', (SELECT id FROM feeds WHERE feed_key = \(feed)), device_id, '17.5', 'active'
                FROM unnest(\(started.map(\.deviceID))::text[]) AS d(device_id)
                RETURNING id, activity_key
            )
            INSERT INTO activity_tokens (app_id, activity_id, token, generation)
            SELECT \(fixture.store.appID), f.id, t.token, 1
            FROM unnest(\(started.map(\.deviceID))::text[], \(started.map(\.token))::text[]) AS t(device_id, token)
            JOIN followers f ON f.activity_key = t.device_id
            """
        )
        return started
    }

    private func cursor(_ fixture: DispatchFixture, _ updateID: Int64) async throws -> Int64 {
        let rows = try await fixture.store.client.query("SELECT cursor_id FROM updates WHERE id = \(updateID)")
        for try await cursor in rows.decode(Int64.self) { return cursor }
        return 0
    }

    @Test(.timeLimit(.minutes(10))) func aKilledFanOutIsFinishedFromItsCheckpointWithoutGoingBackwards() async throws {
        try await DispatchFixture.with("fanout_crash") { fixture in
            try await fixture.feed("game-1")
            let followers = try await self.followers(fixture, feed: "game-1")
            // 100 tokens were rotated away before the update (the store knows); 50 more APNs reports unregistered.
            let rotated = Array(followers[0..<100])
            let unregistered = Array(followers[5000..<5050])
            try await fixture.store.client.query(
                "UPDATE activity_tokens SET invalidated_at = now(), invalidation_reason = 'rotated' WHERE token = ANY(\(rotated.map(\.token)))"
            )
            var faults = fixture.emulator.emulator.faults
            for follower in unregistered { faults.unregisteredTokens[follower.token] = Int(Date().timeIntervalSince1970 * 1000) + 60_000 }
            fixture.emulator.emulator.setFaults(faults)
            let first = try await fixture.update(feed: "game-1", home: 1, timestamp: fixture.now)

            // Dispatcher A, with its own connections, dies once it has checkpointed some pages.
            let settings = Dispatcher.Settings(pageSize: 500, leaseSeconds: 2)
            let apnsA = try fixture.emulator.makeClient()
            let databaseA = PostgresClient(configuration: fixture.store.configuration, backgroundLogger: fixture.store.logger)
            let runA = Task { await databaseA.run() }
            let dispatcherA = Dispatcher(database: databaseA, clientForApp: { _ in (apnsA, EmulatorFixture.bundleID) }, settings: settings, logger: fixture.store.logger)
            let workA = Task { try await dispatcherA.dispatchOnce() }
            let deadline = Date().addingTimeInterval(420)
            var cursorAtKill: Int64 = 0
            while cursorAtKill < 3000, Date() < deadline {
                try await Task.sleep(for: .milliseconds(5))
                cursorAtKill = try await self.cursor(fixture, first.updateID)
            }
            runA.cancel()
            workA.cancel()
            await apnsA.shutdown()
            // A is dead: its task may stay parked on its stopped pool for good, so nothing waits for it.
            #expect(try await fixture.status(first.updateID) == "dispatching")
            let checkpoint = try await self.cursor(fixture, first.updateID)
            #expect(checkpoint >= 3000 && checkpoint < Int64(Self.followerCount), "A stopped in the middle")

            // Dispatcher B takes the update over once A's lease has run out.
            let dispatcherB = fixture.dispatcher(settings)
            while try await fixture.status(first.updateID) != "sent", Date() < deadline {
                if try await dispatcherB.dispatchOnce() == 0 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(try await fixture.status(first.updateID) == "sent")
            let reachable = followers.count - rotated.count - unregistered.count
            #expect(try await fixture.counts(first.updateID) == (reachable, unregistered.count))

            let second = try await fixture.update(feed: "game-1", home: 2, timestamp: fixture.now + 1)
            while try await fixture.status(second.updateID) != "sent", Date() < deadline {
                if try await dispatcherB.dispatchOnce() == 0 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(try await fixture.counts(second.updateID) == (reachable, 0), "nothing went to the tokens APNs refused")

            let skipped = Set((rotated + unregistered).map(\.deviceID))
            for follower in followers {
                let activity = try #require(fixture.shown(follower.deviceID).first)
                if skipped.contains(follower.deviceID) {
                    #expect(activity.contentState == .object(["home": .int(0)]), "an invalidated token got a push")
                } else {
                    #expect(activity.contentState == .object(["home": .int(2)]))
                    #expect(activity.lastTimestamp == second.timestamp)
                }
                // Pages A sent but never checkpointed went again: repeats, never an older timestamp.
                #expect(activity.ignoredPushes.allSatisfy { $0.timestamp == $0.shownTimestamp })
            }
        }
    }
}
