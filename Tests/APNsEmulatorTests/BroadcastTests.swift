import APNsEmulator
import Foundation
import LivecastCore
import LivecastTesting
import Testing

/// `POST /4/broadcasts/apps/{bundleId}`: the checks of APNS-REFERENCE §7 in order.
@Suite struct BroadcastTests {
    static let update = #"{"aps":{"timestamp":1709913600,"event":"update","content-state":{"homeScore":2}}}"#

    @Test func validBroadcastIsAccepted() async throws {
        try await EmulatorFixture.with { fixture in
            let channel = try await fixture.createChannel(storagePolicy: 0)
            let requestID = "11111111-2222-4333-8444-555555555555"
            var headers = fixture.broadcastHeaders(channelID: channel)
            headers.append(("apns-request-id", requestID))
            let response = try await fixture.broadcast(payload: Self.update, headers: headers)
            #expect(response.status == 200)
            #expect(response.headers["apns-request-id"] == requestID)
            #expect(UUID(uuidString: response.headers["apns-unique-id"] ?? "") != nil)
            #expect(response.body.isEmpty)
            // The push type is matched without regard to case (Apple spells it three ways).
            let capitalised = Self.replacing("apns-push-type", with: "LiveActivity")(fixture.broadcastHeaders(channelID: channel))
            #expect(try await fixture.broadcast(payload: Self.update, headers: capitalised).status == 200)
        }
    }

    @Test func mostRecentMessageChannelsTakeAnExpirationAndStoreTheMessage() async throws {
        try await EmulatorFixture.with { fixture in
            let channel = try await fixture.createChannel(storagePolicy: 1)
            let expiration = Int(Date().timeIntervalSince1970) + 600
            let response = try await fixture.broadcast(
                payload: Self.update,
                headers: fixture.broadcastHeaders(channelID: channel, expiration: expiration)
            )
            #expect(response.status == 200)
            let channels = try await fixture.control("GET", "channels").json
            guard case .array(let list) = channels["channels"], let stored = list.first?["storedMessage"] else {
                Issue.record("no stored message in \(channels)")
                return
            }
            #expect(stored["expiresAt"] == .int(expiration))
            #expect(stored["payload"] == .string(Self.update))
        }
    }

    static func replacing(_ name: String, with value: String?) -> @Sendable ([(String, String)]) -> [(String, String)] {
        { headers in headers.filter { $0.0 != name } + (value.map { [(name, $0)] } ?? []) }
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var bundleID = EmulatorFixture.bundleID
        var change: @Sendable ([(String, String)]) -> [(String, String)] = { $0 }
        var payload = BroadcastTests.update
        var channel = Channel.noStorage
        var status = 400
        var reason: String
        var testDescription: String { self.name }

        enum Channel: Sendable { case noStorage, deleted, unknown }
    }

    static let cases: [Case] = [
        Case(name: "TopicDisallowed", bundleID: EmulatorFixture.topic, reason: "TopicDisallowed"),
        Case(name: "FeatureNotEnabled", bundleID: "com.example.nobroadcast", reason: "FeatureNotEnabled"),
        Case(name: "MissingChannelId", change: replacing("apns-channel-id", with: nil), reason: "MissingChannelId"),
        Case(name: "BadChannelId", change: replacing("apns-channel-id", with: "%%%"), reason: "BadChannelId"),
        Case(name: "MissingPushType", change: replacing("apns-push-type", with: nil), reason: "MissingPushType"),
        Case(name: "InvalidPushType", change: replacing("apns-push-type", with: "alert"), reason: "InvalidPushType"),
        Case(name: "BadExpirationDate (missing)", change: replacing("apns-expiration", with: nil), reason: "BadExpirationDate"),
        Case(name: "BadExpirationDate (not a number)", change: replacing("apns-expiration", with: "soon"), reason: "BadExpirationDate"),
        Case(
            name: "BadExpirationDate (nonzero on No Storage)",
            change: replacing("apns-expiration", with: "1900000000"),
            reason: "BadExpirationDate"
        ),
        Case(name: "BadPriority (missing)", change: replacing("apns-priority", with: nil), reason: "BadPriority"),
        Case(name: "BadPriority (7)", change: replacing("apns-priority", with: "7"), reason: "BadPriority"),
        Case(name: "ChannelNotRegistered (unknown)", channel: .unknown, reason: "ChannelNotRegistered"),
        Case(name: "ChannelNotRegistered (deleted)", channel: .deleted, reason: "ChannelNotRegistered"),
        Case(name: "PayloadEmpty", payload: "", reason: "PayloadEmpty"),
        Case(
            name: "PayloadTooLarge",
            payload: #"{"aps":{"timestamp":1,"event":"update","content-state":{"p":"\#(String(repeating: "x", count: 5120))"}}}"#,
            status: 413,
            reason: "PayloadTooLarge"
        ),
        Case(name: "MissingProviderToken", change: replacing("authorization", with: nil), status: 403, reason: "MissingProviderToken"),
    ]

    @Test(arguments: cases)
    func documentedReason(_ testCase: Case) async throws {
        try await EmulatorFixture.with({ $0.broadcastDisabledBundleIDs = ["com.example.nobroadcast"] }) { fixture in
            var channel = try await fixture.createChannel(storagePolicy: 0)
            switch testCase.channel {
            case .noStorage:
                break
            case .unknown:
                channel = "dHN0LXNyY2gtY2hubA=="
            case .deleted:
                let deleted = try await fixture.curl.send(
                    .init(
                        "DELETE",
                        "\(fixture.managementURL)/1/apps/\(EmulatorFixture.bundleID)/channels",
                        headers: [("authorization", "bearer \(fixture.token)"), ("apns-channel-id", channel)]
                    )
                )
                #expect(deleted.status == 204)
            }
            let response = try await fixture.broadcast(
                payload: testCase.payload,
                headers: testCase.change(fixture.broadcastHeaders(channelID: channel)),
                bundleID: testCase.bundleID
            )
            #expect(response.status == testCase.status)
            #expect(response.reason == testCase.reason)
            #expect(response.headers["apns-request-id"] != nil)
        }
    }
}
