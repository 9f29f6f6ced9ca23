import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// `POST /3/device/{token}` through curl, with provider tokens made by the openssl recipe.
@Suite struct DevicePushTests {
    static let update = #"{"aps":{"timestamp":1709913600,"event":"update","content-state":{"homeScore":2}}}"#

    @Test func validPushIsAcceptedWithItsIDs() async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice()
            let token = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let apnsID = "0d1e2f3a-4b5c-4d6e-8f90-a1b2c3d4e5f6"
            let response = try await fixture.devicePush(
                token: token,
                payload: Self.update,
                headers: fixture.deviceHeaders() + [("apns-id", apnsID), ("apns-expiration", "0"), ("apns-collapse-id", "score")]
            )
            #expect(response.status == 200)
            #expect(response.headers["apns-id"] == apnsID)
            #expect(response.headers["apns-unique-id"].map { UUID(uuidString: $0) != nil } == true)
            #expect(response.body.isEmpty)
        }
    }

    /// Ids the emulator makes are written as APNs writes them: lowercase version-4 UUIDs, new for every push.
    @Test func madeIDsAreLowercaseVersion4UUIDs() async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice()
            let token = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let pushes = (0..<2).map { _ in fixture.devicePushRequest(token: token, payload: Self.update) }
            let responses = try await fixture.curl.send(pushes)
            let ids = responses.flatMap { [$0.headers["apns-id"] ?? "", $0.headers["apns-unique-id"] ?? ""] }
            let version4 = /[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}/
            #expect(responses.map(\.status) == [200, 200])
            #expect(ids.allSatisfy { $0.wholeMatch(of: version4) != nil }, "\(ids)")
            #expect(Set(ids).count == 4)
        }
    }

    @Test func productionAnswersCarryNoUniqueID() async throws {
        try await EmulatorFixture.with({
            $0.environment = "production"
            $0.acceptsUnknownTokens = true
        }) { fixture in
            let response = try await fixture.devicePush(token: "abcd", payload: Self.update)
            #expect(response.status == 200)
            #expect(response.headers["apns-id"] != nil)
            #expect(response.headers["apns-unique-id"] == nil)
        }
    }

    /// A header change, the path's token and the expected status and reason.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var token: String = "known"
        var change: @Sendable ([(String, String)]) -> [(String, String)] = { $0 }
        var payload: String = DevicePushTests.update
        var status: Int
        var reason: String
        var testDescription: String { self.name }
    }

    static func replacing(_ name: String, with value: String?) -> @Sendable ([(String, String)]) -> [(String, String)] {
        { headers in headers.filter { $0.0 != name } + (value.map { [(name, $0)] } ?? []) }
    }

    static let cases: [Case] = [
        Case(name: "MissingDeviceToken", token: "", status: 400, reason: "MissingDeviceToken"),
        Case(name: "BadDeviceToken (not hex)", token: "not-hex", status: 400, reason: "BadDeviceToken"),
        Case(name: "BadDeviceToken (unknown)", token: String(repeating: "ab", count: 32), status: 400, reason: "BadDeviceToken"),
        Case(
            name: "DeviceTokenNotForTopic",
            change: replacing("apns-topic", with: "com.other.app.push-type.liveactivity"),
            status: 400,
            reason: "DeviceTokenNotForTopic"
        ),
        Case(name: "MissingTopic", change: replacing("apns-topic", with: nil), status: 400, reason: "MissingTopic"),
        Case(name: "BadTopic", change: replacing("apns-topic", with: "com.example.game"), status: 400, reason: "BadTopic"),
        Case(name: "InvalidPushType", change: replacing("apns-push-type", with: "liveactivities"), status: 400, reason: "InvalidPushType"),
        Case(name: "BadPriority", change: replacing("apns-priority", with: "7"), status: 400, reason: "BadPriority"),
        Case(name: "BadExpirationDate", change: replacing("apns-expiration", with: "tomorrow"), status: 400, reason: "BadExpirationDate"),
        Case(
            name: "BadCollapseId",
            change: replacing("apns-collapse-id", with: String(repeating: "c", count: 65)),
            status: 400,
            reason: "BadCollapseId"
        ),
        Case(name: "BadMessageId", change: replacing("apns-id", with: "not-a-uuid"), status: 400, reason: "BadMessageId"),
        Case(name: "DuplicateHeaders", change: { $0 + [("apns-priority", "5")] }, status: 400, reason: "DuplicateHeaders"),
        Case(name: "MissingProviderToken", change: replacing("authorization", with: nil), status: 403, reason: "MissingProviderToken"),
        Case(
            name: "InvalidProviderToken (garbage)",
            change: replacing("authorization", with: "bearer abc.def.ghi"),
            status: 403,
            reason: "InvalidProviderToken"
        ),
        Case(name: "PayloadEmpty", payload: "", status: 400, reason: "PayloadEmpty"),
        Case(
            name: "PayloadTooLarge",
            payload: #"{"aps":{"timestamp":1,"event":"update","content-state":{"p":"\#(String(repeating: "x", count: 4100))"}}}"#,
            status: 413,
            reason: "PayloadTooLarge"
        ),
    ]

    @Test(arguments: cases)
    func documentedReason(_ testCase: Case) async throws {
        try await EmulatorFixture.with { fixture in
            let device = try await fixture.addDevice()
            let known = try #require(device["pushToStartTokens"]?["GameAttributes"]?.stringValue)
            let token = testCase.token == "known" ? known : testCase.token
            let response = try await fixture.devicePush(token: token, payload: testCase.payload, headers: testCase.change(fixture.deviceHeaders()))
            #expect(response.status == testCase.status)
            #expect(response.reason == testCase.reason)
            #expect(response.headers["content-type"] == "application/json")
            #expect(response.headers["apns-id"] != nil)
            // Nothing reached the device.
            let after = try await fixture.device(try #require(device["id"]?.stringValue))
            #expect(after["activities"] == .array([]))
            #expect(after["ignoredPushes"] == .array([]))
        }
    }

    @Test func badPathAndMethod() async throws {
        try await EmulatorFixture.with { fixture in
            let wrongPath = try await fixture.curl.send(
                .init("POST", "\(fixture.pushURL)/3/devices/abcd", headers: fixture.deviceHeaders(), body: Self.update)
            )
            #expect(wrongPath.status == 404)
            #expect(wrongPath.reason == "BadPath")
            let wrongMethod = try await fixture.curl.send(.init("GET", "\(fixture.pushURL)/3/device/abcd", headers: fixture.deviceHeaders()))
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.reason == "MethodNotAllowed")
        }
    }

    @Test func unregisteredTokenAnswers410WithTimestamp() async throws {
        let token = String(repeating: "0f", count: 32)
        try await EmulatorFixture.with({ $0.faults.unregisteredTokens = [token: 1_700_000_000_123] }) { fixture in
            let response = try await fixture.devicePush(token: token, payload: Self.update)
            #expect(response.status == 410)
            #expect(response.reason == "Unregistered")
            #expect(response.json?["timestamp"] == .int(1_700_000_000_123))
        }
    }
}
