import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// The simulated devices follow ActivityKit's documented rules; tests read what they show through
/// `GET /emulator/devices` and the Swift API.
@Suite struct DeviceModelTests {
    static let now = Int(Date().timeIntervalSince1970)

    static func start(timestamp: Int = now, extra: String = #","input-push-token":1"#, alert: Bool = true) -> String {
        let alertJSON = alert ? #","alert":{"title":"Kick-off","body":"Giants vs Dodgers"}"# : ""
        return
            #"{"aps":{"timestamp":\#(timestamp),"event":"start","content-state":{"home":0,"away":0},"attributes-type":"GameAttributes","attributes":{"homeTeam":"Giants"}\#(alertJSON)\#(extra)}}"#
    }

    static func update(timestamp: Int, home: Int, extra: String = "") -> String {
        #"{"aps":{"timestamp":\#(timestamp),"event":"update","content-state":{"home":\#(home),"away":0}\#(extra)}}"#
    }

    static func end(timestamp: Int, home: Int, extra: String = "") -> String {
        #"{"aps":{"timestamp":\#(timestamp),"event":"end","content-state":{"home":\#(home),"away":0}\#(extra)}}"#
    }

    /// Adds an iOS 18 device and starts a token-based activity on it. - Returns: device id and update token.
    private func startedActivity(_ fixture: EmulatorFixture) async throws -> (device: String, token: String) {
        let device = try await fixture.addDevice()
        let deviceID = try #require(device["id"]?.stringValue)
        let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
        #expect(try await fixture.devicePush(token: pushToStart, payload: Self.start()).status == 200)
        let activity = try #require(try await fixture.device(deviceID)["activities"].flatMap(Self.first))
        return (deviceID, try #require(activity["updateToken"]?.stringValue))
    }

    private static func first(_ value: JSONValue) -> JSONValue? {
        if case .array(let items) = value { return items.first }
        return nil
    }

    private func activity(_ fixture: EmulatorFixture, _ deviceID: String) async throws -> JSONValue {
        try #require(try await fixture.device(deviceID)["activities"].flatMap(Self.first))
    }

    private func ignoredReasons(_ activity: JSONValue) -> [String] {
        guard case .array(let pushes) = activity["ignoredPushes"] else { return [] }
        return pushes.compactMap { $0["reason"]?.stringValue }
    }

    @Test func pushToStartWithInputPushTokenMintsAnUpdateToken() async throws {
        try await EmulatorFixture.with { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            var activity = try await self.activity(fixture, deviceID)
            #expect(activity["state"] == .string("active"))
            #expect(activity["attributes"] == .object(["homeTeam": .string("Giants")]))
            #expect(activity["alertsShown"] == .int(1))
            #expect(DeviceFleetTokens.isHex(token))
            #expect(try await fixture.devicePush(token: token, payload: Self.update(timestamp: Self.now + 1, home: 1)).status == 200)
            activity = try await self.activity(fixture, deviceID)
            #expect(activity["contentState"] == .object(["home": .int(1), "away": .int(0)]))
            #expect(activity["lastTimestamp"] == .int(Self.now + 1))
        }
    }

    @Test func olderOrEqualTimestampsAreIgnored() async throws {
        try await EmulatorFixture.with { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            for (timestamp, home) in [(Self.now + 10, 3), (Self.now + 5, 9), (Self.now + 10, 8)] {
                #expect(try await fixture.devicePush(token: token, payload: Self.update(timestamp: timestamp, home: home)).status == 200)
            }
            let activity = try await self.activity(fixture, deviceID)
            #expect(activity["contentState"]?["home"] == .int(3))
            #expect(self.ignoredReasons(activity) == ["olderTimestamp", "olderTimestamp"])
        }
    }

    @Test func pushesAfterEndAreIgnoredAndDismissalFollowsTheDate() async throws {
        try await EmulatorFixture.with { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            let deviceNow = fixture.emulator.deviceNow
            let end = Self.end(timestamp: Self.now + 1, home: 5, extra: #","dismissal-date":\#(deviceNow + 600)"#)
            #expect(try await fixture.devicePush(token: token, payload: end).status == 200)
            #expect(try await fixture.devicePush(token: token, payload: Self.update(timestamp: Self.now + 2, home: 6)).status == 200)
            var activity = try await self.activity(fixture, deviceID)
            #expect(activity["state"] == .string("ended"))
            #expect(activity["contentState"]?["home"] == .int(5))
            #expect(activity["dismissalDate"] == .int(deviceNow + 600))
            #expect(self.ignoredReasons(activity) == ["afterEnd"])
            let (status, _) = try await fixture.control("POST", "clock", body: #"{"advanceSeconds": 601}"#)
            #expect(status == 200)
            activity = try await self.activity(fixture, deviceID)
            #expect(activity["state"] == .string("dismissed"))
        }
    }

    @Test func dismissalIsClampedToFourHoursAndAPastDateDismissesAtOnce() async throws {
        try await EmulatorFixture.with { fixture in
            let (late, lateToken) = try await self.startedActivity(fixture)
            let deviceNow = fixture.emulator.deviceNow
            let farEnd = Self.end(timestamp: Self.now + 1, home: 1, extra: #","dismissal-date":\#(deviceNow + 10 * 3600)"#)
            #expect(try await fixture.devicePush(token: lateToken, payload: farEnd).status == 200)
            let clamped = try await self.activity(fixture, late)["dismissalDate"]?.intValue ?? 0
            #expect((deviceNow + 4 * 3600...deviceNow + 4 * 3600 + 60).contains(clamped))

            let (early, earlyToken) = try await self.startedActivity(fixture)
            let pastEnd = Self.end(timestamp: Self.now + 1, home: 1, extra: #","dismissal-date":1663177260"#)
            #expect(try await fixture.devicePush(token: earlyToken, payload: pastEnd).status == 200)
            #expect(try await self.activity(fixture, early)["state"] == .string("dismissed"))
        }
    }

    @Test func staleAtStaleDate() async throws {
        try await EmulatorFixture.with { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            let staleDate = fixture.emulator.deviceNow + 60
            let update = Self.update(timestamp: Self.now + 1, home: 1, extra: #","stale-date":\#(staleDate)"#)
            #expect(try await fixture.devicePush(token: token, payload: update).status == 200)
            #expect(try await self.activity(fixture, deviceID)["isStale"] == .bool(false))
            fixture.emulator.advanceClock(by: 61)
            let activity = try await self.activity(fixture, deviceID)
            #expect(activity["isStale"] == .bool(true))
            #expect(activity["state"] == .string("active"))
        }
    }

    @Test func eightHourLimitEndsTheActivity() async throws {
        try await EmulatorFixture.with { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)
            fixture.emulator.advanceClock(by: 8 * 3600)
            #expect(try await fixture.devicePush(token: token, payload: Self.update(timestamp: Self.now + 1, home: 1)).status == 200)
            let activity = try await self.activity(fixture, deviceID)
            #expect(activity["state"] == .string("ended"))
            #expect(self.ignoredReasons(activity) == ["afterEnd"])
            fixture.emulator.advanceClock(by: 4 * 3600)
            #expect(try await self.activity(fixture, deviceID)["state"] == .string("dismissed"))
        }
    }

    @Test func pushToStartWithInputPushChannelSubscribesToBroadcasts() async throws {
        try await EmulatorFixture.with { fixture in
            let channel = try await fixture.createChannel(storagePolicy: 0)
            let modern = try await fixture.addDevice(osVersion: "18.1")
            let old = try await fixture.addDevice(osVersion: "17.5")
            let extra = #","input-push-channel":"\#(channel)""#
            for device in [modern, old] {
                let token = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
                #expect(try await fixture.devicePush(token: token, payload: Self.start(extra: extra)).status == 200)
            }
            let update = Self.update(timestamp: Self.now + 1, home: 2)
            #expect(try await fixture.broadcast(payload: update, headers: fixture.broadcastHeaders(channelID: channel)).status == 200)

            let modernActivity = try await self.activity(fixture, try #require(modern["id"]?.stringValue))
            #expect(modernActivity["channelId"] == .string(channel))
            #expect(modernActivity["updateToken"] == nil)
            #expect(modernActivity["contentState"]?["home"] == .int(2))

            let oldDevice = try await fixture.device(try #require(old["id"]?.stringValue))
            #expect(oldDevice["activities"] == .array([]))
            #expect(oldDevice["ignoredPushes"].flatMap(Self.first)?["reason"] == .string("channelRequiresIOS18"))
        }
    }

    @Test func startsThatBreakTheRulesStartNothing() async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice()
            let deviceID = try #require(device["id"]?.stringValue)
            let token = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let payloads = [
                Self.start(alert: false),
                Self.start(extra: #","input-push-channel":"dHN0LXNyY2gtY2hubA==""#),
                Self.start().replacingOccurrences(of: "GameAttributes", with: "DeliveryAttributes"),
                Self.update(timestamp: Self.now, home: 1),
                "not json",
            ]
            for payload in payloads {
                #expect(try await fixture.devicePush(token: token, payload: payload).status == 200)
            }
            let snapshot = try await fixture.device(deviceID)
            #expect(snapshot["activities"] == .array([]))
            guard case .array(let ignored) = snapshot["ignoredPushes"] else {
                Issue.record("no ignored pushes")
                return
            }
            #expect(
                ignored.compactMap { $0["reason"]?.stringValue } == [
                    "invalidStart", "unknownChannel", "attributesTypeMismatch", "notAStart", "malformedPayload",
                ]
            )
            #expect(ignored.first?["detail"] == .string("alert is required"))
        }
    }

    @Test func priority10PushesAreCountedAndTheBudgetIsEnforced() async throws {
        try await EmulatorFixture.with({ $0.priority10Budget = 2 }) { fixture in
            let (deviceID, token) = try await self.startedActivity(fixture)  // the start is priority 10: 1 spent
            #expect(try await fixture.devicePush(token: token, payload: Self.update(timestamp: Self.now + 1, home: 1)).status == 200)
            let lowPriority = fixture.deviceHeaders(priority: 5)
            #expect(
                try await fixture.devicePush(token: token, payload: Self.update(timestamp: Self.now + 2, home: 2), headers: lowPriority).status == 200
            )
            #expect(try await fixture.devicePush(token: token, payload: Self.update(timestamp: Self.now + 3, home: 3)).status == 200)
            let device = try await fixture.device(deviceID)
            #expect(device["priority10PushesLastHour"] == .int(2))
            let activity = try #require(device["activities"].flatMap(Self.first))
            #expect(activity["contentState"]?["home"] == .int(2))
            #expect(self.ignoredReasons(activity) == ["priorityBudgetExceeded"])
            fixture.emulator.advanceClock(by: 3601)
            #expect(try await fixture.device(deviceID)["priority10PushesLastHour"] == .int(0))
        }
    }

    @Test func rotatedTokensAnswerUnregistered() async throws {
        try await EmulatorFixture.with { fixture in
            let (deviceID, oldUpdateToken) = try await self.startedActivity(fixture)
            let activityID = try #require(try await self.activity(fixture, deviceID)["id"]?.stringValue)
            let (status, rotated) = try await fixture.control("POST", "devices/\(deviceID)/activities/\(activityID)/rotate-token")
            #expect(status == 200)
            let newUpdateToken = try #require(rotated["token"]?.stringValue)
            let refused = try await fixture.devicePush(token: oldUpdateToken, payload: Self.update(timestamp: Self.now + 1, home: 1))
            #expect(refused.status == 410)
            #expect(refused.reason == "Unregistered")
            #expect((refused.json?["timestamp"]?.intValue ?? 0) >= Self.now * 1000)
            #expect(try await fixture.devicePush(token: newUpdateToken, payload: Self.update(timestamp: Self.now + 2, home: 2)).status == 200)

            let oldPushToStart = try #require(try await fixture.device(deviceID)["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let newPushToStart = try #require(fixture.emulator.rotatePushToStartToken(deviceID: deviceID, attributesType: "GameAttributes"))
            #expect(newPushToStart != oldPushToStart)
            #expect(try await fixture.devicePush(token: oldPushToStart, payload: Self.start()).status == 410)
            #expect(try await fixture.devicePush(token: newPushToStart, payload: Self.start()).status == 200)
            #expect(fixture.emulator.device(id: deviceID)?.activities.count == 2)
        }
    }

    @Test func devicesCanBeAddedThroughTheSwiftAPIWithChosenTokens() async throws {
        try await EmulatorFixture.with { fixture in
            let token = String(repeating: "a1", count: 40)
            let device = try fixture.emulator.addDevice(
                bundleID: EmulatorFixture.bundleID,
                osVersion: "17.4",
                pushToStartTokens: ["GameAttributes": token]
            )
            #expect(device.pushToStartTokens == ["GameAttributes": token])
            #expect(throws: APNsEmulatorError.self) {
                try fixture.emulator.addDevice(bundleID: EmulatorFixture.bundleID, pushToStartTokens: ["GameAttributes": token])
            }
            #expect(try await fixture.devicePush(token: token, payload: Self.start()).status == 200)
            let (_, listed) = try await fixture.control("GET", "devices")
            guard case .array(let devices) = listed["devices"] else {
                Issue.record("no device list")
                return
            }
            #expect(devices.count == 1)
            #expect(devices.first?["osVersion"] == .string("17.4"))
            #expect(fixture.emulator.devices().first?.activities.first?.updateToken != nil)
        }
    }
}

/// Token shape checks for the tests.
enum DeviceFleetTokens {
    static func isHex(_ token: String) -> Bool {
        !token.isEmpty && token.allSatisfy(\.isHexDigit)
    }
}
