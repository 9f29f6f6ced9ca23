import Crypto
import Foundation
import LivecastKit
import LivecastTesting
import PostgresNIO
import Testing

/// LivecastKit against a real Livecast where the server's answers decide: a report held at the device's cap goes once
/// an activity ends, one that can never succeed is dropped saying why, and the user binding survives a relaunch
/// before `identify` (Livecast replaces a push-to-start token's user with the registration's, none included).
@Suite struct KitAnswersIntegrationTests {
    @Test func anActivityPastTheDevicesCapIsHeldUntilOneEnds() async throws {
        try await KitServer.with("kit_cap", activitiesPerDevice: 2) { server in
            let directory = try TemporaryDirectory()
            let client = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(client)
            for index in 1...3 {
                // One after the other: the cap is the server's to keep under parallel registrations, not this test's.
                await client.register(
                    activity: LivecastActivity(id: "C\(index)", attributesType: "GameAttributes"),
                    updateToken: Data([0x30, UInt8(index)])
                )
                if index < 3 { try await LivecastKitIntegrationTests.idle(client) }
            }
            try await LivecastKitIntegrationTests.eventually { !events.events(.held).isEmpty }
            let held = try #require(events.events(.held).first)
            #expect(held.report?.activityID == "C3" && held.status == 409 && held.errorCode == "device_limit_reached", "\(held)")

            await client.activityEnded("C1")
            try await LivecastKitIntegrationTests.idle(client)
            #expect(try await LivecastKitIntegrationTests.liveToken(of: "C3", server) == "3003", "registered once there was room")
            #expect(try await server.value("SELECT state FROM activities WHERE activity_key = 'C1'", as: String.self) == "ended")
            #expect(events.events(.dropped).isEmpty, "\(events.events)")
            await client.shutdown()
        }
    }

    @Test func anActivityLivecastHasEndedIsDroppedSayingSo() async throws {
        try await KitServer.with("kit_ended") { server in
            let directory = try TemporaryDirectory()
            let client = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(client)
            let activity = LivecastActivity(id: "E1", attributesType: "GameAttributes")
            await client.register(activity: activity, updateToken: Data([0x40, 0x01]))
            try await LivecastKitIntegrationTests.idle(client)
            let ended = try await server.call("DELETE", "/activities/E1", key: server.backendKey)
            #expect(ended.status == 204, "\(ended)")

            await client.register(activity: activity, updateToken: Data([0x40, 0x02]))
            try await LivecastKitIntegrationTests.idle(client)
            try await LivecastKitIntegrationTests.eventually { !events.events(.dropped).isEmpty }
            let dropped = try #require(events.events(.dropped).first)
            #expect(dropped.dropReason == .activityEnded && dropped.status == 409, "\(dropped)")
            #expect(events.events(.retrying).isEmpty)
            await client.shutdown()
        }
    }

    @Test func theUsersBindingSurvivesARelaunchBeforeIdentify() async throws {
        try await KitServer.with("kit_relaunch_user") { server in
            let signer = AssertionSigner()
            let pem = signer.key.publicKey.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
            let added = try await server.call("PUT", "/identity-keys/backend-1", key: server.adminKey, body: #"{"publicKey": "\#(pem)"}"#)
            #expect(added.status == 201, "\(added)")
            let directory = try TemporaryDirectory()

            let first = try server.client(storeDirectory: directory.url)
            let deviceID = try #require(first.deviceID)
            await first.identify(userID: "bob") { try signer.sign(user: "bob", deviceID: deviceID) }
            await first.register(pushToStartToken: Data([0x50, 0x01]), for: "GameAttributes")
            await first.register(activity: LivecastActivity(id: "U1", attributesType: "GameAttributes"), updateToken: Data([0x51]))
            try await LivecastKitIntegrationTests.idle(first)
            await first.shutdown()
            let liveUser = {
                try await server.value(
                    "SELECT token || ' ' || coalesce(user_id, '-') FROM push_to_start_tokens WHERE invalidated_at IS NULL",
                    as: String.self
                )
            }
            #expect(try await liveUser() == "5001 bob")

            // Relaunched: ActivityKit tells the same token, the token rotates, a push starts an activity; all before
            // the app calls identify.
            let relaunched = try server.client(storeDirectory: directory.url)
            let events = EventRecorder(relaunched)
            await relaunched.register(pushToStartToken: Data([0x50, 0x01]), for: "GameAttributes")
            await relaunched.register(pushToStartToken: Data([0x50, 0x02]), for: "GameAttributes")
            await relaunched.register(activity: LivecastActivity(id: "U2", attributesType: "GameAttributes"), updateToken: Data([0x52]))
            try await LivecastKitIntegrationTests.eventually { events.events(.delivered).contains { $0.report?.activityID == "U2" } }
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await liveUser() == "5001 bob", "the rotated token waits for identify: nothing unbound bob")
            #expect(try await server.value("SELECT user_id FROM activities WHERE activity_key = 'U1'", as: String.self) == "bob")

            await relaunched.identify(userID: "bob") { try signer.sign(user: "bob", deviceID: deviceID) }
            try await LivecastKitIntegrationTests.idle(relaunched)
            #expect(try await liveUser() == "5002 bob")
            #expect(try await server.value("SELECT user_id FROM activities WHERE activity_key = 'U2'", as: String.self) == "bob")
            await relaunched.shutdown()
        }
    }
}

/// What an app's backend does to bind a user: signs a short-lived ES256 JWT with its identity key.
private struct AssertionSigner: Sendable {
    let key = P256.Signing.PrivateKey()

    func sign(user: String, deviceID: String) throws -> String {
        let claims: [String: Any] = ["sub": user, "aud": "com.example.game", "exp": Int(Date().timeIntervalSince1970) + 300, "deviceId": deviceID]
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "typ": "JWT", "kid": "backend-1"], options: [.sortedKeys])
        let body = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let input = "\(Self.base64URL(header)).\(Self.base64URL(body))"
        return "\(input).\(Self.base64URL(try self.key.signature(for: Data(input.utf8)).rawRepresentation))"
    }

    private static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
