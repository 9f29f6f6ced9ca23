import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// What the emulator offers to test silent failures: an activity a device lost while APNs keeps answering 200, a
/// start repeated under one `apns-collapse-id`, and a key for the other environment.
@Suite struct SilentFailureTests {
    @Test func aLostActivityStillAnswers200AndIgnoresWhatItGets() async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice(osVersion: "17.5")
            let deviceID = try #require(device["id"]?.stringValue)
            let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            #expect(try await fixture.devicePush(token: pushToStart, payload: DeviceModelTests.start()).status == 200)
            let started = try #require((try await fixture.device(deviceID)["activities"]).items.first)
            let activityID = try #require(started["id"]?.stringValue)
            let token = try #require(started["updateToken"]?.stringValue)

            let (status, shown) = try await fixture.control("POST", "devices/\(deviceID)/activities/\(activityID)/lose")
            #expect(status == 200)
            #expect(shown["activities"].items.first?["state"]?.stringValue == "lost")
            let update = try await fixture.devicePush(token: token, payload: DeviceModelTests.update(timestamp: DeviceModelTests.now + 5, home: 3))
            #expect(update.status == 200, "APNs does not know the activity is gone")
            let activity = try #require((try await fixture.device(deviceID)["activities"]).items.first)
            #expect(activity["contentState"] == .object(["home": .int(0), "away": .int(0)]))
            #expect(activity["ignoredPushes"].items.compactMap { $0["reason"]?.stringValue } == ["activityLost"])
            #expect(try await fixture.control("POST", "devices/\(deviceID)/activities/nothing/lose").status == 404)
        }
    }

    @Test func aStartRepeatedUnderOneCollapseIDStartsOneActivity() async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice()
            let deviceID = try #require(device["id"]?.stringValue)
            let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            for collapseID in ["livecast-start-7", "livecast-start-7", "livecast-start-8"] {
                let headers = fixture.deviceHeaders() + [("apns-collapse-id", collapseID)]
                #expect(try await fixture.devicePush(token: pushToStart, payload: DeviceModelTests.start(), headers: headers).status == 200)
            }
            let shown = try await fixture.device(deviceID)
            #expect(shown["activities"].items.count == 2)
            let ignored = shown["ignoredPushes"].items
            #expect(ignored.compactMap { $0["reason"]?.stringValue } == ["duplicateStart"])
            #expect(ignored.first?["detail"]?.stringValue == "livecast-start-7")
        }
    }

    @Test func aKeyForTheOtherEnvironmentIsRefusedWithBadEnvironmentKeyIdInToken() async throws {
        try await EmulatorFixture.with({ $0.trustedKeys[0].environment = "production" }) { fixture in
            let device = try await fixture.addDevice()
            let pushToStart = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let response = try await fixture.devicePush(token: pushToStart, payload: DeviceModelTests.start())
            #expect(response.status == 403)
            #expect(response.reason == "BadEnvironmentKeyIdInToken")
        }
    }
}
