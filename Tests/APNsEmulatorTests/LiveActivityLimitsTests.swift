import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// The limits iOS puts on a Live Activity, which the simulated iPhones keep as a device does: alert text in
/// ActivityKit's nested shape, a push-to-start budget, and a lifetime. What a device drops in silence (APNs still
/// answers 200) is marked in the wire log and counted by the wire judge.
@Suite struct LiveActivityLimitsTests {
    /// Adds a device and starts a token-based activity on it. - Returns: the device id and update token.
    private func startedActivity(_ fixture: EmulatorFixture) async throws -> (device: String, token: String) {
        let device = try await fixture.addDevice()
        let deviceID = try #require(device["id"]?.stringValue)
        let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
        #expect(try await fixture.devicePush(token: pushToStart, payload: DeviceModelTests.start()).status == 200)
        let activity = try #require(try await fixture.device(deviceID)["activities"].items.first)
        return (deviceID, try #require(activity["updateToken"]?.stringValue))
    }

    @Test func anAlertWithFlatLocalizationKeysIsDroppedAndJudged() async throws {
        try await EmulatorFixture.with({ $0.recordsWire = true }) { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            let nested = #","alert":{"title":{"loc-key":"GOAL_TITLE","loc-args":["Home"]},"body":{"loc-key":"GOAL_BODY"}}"#
            let flat = #","alert":{"title-loc-key":"GOAL_TITLE","title-loc-args":["Home"],"loc-key":"GOAL_BODY"}"#
            let now = DeviceModelTests.now
            #expect(
                try await fixture.devicePush(token: token, payload: DeviceModelTests.update(timestamp: now + 1, home: 1, extra: nested)).status == 200
            )
            let dropped = try await fixture.devicePush(token: token, payload: DeviceModelTests.update(timestamp: now + 2, home: 2, extra: flat))
            #expect(dropped.status == 200, "APNs accepts it; the device drops it")
            let activity = try #require(try await fixture.device(deviceID)["activities"].items.first)
            #expect(activity["contentState"]?["home"] == .int(1))
            #expect(activity["alertsShown"] == .int(2))
            let ignored = try #require(activity["ignoredPushes"].items.last)
            #expect(ignored["reason"] == .string("undocumentedAlertKey"))
            #expect(ignored["detail"] == .string("alert.loc-key"))

            let records = fixture.emulator.wireRecords
            #expect(records.map(\.deviceDropped) == [nil, nil, "undocumentedAlertKey"])
            let verdict = WireJudge.judge(records)
            #expect(!verdict.isClean)
            #expect(verdict.droppedByDevices.map(\.record.sequence) == [records[2].sequence])
        }
    }

    @Test func aBroadcastWithASubtitleIsDroppedByEverySubscriber() async throws {
        try await EmulatorFixture.with({ $0.recordsWire = true }) { fixture in
            let channelID = try await fixture.createChannel()
            let device = try await fixture.addDevice()
            let deviceID = try #require(device["id"]?.stringValue)
            let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let start = DeviceModelTests.start(extra: #","input-push-channel":"\#(channelID)""#)
            #expect(try await fixture.devicePush(token: pushToStart, payload: start).status == 200)
            let update = DeviceModelTests.update(timestamp: DeviceModelTests.now + 1, home: 1, extra: #","alert":{"title":"Goal","subtitle":"1-0"}"#)
            #expect(try await fixture.broadcast(payload: update, headers: fixture.broadcastHeaders(channelID: channelID)).status == 200)
            let activity = try #require(try await fixture.device(deviceID)["activities"].items.first)
            #expect(activity["contentState"]?["home"] == .int(0))
            #expect(activity["ignoredPushes"].items.last?["detail"] == .string("alert.subtitle"))
            #expect(fixture.emulator.wireRecords.last?.deviceDropped == "undocumentedAlertKey")
        }
    }

    @Test func startsOverTheDevicesBudgetAreDroppedAndJudged() async throws {
        let budget = APNsEmulator.PushToStartBudget(starts: 3, window: 600)
        try await EmulatorFixture.with({
            $0.recordsWire = true
            $0.pushToStartBudget = budget
        }) { fixture in
            let device = try await fixture.addDevice()
            let deviceID = try #require(device["id"]?.stringValue)
            let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            for feed in 1...5 {
                let headers = fixture.deviceHeaders() + [("apns-collapse-id", "livecast-start-\(feed)")]
                let start = DeviceModelTests.start(timestamp: DeviceModelTests.now + feed)
                #expect(try await fixture.devicePush(token: pushToStart, payload: start, headers: headers).status == 200)
            }
            let shown = try await fixture.device(deviceID)
            #expect(shown["activities"].items.count == 3)
            #expect(shown["ignoredPushes"].items.compactMap { $0["reason"]?.stringValue } == ["startBudgetExceeded", "startBudgetExceeded"])
            let verdict = WireJudge.judge(fixture.emulator.wireRecords)
            #expect(verdict.droppedByDevices.count == 2)

            fixture.emulator.advanceClock(by: budget.window + 1)
            let headers = fixture.deviceHeaders() + [("apns-collapse-id", "livecast-start-6")]
            #expect(
                try await fixture.devicePush(
                    token: pushToStart,
                    payload: DeviceModelTests.start(timestamp: DeviceModelTests.now + 6),
                    headers: headers
                ).status == 200
            )
            #expect(try await fixture.device(deviceID)["activities"].items.count == 4, "the window moved on: room again")
        }
    }

    @Test func anActivityEndsAtTheConfiguredLifetime() async throws {
        try await EmulatorFixture.with({ $0.activityLifetime = 600 }) { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            fixture.emulator.advanceClock(by: 300)
            #expect(try await fixture.device(deviceID)["activities"].items.first?["state"] == .string("active"))
            fixture.emulator.advanceClock(by: 301)
            let activity = try #require(try await fixture.device(deviceID)["activities"].items.first)
            #expect(activity["state"] == .string("ended"))
            #expect(
                try await fixture.devicePush(token: token, payload: DeviceModelTests.update(timestamp: DeviceModelTests.now + 1, home: 1)).status
                    == 200
            )
            let after = try #require(try await fixture.device(deviceID)["activities"].items.first)
            #expect(after["ignoredPushes"].items.last?["reason"] == .string("afterEnd"))
        }
    }
}
